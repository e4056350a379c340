/**
 * One opened database (open-database.ts): the engine's surface to the store. It owns its
 * connections (the SQLite writer and reader, or the PostgreSQL pool), the root query builder
 * (root-queries.ts: statements outside a transaction, straight to the driver), and opens the
 * units of work (unit-of-work.ts), each one transaction holding its own statement queue.
 */
import type { RootQueries } from './root-queries.js';
import type { UnitOfWork } from './unit-of-work.js';

export type Dialect = 'sqlite' | 'postgres';

/** A connection pool's use at one moment: connections open, idle among them, callers waiting for one. */
export interface PoolStats {
  total: number;
  idle: number;
  waiting: number;
}

/** How a transaction's commit is made durable (Database.transaction). */
export interface TransactionOptions {
  /**
   * false: the commit need not be on disk before it answers (SQLite: its commit writes the log
   * without syncing it; the next synced commit syncs it with everything before it). A crash of the
   * process loses nothing committed, a crash of the machine may lose it. A group of units of work
   * commits unsynced only when every one of them asked for it: no other transaction loses its sync.
   * PostgreSQL commits as it always does (a table decides: an UNLOGGED table's writes are never
   * flushed). Default true.
   */
  synced?: boolean;
}

export interface Database<DB> {
  readonly db: RootQueries<DB>;
  readonly dialect: Dialect;
  /** The URL without credentials, safe to log. */
  readonly displayUrl: string;
  /**
   * Runs a unit of work in a transaction and answers once it is committed. SQLite groups
   * concurrent units into one commit (commit-group.ts); PostgreSQL commits each on its own
   * connection of the pool, in parallel.
   */
  transaction<T>(work: (unit: UnitOfWork<DB>) => Promise<T>, options?: TransactionOptions): Promise<T>;
  /** The PostgreSQL pool's use (metrics); undefined for SQLite, one connection and no pool. */
  poolStats(): PoolStats | undefined;
  /** Readiness: answers once the database answered and takes writes; throws otherwise. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
