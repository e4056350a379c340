/**
 * Frozen migration: production mode (CONTRACT §11). Operation records get the bookkeeping of the
 * reconciler (attempts, next attempt, last change as epoch ms) and an index for its scans; the
 * reference core remembers every outcome per operation reference, refusals included, so that a
 * repeat of a reference answers the original result (at most once). Never edit a landed migration.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('operations').addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('operations').addColumn('next_attempt_epoch_ms', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('operations').addColumn('updated_epoch_ms', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
  /** 1 when the client was answered 202: the operation is owed an execution, whatever happens. */
  await db.schema.alterTable('operations').addColumn('accepted', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await sql`update operations set accepted = 1 where request is not null and status = 'Pending'`.execute(db);
  await sql`update operations set updated_epoch_ms = created_epoch_ms`.execute(db);
  await db.schema.createIndex('operations_reconcile').on('operations').columns(['status', 'next_attempt_epoch_ms']).execute();

  await db.schema
    .createTable('core_operations')
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
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('core_operations').execute();
  await db.schema.dropIndex('operations_reconcile').execute();
  for (const column of ['accepted', 'updated_epoch_ms', 'next_attempt_epoch_ms', 'attempts']) await db.schema.alterTable('operations').dropColumn(column).execute();
}
