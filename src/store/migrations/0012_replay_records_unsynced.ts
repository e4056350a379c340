/**
 * Frozen migration: replay records at the cost of a write that is not synced (issue 42,
 * docs/auth.md "The replay record").
 * - PostgreSQL: `replay_records` becomes UNLOGGED (no WAL, no flush at commit, nothing sent to a
 *   standby). PostgreSQL empties an unlogged table after a crash and on a standby's promotion.
 * - replay_horizon: one row (id 1), the moment from which the replay record holds every use
 *   (`since_epoch_ms`): a client assertion or DPoP proof that could have been accepted before it is
 *   refused, since its use may be one the record lost. On PostgreSQL the table is UNLOGGED too, so
 *   that it is emptied with the records: the first use after that starts a new horizon at its own
 *   time. Made here with its row at 0: every use so far was recorded durably (or there was none).
 *   On SQLite the table is an ordinary one; `boot_id` names the machine's boot (Linux's
 *   /proc/sys/kernel/random/boot_id) whose processes write the records without a sync: a crash of
 *   a process loses none of them, a crash of the machine may lose the last ones, and the first
 *   process of another boot moves the horizon to its own start.
 * Never edit a landed migration.
 */
import { PostgresAdapter, sql, type Kysely } from 'kysely';

function onPostgres(db: Kysely<unknown>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

export async function up(db: Kysely<unknown>): Promise<void> {
  const postgres = onPostgres(db);
  if (postgres) await sql`alter table replay_records set unlogged`.execute(db);
  await db.schema
    .createTable('replay_horizon')
    .$call((table) => (postgres ? table.modifyFront(sql`unlogged`) : table))
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('since_epoch_ms', 'bigint', (c) => c.notNull())
    .addColumn('boot_id', 'varchar(64)')
    .execute();
  await sql`insert into replay_horizon (id, since_epoch_ms) values (1, 0)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('replay_horizon').execute();
  if (onPostgres(db)) await sql`alter table replay_records set logged`.execute(db);
}
