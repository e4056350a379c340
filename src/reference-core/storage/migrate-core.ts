/**
 * The reference core's migrations: its own set, recorded in its own tables (`core_migration`,
 * `core_migration_lock`), so that the core's schema moves with the core. With the embedded core
 * they run in the API's database beside the API's set (src/store/migrate.ts); `coregate core
 * serve` runs only these in the core's database, and an API with `--core-url` never runs them.
 */
import type { Migration } from 'kysely';
import type { Store } from '../../store/connect.js';
import { applyMigrations } from '../../store/migrate.js';
import * as c0001 from './migrations/0001_core_tables.js';

/** Every migration of the core, in order. Names are frozen once landed. */
const coreMigrations: Record<string, Migration> = {
  '0001_core_tables': c0001,
};

export const coreMigrationTables = { tableName: 'core_migration', lockTableName: 'core_migration_lock' } as const;

export async function migrateCoreToLatest(store: Store): Promise<string[]> {
  return applyMigrations(store, { migrations: coreMigrations, ...coreMigrationTables });
}
