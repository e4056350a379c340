/**
 * better-sqlite3 compiles a statement on every `prepare`, and Kysely prepares on every query:
 * compiling was a tenth of the CPU of a retrieve. Kysely's SQL text is stable (values are bound
 * parameters), so prepared statements are cached by their text, bounded, least recently used
 * first out. A statement still iterating (a stream) is never handed out twice.
 */
import type { Database, Statement } from 'better-sqlite3';
import { LruMap } from '../../cache/lru-map.js';

/** Distinct SQL texts kept prepared; the application has a few hundred at most. */
export const preparedStatementsMax = 1000;

/** How the driver makes a statement's rows into objects (sqlite-driver.ts). */
export interface RowMaker {
  columnsCount: number;
  make: (values: unknown[]) => unknown;
}

/** A prepared statement and what the driver learnt of it: it lives as long as the statement. */
export interface CachedStatement {
  readonly statement: Statement;
  /** Its row maker once made; null when its columns cannot be keys of a literal. */
  rowMaker: RowMaker | null | undefined;
}

/** A connection as the driver (sqlite-driver.ts) uses it. */
export interface StatementSource {
  prepare(sql: string): CachedStatement;
  close(): void;
}

export function withStatementCache(database: Database, capacity = preparedStatementsMax): StatementSource {
  const cache = new LruMap<string, CachedStatement>(capacity);
  return {
    close: () => {
      cache.clear();
      database.close();
    },
    prepare: (sql: string) => {
      const cached = cache.get(sql);
      if (cached !== undefined && !cached.statement.busy) return cached;
      const prepared: CachedStatement = { statement: database.prepare(sql), rowMaker: undefined };
      if (cached === undefined) cache.set(sql, prepared);
      return prepared;
    },
  };
}
