/**
 * Kysely's driver for PostgreSQL, in place of Kysely's own PostgresDriver, for one reason
 * measured under load: round trips. Every statement of an operation was a round trip to the
 * server, and each cost the service more CPU in the socket write (the kernel's loopback work and
 * the wake-up of the server's backend) than the statement itself (writev was two fifths of a
 * term deposit's profile). The pool's clients run in pg's pipeline mode: a statement is sent
 * without waiting for the answer to the one before, and `executeBatch` sends several statements
 * in one socket write (corked), each answered in order. Statements still execute one after
 * another on the server, in the order sent; a failed one aborts its transaction, so the ones
 * sent after it fail too and the unit of work rolls back as before.
 */
import {
  CompiledQuery,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type DatabaseConnection,
  type DatabaseIntrospector,
  type Dialect,
  type DialectAdapter,
  type Driver,
  type Kysely,
  type QueryCompiler,
  type QueryResult,
} from 'kysely';
import type pg from 'pg';
import { isPreparedStatementText } from './prepared-query.js';
import { runSavepointCommand } from './savepoint-command.js';

/** A connection that can send several statements in one round trip (statement-queue.ts). */
export interface BatchConnection extends DatabaseConnection {
  executeBatch(queries: readonly CompiledQuery[]): Array<Promise<QueryResult<unknown>>>;
}

export function isBatchConnection(connection: DatabaseConnection): connection is BatchConnection {
  return typeof (connection as Partial<BatchConnection>).executeBatch === 'function';
}

export class PipelinedPostgresDialect implements Dialect {
  readonly #lane: OutsideTransactionLane;

  constructor(readonly pool: pg.Pool) {
    this.#lane = new OutsideTransactionLane(pool);
  }

  /** A statement outside any transaction, without Kysely's executor (direct-statements.ts). */
  runOutsideTransaction<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    return this.#lane.run<R>(query);
  }

  createDriver(): Driver {
    return new PipelinedPostgresDriver(this.pool);
  }

  createQueryCompiler(): QueryCompiler {
    return new PostgresQueryCompiler();
  }

  createAdapter(): DialectAdapter {
    return new PostgresAdapter();
  }

  createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new PostgresIntrospector(db);
  }
}

/** The parts of pg's client this driver uses, its socket among them (pg has no public cork). */
interface PipelineClient {
  query(text: string, values: unknown[]): Promise<pg.QueryResult>;
  query(config: { name: string; text: string; values: unknown[] }): Promise<pg.QueryResult>;
  release(error?: Error | boolean): void;
  connection: { stream: { cork(): void; uncork(): void } };
  /** Set when the connection's named statements no longer match the server: released destroyed. */
  discard?: boolean;
}

class PipelinedConnection implements BatchConnection {
  constructor(readonly client: PipelineClient) {}

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    return send<R>(this.client, query);
  }

  executeBatch(queries: readonly CompiledQuery[]): Array<Promise<QueryResult<unknown>>> {
    return sendBatch(this.client, queries);
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming is not supported by coregate\'s PostgreSQL driver');
  }
}

/**
 * Names for the statements of prepared queries (prepared-query.ts): a named statement is parsed
 * and planned by the server once per connection instead of once per run, which took a third of
 * the server's CPU off a term deposit (measured). Only these few dozen texts are named, so a
 * connection's statements stay bounded; any other query is sent unnamed.
 */
const statementNames = new Map<string, string>();

function statementNameOf(sql: string): string | undefined {
  let name = statementNames.get(sql);
  if (name === undefined && isPreparedStatementText(sql)) {
    name = `coregate_${statementNames.size + 1}`;
    statementNames.set(sql, name);
  }
  return name;
}

/**
 * SQLSTATEs that mean a named statement no longer matches the server (a migration changed a
 * table under a running instance): the connection is then discarded, and the next one parses afresh.
 */
const staleStatementCodes = new Set(['0A000', '26000']);

/**
 * Statements sent in one socket write: in pipeline mode pg writes each query as it is submitted,
 * so they are corked. A statement refused before it is sent fails alone; the others still leave.
 */
function sendBatch(client: PipelineClient, queries: readonly CompiledQuery[]): Array<Promise<QueryResult<unknown>>> {
  const { stream } = client.connection;
  stream.cork();
  try {
    return queries.map((query) => {
      try {
        return send<unknown>(client, query);
      } catch (error) {
        return Promise.reject(error);
      }
    });
  } finally {
    stream.uncork();
  }
}

