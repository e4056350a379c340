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
  type DialectAdapter,
  type Driver,
  type Kysely,
  type QueryCompiler,
  type QueryResult,
} from 'kysely';
import type pg from 'pg';
import { NotRunInBatch } from './not-run-in-batch.js';
import { OneSyncBatchRun, type BatchStatement } from './postgres-batch-run.js';
import { NamedStatementRun, RowShapes, type NamedRunResult } from './postgres-named-run.js';
import { isPreparedStatementText } from './prepared-query.js';
import { DatabaseNotWritable, isDatabaseUnavailable } from './database-unavailable.js';
import { runSavepointCommand } from './savepoint-command.js';
import type { BatchConnection, PendingStatement } from './batch-connection.js';
import type { EngineDialect } from './root-queries.js';


export class PipelinedPostgresDialect implements EngineDialect {
  readonly #lane: OutsideTransactionLane;
  readonly #sessions: ServerSessions;
  /** This database's statement names and row shapes: the same on each of its connections. */
  readonly #statements = new NamedStatements();
  #driver: PipelinedPostgresDriver | undefined;

  constructor(readonly pool: pg.Pool) {
    this.#lane = new OutsideTransactionLane(pool, this.#statements);
    this.#sessions = new ServerSessions(pool);
  }

  get driver(): Driver {
    if (this.#driver === undefined) throw new Error('the PostgreSQL dialect has no driver yet');
    return this.#driver;
  }

  /** A statement outside any transaction, without Kysely's executor (root-queries.ts). */
  runOutsideTransaction<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    return this.#lane.run<R>(query);
  }

  /**
   * Readiness (issue 24): a connection of the pool answers, and the server takes writes. A
   * standby, or a session made read-only (`default_transaction_read_only`), answers reads but
   * refuses every write, so it is not ready; its connection leaves the pool, so that the next one
   * is made afresh (to the new primary once the address has moved).
   */
  async probeWritable(): Promise<void> {
    const client = (await this.pool.connect()) as unknown as PipelineClient;
    let readOnly = false;
    try {
      const { rows } = await client.query("select current_setting('transaction_read_only') as read_only", []);
      readOnly = (rows[0] as { read_only?: string } | undefined)?.read_only !== 'off';
    } catch (error) {
      if (isDatabaseUnavailable(error)) client.discard = true;
      throw error;
    } finally {
      client.release(client.discard === true || readOnly);
    }
    if (readOnly) throw new DatabaseNotWritable('the database answers but does not take writes (a standby, or a read-only session)');
  }

  createDriver(): Driver {
    this.#driver = new PipelinedPostgresDriver(this.pool, this.#sessions, this.#statements);
    return this.#driver;
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
  query(run: NamedStatementRun | OneSyncBatchRun): unknown;
  release(error?: Error | boolean): void;
  connection: { stream: { cork(): void; uncork(): void }; parsedStatements: Record<string, string> };
  /** Set when the connection's named statements no longer match the server: released destroyed. */
  discard?: boolean;
}

/** A COMMIT that PostgreSQL answered with ROLLBACK. */
export class TransactionRolledBack extends Error {
  override name = 'TransactionRolledBack';
}

/**
 * BEGIN, as a named statement: parsed once per connection, then it can travel in a one-Sync batch.
 * READ COMMITTED whatever the database's default: the service's locking is designed for it (a
 * statement issued after a lock is granted sees what the lock's previous holder committed, e.g.
 * the audit chain's head, chain.ts); under REPEATABLE READ the snapshot would predate the wait.
 */
const beginQuery = CompiledQuery.raw('begin isolation level read committed');
const beginStatementName = 'coregate_begin';

class PipelinedConnection implements BatchConnection {
  /** BEGIN asked for and not sent yet: it leaves with the transaction's first statements. */
  #beginPending = false;
  /** BEGIN sent and its answer awaited by every statement after it in the transaction, in order. */
  #begun: Promise<void> | undefined;
  #beginFailed = false;

  constructor(
    readonly client: PipelineClient,
    readonly statements: NamedStatements,
  ) {}

