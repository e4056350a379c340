/**
 * Frozen migration: production mode (docs/deployment.md, "The reconciler"). Operation records get
 * the bookkeeping of the reconciler (attempts, next attempt, last change as epoch ms) and an index
 * for its scans; the reference core remembers every outcome per operation reference, refusals
 * included, so that a repeat of a reference answers the original result (at most once). Never edit
 * a landed migration.
 *
 * Issue 25: the reference core owns its tables and creates them with its own migrations
 * (src/reference-core/storage/migrations). The core's tables this migration made when the API
 * and the core shared one schema are made there now (`if not exists`: a database this migration
 * prepared before keeps them as they are); what is left here is the API's. The name stays.
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
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('operations_reconcile').execute();
  for (const column of ['accepted', 'updated_epoch_ms', 'next_attempt_epoch_ms', 'attempts']) await db.schema.alterTable('operations').dropColumn(column).execute();
}
