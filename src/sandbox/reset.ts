/**
 * Sandbox reset: the store emptied and the data file loaded again, as if the sandbox were new,
 * in one transaction under the administration lock (docs/sandbox.md).
 *
 * Every table the database holds is emptied, read from the database's own catalogue so that a
 * table added by a later migration is covered without an edit here, except what must survive:
 * - the migration bookkeeping (`kysely_migration`, `kysely_migration_lock`, and the embedded
 *   core's `core_migration`, `core_migration_lock`): the schema stays;
 * - the console's login tokens and sessions: the operator who pressed "reset" stays logged in;
 * - the sealed client-secret hash key (a `settings` row): every running instance holds it in
 *   memory from its start; a new key would make them refuse every client secret until restarted.
 *   The other settings (business date, calendar, audit chain head, ...) are deleted and the data
 *   file writes them again, except the database's id for the audit spool (src/audit/audit-spool.ts):
 *   running instances name their spool files by it;
 * - the realms the data file still declares, with their signing keys, key generation and
 *   not-before: tokens already issued stay verifiable until they expire and the JWKS clients have
 *   cached stays valid, so that no instance refuses a token for a key it has not seen yet. The
 *   realm's audience and token lifespan are taken from the file again. A realm the file no longer
 *   declares is deleted with its keys;
 * - the clients' not-befores (docs/auth.md, "Client revocation"), for the clients the file declares
 *   again: a token revoked before the reset stays refused.
 */
import { sql, type Transaction } from 'kysely';
import { secretHashKeySetting } from '../auth/secret-hash-key.js';
import type { Vault } from '../auth/vault.js';
import { lockForAdministration } from '../store/admin-lock.js';
import type { Store } from '../store/connect.js';
import type { Database } from '../store/schema.js';
import type { SandboxData } from './data-file.js';
import { recordedRemoteCore, remoteCoreSetting } from './core-placement.js';
import { realmDefaults } from '../auth/signing-algorithms.js';
import { loadSandboxDataWithin, type LoadSummary, type SandboxLoadOptions } from './load.js';
import { sleep } from '../core/clock.js';
import { spoolDatabaseIdSetting } from '../audit/spool-database-id.js';
import { systemClock } from '../clock/system-clock.js';

/** Tables a reset leaves alone entirely: the migrator's bookkeeping and the console's sessions. */
const untouchedTables: ReadonlySet<string> = new Set(['kysely_migration', 'kysely_migration_lock', 'core_migration', 'core_migration_lock', 'operator_login_tokens', 'operator_sessions']);
/** Tables a reset prunes by rule rather than empties (see the module comment). */
const prunedTables: ReadonlySet<string> = new Set(['settings', 'realms', 'signing_keys']);
/** Settings that survive a reset. */
const keptSettings: readonly string[] = [secretHashKeySetting, remoteCoreSetting, spoolDatabaseIdSetting];

export interface ResetSummary extends LoadSummary {
  /** Tables emptied, in alphabetical order. */
  tablesEmptied: string[];
  /** Rows deleted from them (the pruned settings and realms not counted). */
  rowsDeleted: number;
  /** Realms kept with their signing keys (the data file declares them). */
  realmsKept: string[];
  /** Realms deleted because the data file no longer declares them. */
  realmsDeleted: string[];
}

/**
 * On PostgreSQL the reset locks every table it changes at once and without waiting (NOWAIT): a
 * reset that waited for a table while holding others could deadlock with a running server's
 * transaction, and PostgreSQL would abort that request. When a table is busy the reset rolls back,
 * pauses and tries again; server transactions only ever wait for a reset that holds every lock.
 */
const lockAttemptsMax = 50;
const lockRetryPauseMsMax = 250;
const postgresLockNotAvailable = '55P03';

/** What the reset loads again: as the data file's load (its `parts` follow where the core's records are). */
export type ResetOptions = Omit<SandboxLoadOptions, 'parts'>;

export async function resetSandbox(store: Store, vault: Vault, data: SandboxData, options: ResetOptions): Promise<ResetSummary> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await resetOnce(store, vault, data, options);
    } catch (error) {
      const busy = store.dialect === 'postgres' && (error as { code?: unknown })?.code === postgresLockNotAvailable;
      if (!busy || attempt >= lockAttemptsMax) throw error;
      await sleep(options.clock ?? systemClock, Math.min(10 * attempt, lockRetryPauseMsMax));
    }
  }
}

