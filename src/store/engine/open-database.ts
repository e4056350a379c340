/**
 * Opens the database named by a URL: `sqlite:PATH` (embedded, the default) or `postgres://...`.
 * Both dialects sit behind one Kysely query layer so that every repository is written once; the
 * `Database` answered (database.ts) owns everything of this one opened database: its connections
 * or pool, its driver's named statements, its commit group, its WAL sync and checkpointer.
 */
import type { Database } from './database.js';

/**
 * Each dialect's module (and its driver: pg, better-sqlite3) loads only when a database of its
 * kind opens: a process on SQLite never loads pg (about 0.1 s of CPU at start, on every operator
 * command and server on SQLite; docs/performance.md, "CLI start").
 */
export async function openDatabase<DB>(url: string): Promise<Database<DB>> {
  if (url.startsWith('sqlite:')) return (await import('./open-sqlite.js')).openSqlite<DB>(url.slice('sqlite:'.length));
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) return (await import('./open-postgres.js')).openPostgres<DB>(url, redactUrl(url));
  throw new Error(`Unsupported database URL "${redactUrl(url)}": use sqlite:PATH or postgres://...`);
}

/** Removes a password from a database URL so that it can be logged or shown in an error. */
export function redactUrl(url: string): string {
  return url.replace(/^(\w+:\/\/[^:/@]*):[^@]*@/, '$1:***@');
}