  /**
   * Holds BEGIN back to send it with the transaction's first statements in one pipeline with
   * one Sync: a round trip fewer per transaction, and as safe as awaiting it — if BEGIN fails,
   * the server skips everything after it up to the Sync, so no statement can run outside the
   * transaction. False (BEGIN is then sent at once) until this connection has parsed BEGIN.
   */
  holdBegin(): boolean {
    if (this.client.connection.parsedStatements[beginStatementName] !== beginQuery.sql) return false;
    this.#beginPending = true;
    return true;
  }

  /** True, and the transaction ended, when BEGIN was never sent: there is nothing to commit or roll back. */
  endTransactionIfUnsent(): boolean {
    if (!this.#beginPending) return false;
    this.endTransaction();
    return true;
  }

  endTransaction(): void {
    this.#beginPending = false;
    this.#begun = undefined;
    this.#beginFailed = false;
  }

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (!this.#beginPending && this.#begun === undefined) return send<R>(this.statements, this.client, query);
    return this.executeBatch([query])[0] as Promise<QueryResult<R>>;
  }

  executeBatch(queries: readonly CompiledQuery[]): Array<Promise<QueryResult<unknown>>> {
    if (this.#beginPending) {
      this.#beginPending = false;
      const withBegin = oneSyncBatch(this.statements, this.client, [beginQuery, ...queries]);
      if (withBegin !== undefined) {
        // What is sent before BEGIN's answer arrives waits for it (below): if BEGIN failed, the
        // server skipped only this batch, and a statement sent after it would run on its own.
        this.#awaitBegin(withBegin[0] as Promise<unknown>);
        return withBegin.slice(1);
      }
      // A statement this connection has not parsed yet: BEGIN alone, the statements after its answer.
      this.#awaitBegin(send(this.statements, this.client, beginQuery));
    }
    const begun = this.#begun;
    // A transaction's batch (statement-queue.ts): inside a transaction block, one Sync will do.
    const sendNow = () => oneSyncBatch(this.statements, this.client, queries) ?? sendBatch(this.statements, this.client, queries);
    if (begun === undefined) return sendNow();
    // Every later statement of the transaction goes through the same chain, so they keep their order.
    const sent = begun.then(sendNow);
    return queries.map((_, index) => sent.then((answers) => answers[index] as Promise<QueryResult<unknown>>));
  }

  /** Whether BEGIN failed: there is no transaction to roll back. */
  get beginFailed(): boolean {
    return this.#beginFailed;
  }

  /**
   * COMMIT, checked: PostgreSQL answers the COMMIT of a transaction that a failed statement
   * aborted with ROLLBACK, not with an error, and that must never pass for a commit.
   */
  async commit(): Promise<void> {
    const answer = await (this.#begun ?? Promise.resolve()).then(() => this.client.query('commit', []));
    if (answer.command !== 'COMMIT') throw new TransactionRolledBack(`PostgreSQL answered ${answer.command ?? 'nothing'} to COMMIT: a statement of the transaction had failed, nothing of it was committed`);
  }

  #awaitBegin(answer: Promise<unknown>): void {
    const begun = answer.then(
      () => undefined,
      (error: unknown) => {
        this.#beginFailed = true;
        throw error;
      },
    );
    // Handled: its failure is each chained statement's.
    begun.catch(() => undefined);
    this.#begun = begun;
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming is not supported by coregate\'s PostgreSQL driver');
  }
}

/**
 * Names for the statements of prepared queries (prepared-query.ts), one set per database (its
 * dialect owns it): a named statement is parsed and planned by the server once per connection
 * instead of once per run, which took a third of the server's CPU off a term deposit (measured).
 * Only these few dozen texts are named, so a connection's statements stay bounded; any other
 * query is sent unnamed. The row shapes of the named statements are kept beside their names.
 */
class NamedStatements {
  readonly #names = new Map<string, string>([[beginQuery.sql, beginStatementName]]);
  readonly shapes = new RowShapes();

