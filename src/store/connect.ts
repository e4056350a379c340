/**
 * Opens the store named by a URL: `sqlite:PATH` (embedded, the default) or `postgres://...`.
 * Both dialects sit behind one Kysely query layer so that every repository is written once.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import type { Database } from './schema.js';

export type Dialect = 'sqlite' | 'postgres';

/** A connection pool's use at one moment: connections open, idle among them, callers waiting for one. */
export interface PoolStats {
  total: number;
  idle: number;
  waiting: number;
}

export interface Store {
  readonly db: Kysely<Database>;
  readonly dialect: Dialect;
  /** The URL without credentials, safe to log. */
  readonly displayUrl: string;
  /** The PostgreSQL pool's use (metrics); undefined for SQLite, one connection and no pool. */
  poolStats(): PoolStats | undefined;
  close(): Promise<void>;
}

/** Connections in one instance's PostgreSQL pool. */
const postgresPoolSizeMax = 20;
/** How long SQLite waits for another process's write lock before failing. */
const sqliteBusyTimeoutMs = 5_000;

export function openStore(url: string): Store {
  if (url.startsWith('sqlite:')) return openSqlite(url.slice('sqlite:'.length));
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) return openPostgres(url);
  throw new Error(`Unsupported database URL "${redactUrl(url)}": use sqlite:PATH or postgres://...`);
}

function openSqlite(path: string): Store {
  if (path === '') throw new Error('sqlite: URL needs a file path, e.g. sqlite:./data/coregate.db');
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const database = new SqliteDatabase(path);
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = NORMAL');
  database.pragma('foreign_keys = ON');
  database.pragma(`busy_timeout = ${sqliteBusyTimeoutMs}`);
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database }) });
  return {
    db,
    dialect: 'sqlite',
    displayUrl: `sqlite:${path}`,
    poolStats: () => undefined,
    close: () => db.destroy(),
  };
}

function openPostgres(url: string): Store {
  const pool = new pg.Pool({ connectionString: url, max: postgresPoolSizeMax });
  // An idle client's error (server restart) must not crash the process; the next query reports it.
  pool.on('error', () => {});
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return {
    db,
    dialect: 'postgres',
    displayUrl: redactUrl(url),
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    close: () => db.destroy(),
  };
}

/** Removes a password from a database URL so that it can be logged or shown in an error. */
export function redactUrl(url: string): string {
  return url.replace(/^(\w+:\/\/[^:/@]*):[^@]*@/, '$1:***@');
}

/** A cheap round trip that proves the store answers: used by the readiness probe. */
export async function pingStore(store: Store): Promise<void> {
  await sql`select 1`.execute(store.db);
}
