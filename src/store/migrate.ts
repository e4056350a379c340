/**
 * Applies the versioned migrations at start. Kysely's migrator takes a lock (an advisory lock on
 * PostgreSQL), so several instances starting together apply each migration once.
 */
import { Migrator, type Migration, type MigrationProvider } from 'kysely';
import * as m0001 from './migrations/0001_auth.js';
import * as m0002 from './migrations/0002_core.js';
import * as m0003 from './migrations/0003_loans.js';
import * as m0004 from './migrations/0004_production.js';
import * as m0005 from './migrations/0005_drop_unused_chain_index.js';
import * as m0006 from './migrations/0006_end_of_day.js';
import * as m0007 from './migrations/0007_webhooks.js';
import * as m0008 from './migrations/0008_operator_sessions.js';
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
};

class StaticMigrationProvider implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    return migrations;
  }
}

/**
 * Kysely's migration lock is a no-op on SQLite (one connection per process), so two processes
 * starting together on one new file can both try a migration; the loser's transaction rolls back,
 * and trying again finds the migration applied.
 */
const sqliteMigrationAttemptsMax = 5;

export async function migrateToLatest(store: Store): Promise<string[]> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await migrateOnce(store);
    } catch (error) {
      if (store.dialect !== 'sqlite' || attempt >= sqliteMigrationAttemptsMax) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
    }
  }
}

async function migrateOnce(store: Store): Promise<string[]> {
  const migrator = new Migrator({ db: store.db, provider: new StaticMigrationProvider() });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName;
    // No migration ran: the database itself could not be opened or read. Say which, and what to do.
    if (failed === undefined) throw new Error(`cannot open the database ${store.displayUrl}: ${databaseProblem(error)}`, { cause: error });
    throw new Error(`Database migration ${failed} failed on ${store.displayUrl}: ${(error as Error).message ?? String(error)}`, { cause: error });
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