  nameOf(sql: string): string | undefined {
    let name = this.#names.get(sql);
    if (name === undefined && isPreparedStatementText(sql)) {
      name = `coregate_${this.#names.size + 1}`;
      this.#names.set(sql, name);
    }
    return name;
  }
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
function sendBatch(statements: NamedStatements, client: PipelineClient, queries: readonly CompiledQuery[]): Array<Promise<QueryResult<unknown>>> {
  const { stream } = client.connection;
  stream.cork();
  try {
    return queries.map((query) => {
      try {
        return send<unknown>(statements, client, query);
      } catch (error) {
        return Promise.reject(error);
      }
    });
  } finally {
    stream.uncork();
  }
}

/**
 * The statements of a transaction's batch in one pipeline with one Sync (postgres-batch-run.ts),
 * when they are all named statements this connection has parsed already; else undefined, and
 * they go one by one (the first run of a statement on a connection parses it).
 */
function oneSyncBatch(named: NamedStatements, client: PipelineClient, queries: readonly CompiledQuery[]): Array<Promise<QueryResult<unknown>>> | undefined {
  if (queries.length < 2) return undefined;
  const parsed = client.connection.parsedStatements;
  const names: string[] = [];
  for (const query of queries) {
    const name = named.nameOf(query.sql);
    if (name === undefined || parsed[name] !== query.sql) return undefined;
    names.push(name);
  }
  const answers: Array<Promise<QueryResult<unknown>>> = [];
  const statements: BatchStatement[] = queries.map((query, index) => {
    let statement!: BatchStatement;
    answers.push(
      new Promise<QueryResult<unknown>>((resolve, reject) => {
        statement = {
          name: names[index] as string,
          values: query.parameters,
          resolve: (result) => resolve(queryResultOf(result)),
          reject: (error) => reject(statementFailure(client, error)),
        };
      }),
    );
    return statement;
  });
  let run: OneSyncBatchRun;
  try {
    run = new OneSyncBatchRun(named.shapes, statements);
  } catch {
    // A value pg cannot send: statement by statement, where pg refuses that one alone.
    return undefined;
  }
  client.query(run);
  return answers;
}

function send<R>(statements: NamedStatements, client: PipelineClient, query: CompiledQuery): Promise<QueryResult<R>> {
  const name = statements.nameOf(query.sql);
  const values = [...query.parameters];
  if (name === undefined) return client.query(query.sql, values).then((result) => queryResultOf<R>(result), (error: unknown) => Promise.reject(statementFailure(client, error)));
  return new Promise<QueryResult<R>>((resolve, reject) => {
    client.query(
      new NamedStatementRun(statements.shapes, name, query.sql, values, (error, result) => {
        if (error === null) return resolve(queryResultOf<R>(result));
        reject(statementFailure(client, error));
      }),
    );
  });
}

function queryResultOf<R>({ command, rowCount, rows }: NamedRunResult): QueryResult<R> {
  return {
    numAffectedRows: command === 'INSERT' || command === 'UPDATE' || command === 'DELETE' || command === 'MERGE' ? BigInt(rowCount ?? 0) : undefined,
    rows: (rows ?? []) as R[],
  };
}

/**
 * A statement's failure: a stale named statement, a lost connection or a read-only server
 * discards its connection (released destroyed, the pool makes a new one: to the new primary once
 * the address has moved); the error gets the caller's stack.
 */
function statementFailure(client: PipelineClient, error: unknown): unknown {
  if (staleStatementCodes.has((error as { code?: string }).code ?? '') || isDatabaseUnavailable(error)) client.discard = true;
  return withCallerStack(error);
}

/** The stack of a pipelined answer leads to the socket; give it the caller's instead. */
function withCallerStack(error: unknown): unknown {
  if (error instanceof Error) Error.captureStackTrace(error);
  return error;
}

/** Statements outside transactions sent on one client at most, in one socket write. */
const laneBatchMax = 64;


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

