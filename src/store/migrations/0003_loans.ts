/**
 * Frozen migration: merchandising loan facilities, their repayment schedules and executions.
 * Never edit a landed migration; add a new one.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('loan_facilities')
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
    .addColumn('loan_id', 'varchar(128)', (c) => c.notNull().references('loan_facilities.loan_id'))
    .addColumn('sequence', 'integer', (c) => c.notNull())
    .addColumn('due_date', 'varchar(10)', (c) => c.notNull())
    .addColumn('amount_minor', 'bigint', (c) => c.notNull())
    /** Never above amount_minor (guarded update). */
    .addColumn('paid_minor', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('loan_installments_pk', ['loan_id', 'sequence'])
    .execute();

  await db.schema
    .createTable('loan_executions')
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
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['loan_executions', 'loan_installments', 'loan_facilities']) await db.schema.dropTable(table).execute();
}
