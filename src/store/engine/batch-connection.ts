/**
 * A connection that sends several statements in one round trip (the PostgreSQL driver's), as the
 * statement queue (statement-queue.ts) sees it. Its own module so that the queue and the driver
 * depend on it, not on each other.
 */
import type { CompiledQuery, DatabaseConnection, QueryResult } from 'kysely';

export interface BatchConnection extends DatabaseConnection {
  executeBatch(queries: readonly CompiledQuery[]): Array<Promise<QueryResult<unknown>>>;
}

export function isBatchConnection(connection: DatabaseConnection): connection is BatchConnection {
  return typeof (connection as Partial<BatchConnection>).executeBatch === 'function';
}

/** A statement waiting to leave with others, and its caller's answer. */
export interface PendingStatement {
  query: CompiledQuery;
  resolve: (result: QueryResult<unknown>) => void;
  reject: (error: unknown) => void;
}
