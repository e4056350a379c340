/**
 * Frozen migration: on SQLite the replay record is kept in two generations of tables that are
 * emptied whole, instead of one table whose expired rows were deleted one by one (issue 42,
 * docs/auth.md "The replay record").
 *
 * A use's key is a random SHA-256: every insert and every deletion touched another page of the
 * key's index, and SQLite writes each page a commit touches to its log. Deleting expired rows one
 * by one doubled those pages and needed a second index (on the expiry) to find them. Now:
 * - `replay_uses_0`, `replay_uses_1`: the uses, keyed by the SHA-256 itself (32 bytes, not its 64
 *   hexadecimal characters), WITHOUT ROWID (the key is the table: one tree, not a table and an index).
 * - `replay_horizon` gains `generation` (the table uses go into) and each table's latest expiry
 *   (`expires_max_0`, `expires_max_1`). Once every use of the other table has expired, a write
 *   empties it in one statement and makes it the current one (src/auth/replay-record.ts).
 * The rows of `replay_records` are carried into generation 0, then the table is dropped: a use
 * recorded before the upgrade is still refused after it.
 *
 * PostgreSQL keeps `replay_records` (unlogged since 0012): its unique index takes concurrent
 * inserts from several instances without a writer's lock, and its expired rows are deleted in
 * the background. Nothing changes there.
 * Never edit a landed migration.
 */
import { PostgresAdapter, sql, type Kysely } from 'kysely';

function onPostgres(db: Kysely<unknown>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

export async function up(db: Kysely<unknown>): Promise<void> {
  if (onPostgres(db)) return;
  for (const table of ['replay_uses_0', 'replay_uses_1']) {
    await db.schema
      .createTable(table)
      .addColumn('key', 'blob', (c) => c.primaryKey().notNull())
      .addColumn('expires_epoch_ms', 'integer', (c) => c.notNull())
      .modifyEnd(sql`without rowid`)
      .execute();
  }
  await db.schema.alterTable('replay_horizon').addColumn('generation', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('replay_horizon').addColumn('expires_max_0', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('replay_horizon').addColumn('expires_max_1', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
  await sql`insert into replay_uses_0 (key, expires_epoch_ms) select unhex(key), expires_epoch_ms from replay_records`.execute(db);
  await sql`update replay_horizon set generation = 0, expires_max_0 = coalesce((select max(expires_epoch_ms) from replay_uses_0), 0)`.execute(db);
  await db.schema.dropTable('replay_records').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (onPostgres(db)) return;
  await db.schema
    .createTable('replay_records')
    .addColumn('key', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('expires_epoch_ms', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('replay_records_expiry').on('replay_records').column('expires_epoch_ms').execute();
  // Of a key in both generations the later expiry holds.
  await sql`insert into replay_records (key, expires_epoch_ms) select lower(hex(key)), max(expires_epoch_ms) from (select * from replay_uses_0 union all select * from replay_uses_1) group by key`.execute(db);
  for (const column of ['expires_max_1', 'expires_max_0', 'generation']) await db.schema.alterTable('replay_horizon').dropColumn(column).execute();
  await db.schema.dropTable('replay_uses_1').execute();
  await db.schema.dropTable('replay_uses_0').execute();
}