function send<R>(client: PipelineClient, query: CompiledQuery): Promise<QueryResult<R>> {
  const name = statementNameOf(query.sql);
  const values = [...query.parameters];
  const answer = name === undefined ? client.query(query.sql, values) : client.query({ name, text: query.sql, values });
  return answer.then(
    ({ command, rowCount, rows }) => ({
      numAffectedRows: command === 'INSERT' || command === 'UPDATE' || command === 'DELETE' || command === 'MERGE' ? BigInt(rowCount ?? 0) : undefined,
      rows: (rows ?? []) as R[],
    }),
    (error: unknown) => {
      if (name !== undefined && staleStatementCodes.has((error as { code?: string }).code ?? '')) client.discard = true;
      // The stack of a pipelined answer leads to the socket; give it the caller's instead.
      if (error instanceof Error) Error.captureStackTrace(error);
      throw error;
    },
  );
}

/** Statements outside transactions sent on one client at most, in one socket write. */
const laneBatchMax = 64;

/** A statement waiting to leave with others (here and in statement-queue.ts), and its caller's answer. */
export interface PendingStatement {
  query: CompiledQuery;
  resolve: (result: QueryResult<unknown>) => void;
  reject: (error: unknown) => void;
}

/**
 * Statements outside any transaction (a retrieve's read, a batch of refusal records), gathered
 * over a turn of the event loop and sent together on one client of the pool, in one socket
 * write: on this path each statement's own write, and the server process it woke, cost more than
 * the statement (measured: a retrieve's writes were a third of its CPU). Each statement keeps its
 * own Sync, so each is its own implicit transaction and one that fails fails alone. Only prepared
 * queries (the request path's) come this way; any other query has a client of its own.
 */
class OutsideTransactionLane {
  #pending: PendingStatement[] = [];
  #scheduled = false;

  constructor(readonly pool: pg.Pool) {}

  run<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    return new Promise<QueryResult<R>>((resolve, reject) => {
      this.#pending.push({ query, resolve: resolve as PendingStatement['resolve'], reject });
      if (this.#scheduled) return;
      this.#scheduled = true;
      // Requests read in the same turn of the event loop share the write.
      setImmediate(() => this.#flush());
    });
  }

  #flush(): void {
    this.#scheduled = false;
    const pending = this.#pending;
    this.#pending = [];
    for (let start = 0; start < pending.length; start += laneBatchMax) void this.#send(pending.slice(start, start + laneBatchMax));
  }

  async #send(batch: PendingStatement[]): Promise<void> {
    let client: PipelineClient;
    try {
      client = (await this.pool.connect()) as unknown as PipelineClient;
    } catch (error) {
      for (const statement of batch) statement.reject(error);
      return;
    }
    const answers = sendBatch(
      client,
      batch.map((statement) => statement.query),
    ).map((answer, index) => {
      const statement = batch[index] as PendingStatement;
      return answer.then(statement.resolve, statement.reject);
    });
    await Promise.all(answers);
    client.release(client.discard === true);
  }
}

class PipelinedPostgresDriver implements Driver {
  readonly #pool: pg.Pool;
  readonly #connections = new WeakMap<object, PipelinedConnection>();

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    const client = (await this.#pool.connect()) as unknown as PipelineClient;
    let connection = this.#connections.get(client);
    if (connection === undefined) {
      connection = new PipelinedConnection(client);
      this.#connections.set(client, connection);
    }
    return connection;
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    // Awaited: a statement sent behind a BEGIN that failed would run outside any transaction.
    await connection.executeQuery(CompiledQuery.raw('begin'));
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('commit'));
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('rollback'));
  }

  async savepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    await runSavepointCommand(connection, 'savepoint', name, compile);
  }

  async rollbackToSavepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    await runSavepointCommand(connection, 'rollback to', name, compile);
  }

  async releaseSavepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    await runSavepointCommand(connection, 'release', name, compile);
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    const { client } = connection as PipelinedConnection;
    // true: the pool destroys it instead of keeping it idle.
    client.release(client.discard === true);
  }

  async destroy(): Promise<void> {
    await this.#pool.end();
  }
}