async function resetOnce(store: Store, vault: Vault, data: SandboxData, options: ResetOptions): Promise<ResetSummary> {
  return store.db.transaction().execute(async (trx) => {
    // The same lock as data loading and key rotation: two resets, or a reset and an instance
    // starting on the same store, run one after the other. Then every table's exclusive lock on
    // PostgreSQL (see resetSandbox), the database's write lock on SQLite: a running server's
    // requests wait for the commit and then see the reset data.
    await lockForAdministration(store, trx);
    const tables = (await listTables(store, trx)).filter((name) => !untouchedTables.has(name) && !prunedTables.has(name)).sort();
    if (store.dialect === 'postgres') {
      const changed = [...tables, ...prunedTables].map((table) => sql.table(table));
      await sql`lock table ${sql.join(changed)} in access exclusive mode nowait`.execute(trx);
    }
    // A client's revocation survives the reset, as its realm's not-before does: tokens revoked
    // before it (a disabled client, a new secret, revoke-tokens) stay refused.
    const clientNotBefores = await trx.selectFrom('clients').select(['realm', 'client_id', 'tokens_not_before']).where('tokens_not_before', '>', 0).execute();
    const rowsDeleted = await emptyTables(store, trx, tables);

    await trx.deleteFrom('settings').where('name', 'not in', keptSettings).execute();
    const declared = new Set((data.realms ?? []).map((realm) => realm.name));
    const existing = (await trx.selectFrom('realms').select('name').execute()).map((row) => row.name);
    const realmsDeleted = existing.filter((name) => !declared.has(name)).sort();
    if (realmsDeleted.length > 0) {
      await trx.deleteFrom('signing_keys').where('realm', 'in', realmsDeleted).execute();
      await trx.deleteFrom('realms').where('name', 'in', realmsDeleted).execute();
    }
    const realmsKept = existing.filter((name) => declared.has(name)).sort();
    for (const realm of data.realms ?? []) {
      if (!realmsKept.includes(realm.name)) continue;
      await trx
        .updateTable('realms')
        .set({ audience: realm.audience ?? realmDefaults.audience, lifespan_seconds: realm.accessTokenLifespanSeconds ?? realmDefaults.lifespanSeconds })
        .where('name', '=', realm.name)
        .execute();
    }

    // With a remote core the core's records are not here: the reset reloads the API's part only.
    const loaded = await loadSandboxDataWithin(trx, vault, data, { ...options, parts: (await recordedRemoteCore(trx)) === undefined ? 'all' : 'api' });
    for (const client of clientNotBefores) {
      await trx.updateTable('clients').set({ tokens_not_before: Number(client.tokens_not_before) }).where('realm', '=', client.realm).where('client_id', '=', client.client_id).execute();
    }
    return { ...loaded, tablesEmptied: tables, rowsDeleted, realmsKept, realmsDeleted };
  });
}

/** Every base table of the store, from the database's catalogue. */
export async function listTables(store: Store, trx: Transaction<Database>): Promise<string[]> {
  if (store.dialect === 'postgres') {
    const { rows } = await sql<{ name: string }>`select tablename as name from pg_catalog.pg_tables where schemaname = current_schema()`.execute(trx);
    return rows.map((row) => row.name);
  }
  const { rows } = await sql<{ name: string }>`select name from sqlite_master where type = 'table' and name not like 'sqlite\\_%' escape '\\'`.execute(trx);
  return rows.map((row) => row.name);
}

async function emptyTables(store: Store, trx: Transaction<Database>, tables: string[]): Promise<number> {
  let rowsDeleted = 0;
  for (const table of tables) {
    const { rows } = await sql<{ count: number | string | bigint }>`select count(*) as count from ${sql.table(table)}`.execute(trx);
    rowsDeleted += Number(rows[0]?.count ?? 0);
  }
  if (tables.length === 0) return rowsDeleted;
  if (store.dialect === 'postgres') {
    // One statement for all: foreign keys between the emptied tables need no order, and
    // sequences start again as in a new database.
    await sql`truncate table ${sql.join(tables.map((table) => sql.table(table)))} restart identity`.execute(trx);
    return rowsDeleted;
  }
  // Foreign keys are checked at commit, when every table is empty: the order does not matter.
  await sql`pragma defer_foreign_keys = on`.execute(trx);
  for (const table of tables) await sql`delete from ${sql.table(table)}`.execute(trx);
  // AUTOINCREMENT counters start again, as in a new database.
  const { rows } = await sql<{ name: string }>`select name from sqlite_master where type = 'table' and name = 'sqlite_sequence'`.execute(trx);
  if (rows.length > 0) await sql`delete from sqlite_sequence`.execute(trx);
  return rowsDeleted;
}
