/**
 * Applies the versioned migrations at start. Kysely's migrator takes a lock (an advisory lock on
 * PostgreSQL), so several instances starting together apply each migration once.
 *
 * Two sets share this runner, each with its own bookkeeping tables: the API's (below:
 * `kysely_migration`) and the reference core's (src/reference-core/storage/migrate-core.ts:
 * `core_migration`), which owns the core's tables. With the embedded core one database holds
 * both; with a remote core the API's database holds only the API's.
 */
import { systemClock } from '../clock/system-clock.js';
import { sleep } from '../core/clock.js';
import { Migrator, type Migration, type MigrationProvider } from 'kysely';
import * as m0001 from './migrations/0001_auth.js';
import * as m0002 from './migrations/0002_core.js';
import * as m0003 from './migrations/0003_loans.js';
import * as m0004 from './migrations/0004_production.js';
import * as m0005 from './migrations/0005_drop_unused_chain_index.js';
import * as m0006 from './migrations/0006_end_of_day.js';
import * as m0007 from './migrations/0007_webhooks.js';
import * as m0008 from './migrations/0008_operator_sessions.js';
import * as m0009 from './migrations/0009_fapi2.js';
import * as m0010 from './migrations/0010_sandbox_scenarios.js';
import * as m0011 from './migrations/0011_client_tokens_not_before.js';
import * as m0012 from './migrations/0012_replay_records_unsynced.js';
import * as m0013 from './migrations/0013_replay_generations.js';
import type { Store } from './connect.js';
import { databaseProblem } from './engine/database-problem.js';

/** Every migration, in order. Names are frozen once landed. */
const migrations: Record<string, Migration> = {
  '0001_auth': m0001,
  '0002_core': m0002,
  '0003_loans': m0003,
  '0004_production': m0004,
  '0005_drop_unused_chain_index': m0005,
  '0006_end_of_day': m0006,
  '0007_webhooks': m0007,
  '0008_operator_sessions': m0008,
  '0009_fapi2': m0009,
  '0010_sandbox_scenarios': m0010,
  '0011_client_tokens_not_before': m0011,
  '0012_replay_records_unsynced': m0012,
  '0013_replay_generations': m0013,
};
/** The API's migrations by name (a test applies the first few, then the rest: an upgrade). */
export const apiMigrationList: Readonly<Record<string, Migration>> = migrations;

class StaticMigrationProvider implements MigrationProvider {
  constructor(readonly migrations: Record<string, Migration>) {}

  async getMigrations(): Promise<Record<string, Migration>> {
    return this.migrations;
  }
}

/** A set of migrations and the tables that record which ran. */
export interface MigrationSet {
  migrations: Record<string, Migration>;
  /** Kysely's defaults (`kysely_migration`, `kysely_migration_lock`) are the API's. */
  tableName?: string;
  lockTableName?: string;
}

const apiMigrations: MigrationSet = { migrations };

/**
 * Kysely's migration lock is a no-op on SQLite (one connection per process), so two processes
 * starting together on one new file can both try a migration; the loser's transaction rolls back,
 * and trying again finds the migration applied.
 */
const sqliteMigrationAttemptsMax = 5;

/** The API's migrations: its own tables only (the core's are the core's, migrate-core.ts). */
export async function migrateToLatest(store: Store): Promise<string[]> {
  return applyMigrations(store, apiMigrations);
}

export async function applyMigrations(store: Store, set: MigrationSet): Promise<string[]> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await migrateOnce(store, set);
    } catch (error) {
      if (store.dialect !== 'sqlite' || attempt >= sqliteMigrationAttemptsMax) throw error;
      // Real time: another process holds the file while it migrates, whatever clock the service runs on.
      await sleep(systemClock, 100 * attempt);
    }
  }
}

async function migrateOnce(store: Store, set: MigrationSet): Promise<string[]> {
  const migrator = new Migrator({
    db: store.db,
    provider: new StaticMigrationProvider(set.migrations),
    ...(set.tableName === undefined ? {} : { migrationTableName: set.tableName }),
    ...(set.lockTableName === undefined ? {} : { migrationLockTableName: set.lockTableName }),
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName;
    // No migration ran: the database itself could not be opened or read. Say which, and what to do.
    if (failed === undefined) throw new Error(`cannot open the database ${store.displayUrl}: ${databaseProblem(error)}`, { cause: error });
    throw new Error(`Database migration ${failed} failed on ${store.displayUrl}: ${(error as Error).message ?? String(error)}`, { cause: error });
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

