/**
 * Applies the versioned migrations at start. Kysely's migrator takes a lock (an advisory lock on
 * PostgreSQL), so several instances starting together apply each migration once.
 */
import { Migrator, type Migration, type MigrationProvider } from 'kysely';
import * as m0001 from './migrations/0001_auth.js';
import * as m0002 from './migrations/0002_core.js';
import * as m0003 from './migrations/0003_loans.js';
import * as m0004 from './migrations/0004_production.js';
import type { Store } from './connect.js';

/** Every migration, in order. Names are frozen once landed. */
const migrations: Record<string, Migration> = {
  '0001_auth': m0001,
  '0002_core': m0002,
  '0003_loans': m0003,
  '0004_production': m0004,
};

class StaticMigrationProvider implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    return migrations;
  }
}

export async function migrateToLatest(store: Store): Promise<string[]> {
  const migrator = new Migrator({ db: store.db, provider: new StaticMigrationProvider() });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new Error(`Database migration ${failed} failed: ${(error as Error).message ?? String(error)}`);
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
