/**
 * Opens the store: the engine's database (engine/open-database.ts) for the store's schema
 * (schema.ts), so that every table module and the application see typed tables.
 */
import type { Database } from './engine/database.js';
import { openDatabase } from './engine/open-database.js';
import type { Database as Schema } from './schema.js';

export type { Dialect, PoolStats } from './engine/database.js';
export { redactUrl } from './engine/open-database.js';

export type Store = Database<Schema>;

/** Opens the store named by `url` (async: the dialect's driver loads with its first database). */
export function openStore(url: string): Promise<Store> {
  return openDatabase<Schema>(url);
}
