/**
 * The reference core's first migration of its own (issue 25: the core owns its storage). Until
 * then the core's tables were created by the API's migrations 0001–0006, in the one database both
 * shared; those now create the API's tables only, and this creates the core's: the directory,
 * customers, accounts, the ledger, term deposits and their products, loan facilities, the
 * operation outcomes, business days and the core's outbox, and `core_settings` (the business date
 * and the calendar, which lived in the API's `settings`).
 *
 * A database that the earlier migrations had prepared already holds these tables: every
 * statement is `if not exists`, a table made before 0006 gains 0006's installment status, and the
 * core's settings move out of `settings`. So an old database and a new one end with one schema
 * (test/store/core-migrations.test.ts). Never edit a landed migration; add a new one.
 */
import { sql, type Kysely } from 'kysely';

/** The core's settings that the API's `settings` held before this migration. */
const movedSettings = ['core.business_date', 'core.calendar'];

function isPostgres(db: Kysely<unknown>): boolean {
  return db.getExecutor().adapter.constructor.name.startsWith('Postgres');
}

/**
 * The columns of `table` in this database's own schema (the search path's first on PostgreSQL),
 * or undefined when it has no such table. Kysely's introspection lists every schema's tables.
 */
async function columnsOf(db: Kysely<unknown>, table: string): Promise<Set<string> | undefined> {
  const { rows } = isPostgres(db)
    ? await sql<{ name: string }>`select column_name as name from information_schema.columns where table_schema = current_schema() and table_name = ${table}`.execute(db)
    : await sql<{ name: string }>`select name from pragma_table_info(${table})`.execute(db);
  return rows.length === 0 ? undefined : new Set(rows.map((row) => row.name));
}

