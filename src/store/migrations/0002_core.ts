/**
 * Frozen migration: the reference core banking system (customers, accounts, a double-entry
 * ledger, term deposit products and contracts), the business API's operation records (correlation
 * ids, async results) and the hash-chained audit trail. Never edit a landed migration.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('customers')
    .addColumn('customer_reference', 'varchar(128)', (c) => c.primaryKey())
    .addColumn('name', 'varchar(256)')
    .addColumn('status', 'varchar(16)', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('accounts')
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
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('reference', 'varchar(64)', (c) => c.notNull())
    .addColumn('kind', 'varchar(32)', (c) => c.notNull())
    .addColumn('description', 'varchar(512)')
    .addColumn('business_date', 'varchar(10)', (c) => c.notNull())
    .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('movements_reference').on('movements').column('reference').execute();

  await db.schema
    .createTable('postings')
    .addColumn('movement_id', 'varchar(36)', (c) => c.notNull().references('movements.id'))
    .addColumn('line', 'integer', (c) => c.notNull())
    .addColumn('account_number', 'varchar(128)', (c) => c.notNull().references('accounts.account_number'))
    /** Signed minor units: a credit is positive, a debit negative; a movement's lines sum to zero. */
    .addColumn('amount_minor', 'bigint', (c) => c.notNull())
    .addColumn('currency', 'varchar(3)', (c) => c.notNull())
    .addPrimaryKeyConstraint('postings_pk', ['movement_id', 'line'])
    .execute();
  await db.schema.createIndex('postings_account').on('postings').column('account_number').execute();

  await db.schema
    .createTable('term_deposit_products')
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
    .createTable('operations')
    .addColumn('reference', 'varchar(64)', (c) => c.primaryKey())
    /** `{realm}/{client_id}`: correlation ids form one namespace per client. */
    .addColumn('client_key', 'varchar(1024)', (c) => c.notNull())
    .addColumn('correlation_id', 'varchar(128)', (c) => c.notNull())
    .addColumn('correlation_supplied', 'integer', (c) => c.notNull())
    .addColumn('operation', 'varchar(64)', (c) => c.notNull())
    .addColumn('scope', 'varchar(64)', (c) => c.notNull())
    .addColumn('path', 'varchar(512)', (c) => c.notNull())
    /** SHA-256 of path and RFC 8785 canonical body: the duplicate check without a correlation id. */
    .addColumn('request_hash', 'varchar(64)', (c) => c.notNull())
    /** The request as the core needs it, kept while the operation is pending. */
    .addColumn('request', 'text')
    /** Pending | Executed | Rejected | Unknown */
    .addColumn('status', 'varchar(16)', (c) => c.notNull())
    .addColumn('http_status', 'integer')
    .addColumn('result', 'text')
    .addColumn('error', 'text')
    .addColumn('actor', 'text', (c) => c.notNull())
    .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('created_epoch_ms', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'varchar(32)', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('operations_correlation').unique().on('operations').columns(['client_key', 'correlation_id']).execute();
  await db.schema.createIndex('operations_request_hash').on('operations').columns(['client_key', 'request_hash', 'created_epoch_ms']).execute();
  await db.schema.createIndex('operations_status').on('operations').columns(['status', 'created_epoch_ms']).execute();

  await db.schema
    .createTable('audit_records')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('recorded_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('client_id', 'varchar(1024)', (c) => c.notNull())
    .addColumn('backbone_user', 'varchar(128)')
    .addColumn('workstation', 'varchar(128)')
    .addColumn('operation', 'varchar(64)', (c) => c.notNull())
    .addColumn('correlation_id', 'varchar(128)')
    .addColumn('reference', 'varchar(64)')
    .addColumn('http_status', 'integer', (c) => c.notNull())
    .addColumn('outcome', 'varchar(32)', (c) => c.notNull())
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    /** JSON: references, error code; never a secret or a token. */
    .addColumn('details', 'text', (c) => c.notNull())
    /** Position in the hash chain, assigned just after commit; null until then. */
    .addColumn('chain_seq', 'bigint', (c) => c.unique())
    .addColumn('prev_hash', 'varchar(64)')
    .addColumn('hash', 'varchar(64)')
    .execute();
  await db.schema.createIndex('audit_records_unchained').on('audit_records').columns(['chain_seq', 'recorded_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['audit_records', 'operations', 'term_deposits', 'term_deposit_products', 'postings', 'movements', 'accounts', 'customers']) {
    await db.schema.dropTable(table).execute();
  }
}