  constructor(
    readonly pool: pg.Pool,
    readonly statements: NamedStatements,
  ) {}

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
    const answers = sendOutsideTransaction(
      this.statements,
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

/**
 * Statements outside any transaction, in one socket write and in the order issued. Each keeps its
 * own Sync (its own implicit transaction: one that fails fails alone), except reads next to each
 * other: they share one Sync, which makes them one implicit read-only transaction — one
 * snapshot, taken after every one of their requests arrived — and spares PostgreSQL an answer
 * and a flush per read. A read the server skipped because another read of its group failed is
 * sent again alone, so a read still fails only for its own reason.
 */
function sendOutsideTransaction(statements: NamedStatements, client: PipelineClient, queries: readonly CompiledQuery[]): Array<Promise<QueryResult<unknown>>> {
  if (queries.length < 2) return sendBatch(statements, client, queries);
  const { stream } = client.connection;
  const answers: Array<Promise<QueryResult<unknown>>> = [];
  let reads: CompiledQuery[] = [];
  const sendReads = () => {
    const group = reads;
    reads = [];
    const together = oneSyncBatch(statements, client, group);
    if (together === undefined) {
      answers.push(...sendBatch(statements, client, group));
      return;
    }
    together.forEach((answer, index) =>
      answers.push(
        answer.catch((error: unknown) => {
          if (error instanceof NotRunInBatch) return send<unknown>(statements, client, group[index] as CompiledQuery);
          throw error;
        }),
      ),
    );
  };
  stream.cork();
  try {
    for (const query of queries) {
      if (query.query.kind === 'SelectQueryNode') {
        reads.push(query);
        continue;
      }
      if (reads.length > 0) sendReads();
      answers.push(...sendBatch(statements, client, [query]));
    }
    if (reads.length > 0) sendReads();
  } finally {
    stream.uncork();
  }
  return answers;
}

/**
 * The pool's connected clients until each has closed its socket. pg-pool's end() answers once
 * every client was asked to end, not once it has: a store closed that way still shows its
 * sessions on the server for a moment (a refused start would leave them behind its error).
 */
class ServerSessions {
  readonly #open = new Set<pg.Client>();

  constructor(pool: pg.Pool) {
    pool.on('connect', (client) => {
      this.#open.add(client);
      client.once('end', () => this.#open.delete(client));
      // A client in use has no listener of the pool's (pg-pool listens to idle clients only): a
      // connection cut under load emitted an 'error' nobody heard, and that ended the process
      // (issue 24). Heard here for the client's whole life; its queries fail with the error, and
      // it is released destroyed, so the pool connects anew.
      client.on('error', () => {
        (client as unknown as PipelineClient).discard = true;
      });
    });
  }

  /** Answers once every client connected so far has ended (the server closed its side first). */
  async ended(): Promise<void> {
    await Promise.all([...this.#open].map((client) => new Promise((resolve) => client.once('end', resolve))));
  }
}

class PipelinedPostgresDriver implements Driver {
  readonly #pool: pg.Pool;
  readonly #sessions: ServerSessions;
  readonly #statements: NamedStatements;
  /** The connection object of each pooled client (it keeps the client's transaction state), for the client's life. */
  readonly #connections = new WeakMap<object, PipelinedConnection>();

  constructor(pool: pg.Pool, sessions: ServerSessions, statements: NamedStatements) {
    this.#pool = pool;
    this.#sessions = sessions;
    this.#statements = statements;
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    const client = (await this.#pool.connect()) as unknown as PipelineClient;
    let connection = this.#connections.get(client);
    if (connection === undefined) {
      connection = new PipelinedConnection(client, this.#statements);
      this.#connections.set(client, connection);
    }
    return connection;
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    if ((connection as PipelinedConnection).holdBegin()) return;
    // Awaited (the first time on a connection, which parses it): a statement sent behind a BEGIN
    // that failed, each with its own Sync, would run outside any transaction.
    await connection.executeQuery(beginQuery);
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const pipelined = connection as PipelinedConnection;
    // Nothing was sent, not even BEGIN: there is nothing to commit.
    if (pipelined.endTransactionIfUnsent()) return;
    try {
      await pipelined.commit();
    } finally {
      pipelined.endTransaction();
    }
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const pipelined = connection as PipelinedConnection;
    try {
      // BEGIN never sent, or failed: there is no transaction to roll back.
      if (pipelined.endTransactionIfUnsent() || pipelined.beginFailed) return;
      await pipelined.executeQuery(CompiledQuery.raw('rollback'));
    } finally {
      pipelined.endTransaction();
    }
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
    await this.#sessions.ended();
  }
}