export async function up(db: Kysely<unknown>): Promise<void> {
  const installmentColumns = await columnsOf(db, 'loan_installments');
  const apiSettings = (await columnsOf(db, 'settings')) !== undefined;

  await db.schema
    .createTable('directory_users')
    .ifNotExists()
    .addColumn('login', 'varchar(128)', (c) => c.primaryKey())
    .addColumn('status', 'varchar(16)', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('workstations')
    .ifNotExists()
    .addColumn('id', 'varchar(128)', (c) => c.primaryKey())
    .addColumn('status', 'varchar(16)', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('customers')
    .ifNotExists()
    .addColumn('customer_reference', 'varchar(128)', (c) => c.primaryKey())
    .addColumn('name', 'varchar(256)')
    .addColumn('status', 'varchar(16)', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('accounts')
    .ifNotExists()
    .addColumn('account_number', 'varchar(128)', (c) => c.primaryKey())
    .addColumn('customer_reference', 'varchar(128)', (c) => c.references('customers.customer_reference'))
    .addColumn('currency', 'varchar(3)', (c) => c.notNull())
    .addColumn('status', 'varchar(16)', (c) => c.notNull())
    /** customer | term_deposit | loan | internal */
    .addColumn('kind', 'varchar(16)', (c) => c.notNull())
    .addColumn('balance_minor', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('movements')
    .ifNotExists()
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('reference', 'varchar(64)', (c) => c.notNull())
    .addColumn('kind', 'varchar(32)', (c) => c.notNull())
    .addColumn('description', 'varchar(512)')
    .addColumn('business_date', 'varchar(10)', (c) => c.notNull())
    .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('postings')
    .ifNotExists()
    .addColumn('movement_id', 'varchar(36)', (c) => c.notNull().references('movements.id'))
    .addColumn('line', 'integer', (c) => c.notNull())
    .addColumn('account_number', 'varchar(128)', (c) => c.notNull().references('accounts.account_number'))
    /** Signed minor units: a credit is positive, a debit negative; a movement's lines sum to zero. */
    .addColumn('amount_minor', 'bigint', (c) => c.notNull())
    .addColumn('currency', 'varchar(3)', (c) => c.notNull())
    .addPrimaryKeyConstraint('postings_pk', ['movement_id', 'line'])
    .execute();

  await db.schema
    .createTable('term_deposit_products')
    .ifNotExists()
    .addColumn('product_code', 'varchar(128)', (c) => c.notNull())
    .addColumn('component_code', 'varchar(128)', (c) => c.notNull())
    .addColumn('active', 'integer', (c) => c.notNull())
    .addColumn('currencies', 'text', (c) => c.notNull())
    /** Limits as decimal strings in the deposit's currency. */
    .addColumn('min_amount', 'varchar(32)', (c) => c.notNull())
    .addColumn('max_amount', 'varchar(32)', (c) => c.notNull())
    .addColumn('min_days', 'integer', (c) => c.notNull())
    .addColumn('max_days', 'integer', (c) => c.notNull())
    .addColumn('day_count', 'varchar(8)', (c) => c.notNull())
    .addPrimaryKeyConstraint('term_deposit_products_pk', ['product_code', 'component_code'])
    .execute();

  await db.schema
    .createTable('term_deposits')
    .ifNotExists()
    .addColumn('contract_number', 'varchar(32)', (c) => c.primaryKey().references('accounts.account_number'))
    .addColumn('customer_reference', 'varchar(128)', (c) => c.notNull())
    .addColumn('product_code', 'varchar(128)', (c) => c.notNull())
    .addColumn('component_code', 'varchar(128)', (c) => c.notNull())
    .addColumn('principal_minor', 'bigint', (c) => c.notNull())
    .addColumn('currency', 'varchar(3)', (c) => c.notNull())
    /** The annual rate in percent, as the decimal the client sent. */
    .addColumn('rate_percent', 'varchar(32)', (c) => c.notNull())
    .addColumn('day_count', 'varchar(8)', (c) => c.notNull())
    .addColumn('value_date', 'varchar(10)', (c) => c.notNull())
    .addColumn('maturity_date', 'varchar(10)', (c) => c.notNull())
    .addColumn('number_of_days', 'integer', (c) => c.notNull())
    .addColumn('source_account', 'varchar(128)', (c) => c.notNull())
    .addColumn('interest_account', 'varchar(128)', (c) => c.notNull())
    .addColumn('description', 'varchar(512)')
    .addColumn('operation_reference', 'varchar(64)', (c) => c.notNull().unique())
    .addColumn('status', 'varchar(16)', (c) => c.notNull())
    .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('loan_facilities')
    .ifNotExists()
    /** The credit account number: also the facility's account in `accounts` (kind loan). */
    .addColumn('loan_id', 'varchar(128)', (c) => c.primaryKey().references('accounts.account_number'))
    .addColumn('customer_reference', 'varchar(128)', (c) => c.notNull().references('customers.customer_reference'))
    .addColumn('loan_type', 'varchar(64)', (c) => c.notNull())
    .addColumn('parameter_type', 'varchar(64)', (c) => c.notNull())
    .addColumn('currency', 'varchar(3)', (c) => c.notNull())
    .addColumn('approved_limit_minor', 'bigint', (c) => c.notNull())
    /** Sum of every execution's amount: never above the approved limit (guarded update). */
    .addColumn('executed_total_minor', 'bigint', (c) => c.notNull())
    .addColumn('status', 'varchar(16)', (c) => c.notNull())
    .addColumn('final_maturity_date', 'varchar(10)', (c) => c.notNull())
    .addColumn('fixed_fee_minor', 'bigint', (c) => c.notNull())
    /** Rates as the decimals of the data file, e.g. "0.0015" and "0.16". */
    .addColumn('commission_rate', 'varchar(32)', (c) => c.notNull())
    .addColumn('minimum_commission_minor', 'bigint', (c) => c.notNull())
    .addColumn('tax_rate', 'varchar(32)', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('loan_installments')
    .ifNotExists()
    .addColumn('loan_id', 'varchar(128)', (c) => c.notNull().references('loan_facilities.loan_id'))
    .addColumn('sequence', 'integer', (c) => c.notNull())
    .addColumn('due_date', 'varchar(10)', (c) => c.notNull())
    .addColumn('amount_minor', 'bigint', (c) => c.notNull())
    /** Never above amount_minor (guarded update). */
    .addColumn('paid_minor', 'bigint', (c) => c.notNull())
    /** Pending, Overdue (set at end of day) or Paid. */
    .addColumn('status', 'varchar(16)', (c) => c.notNull().defaultTo('Pending'))
    .addPrimaryKeyConstraint('loan_installments_pk', ['loan_id', 'sequence'])
    .execute();

  await db.schema
    .createTable('loan_executions')
    .ifNotExists()
    .addColumn('operation_id', 'varchar(32)', (c) => c.primaryKey())
    .addColumn('execution_reference', 'varchar(64)', (c) => c.notNull().unique())
    .addColumn('loan_id', 'varchar(128)', (c) => c.notNull().references('loan_facilities.loan_id'))
    .addColumn('sequence', 'integer', (c) => c.notNull())
    .addColumn('amount_minor', 'bigint', (c) => c.notNull())
    .addColumn('commission_minor', 'bigint', (c) => c.notNull())
    .addColumn('fee_minor', 'bigint', (c) => c.notNull())
    .addColumn('tax_minor', 'bigint', (c) => c.notNull())
    .addColumn('payment_account', 'varchar(128)', (c) => c.notNull())
    .addColumn('expense_account', 'varchar(128)', (c) => c.notNull())
    /** Executed | PartiallyExecuted: the facility's status right after this execution. */
    .addColumn('facility_status', 'varchar(32)', (c) => c.notNull())
    .addColumn('executed_at', 'varchar(32)', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('core_operations')
    .ifNotExists()
    /** The operation reference the API assigned: the core's idempotency key. */
    .addColumn('reference', 'varchar(64)', (c) => c.primaryKey())
    /** constituteTermDeposit | executeLoanInstallment */
    .addColumn('kind', 'varchar(64)', (c) => c.notNull())
    /** Executed | Rejected */
    .addColumn('status', 'varchar(16)', (c) => c.notNull())
    /** For Rejected: the catalogue name of the refused rule and its message. */
    .addColumn('refusal_name', 'varchar(64)')
    .addColumn('refusal_message', 'text')
    .addColumn('recorded_at', 'varchar(32)', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('core_business_days')
    .ifNotExists()
    .addColumn('business_date', 'varchar(10)', (c) => c.primaryKey())
    .addColumn('closed_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('matured_deposits', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('overdue_installments', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();

  await db.schema
    .createTable('core_events')
    .ifNotExists()
    .addColumn('sequence', isPostgres(db) ? sql`bigserial` : 'integer', (c) => (isPostgres(db) ? c.primaryKey() : c.primaryKey().autoIncrement()))
    .addColumn('id', 'varchar(36)', (c) => c.notNull().unique())
    .addColumn('type', 'varchar(64)', (c) => c.notNull())
    .addColumn('business_date', 'varchar(10)', (c) => c.notNull())
    .addColumn('operation_reference', 'varchar(64)')
    .addColumn('data', 'text', (c) => c.notNull())
    .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
    .execute();

  await db.schema.createIndex('movements_reference').ifNotExists().on('movements').column('reference').execute();
  await db.schema.createIndex('postings_account').ifNotExists().on('postings').column('account_number').execute();
  // A table made by the API's 0003 on a database the API's 0006 never reached: 0006's column.
  if (installmentColumns !== undefined && !installmentColumns.has('status')) {
    await db.schema.alterTable('loan_installments').addColumn('status', 'varchar(16)', (c) => c.notNull().defaultTo('Pending')).execute();
    await sql`update loan_installments set status = 'Paid' where paid_minor >= amount_minor`.execute(db);
  }
  await db.schema.createIndex('loan_installments_due').ifNotExists().on('loan_installments').columns(['status', 'due_date']).execute();
  await db.schema.createIndex('term_deposits_maturing').ifNotExists().on('term_deposits').columns(['status', 'maturity_date']).execute();

  await db.schema
    .createTable('core_settings')
    .ifNotExists()
    .addColumn('name', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .execute();
  if (apiSettings) {
    const moved = sql.join(movedSettings.map((name) => sql.lit(name)));
    await sql`insert into core_settings (name, value) select name, value from settings where name in (${moved}) and name not in (select name from core_settings)`.execute(db);
    await sql`delete from settings where name in (${moved})`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['core_settings', 'core_events', 'core_business_days', 'core_operations', 'loan_executions', 'loan_installments', 'loan_facilities', 'term_deposits', 'term_deposit_products', 'postings', 'movements', 'accounts', 'customers', 'workstations', 'directory_users']) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}
