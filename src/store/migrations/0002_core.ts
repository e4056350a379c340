/**
 * Frozen migration: the reference core banking system (customers, accounts, a double-entry
 * ledger, term deposit products and contracts), the business API's operation records (correlation
 * ids, async results) and the hash-chained audit trail. Never edit a landed migration.
 *
 * Issue 25: the reference core owns its tables and creates them with its own migrations
 * (src/reference-core/storage/migrations). The core's tables this migration made when the API
 * and the core shared one schema are made there now (`if not exists`: a database this migration
 * prepared before keeps them as they are); what is left here is the API's. The name stays.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {


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
  for (const table of ['audit_records', 'operations']) {
    await db.schema.dropTable(table).execute();
  }
}
