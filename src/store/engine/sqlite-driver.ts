/**
 * Kysely's driver for the embedded store, in place of Kysely's own SqliteDriver, for one reason
 * measured under load:
 *
 * - **Reads beside the writer.** Kysely's driver has one connection behind one mutex, so a read
 *   outside a transaction (a retrieve, a snapshot refresh) waited for a whole commit group to
 *   finish. Here reads outside a transaction run at once on a second, read-only connection: in
 *   WAL mode it reads the last commit and never sees a transaction in progress.
 *
 * Write transactions take the write lock in order (FIFO) and `begin immediate`: every
 * transaction coregate runs writes, so it takes SQLite's write lock at once (with several
 * processes on one file, a transaction that read first could fail on a stale snapshot instead
 * of waiting its turn). A write outside a transaction (autocommit) takes the same lock.
 */
import {
  CompiledQuery,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  type DatabaseConnection,
  type DatabaseIntrospector,
  type DialectAdapter,
  type Driver,
  type Kysely,
  type QueryCompiler,
  type QueryResult,
} from 'kysely';
import type { CachedStatement, RowMaker, StatementSource } from './statement-cache.js';
import type { EngineDialect } from './root-queries.js';
import { compileRowLiteral } from './row-literal.js';
import { runSavepointCommand } from './savepoint-command.js';
import type { UnsyncedCommit } from './unit-of-work.js';
import { waitForFileLock } from './wait-for-file-lock.js';

export interface DurableSqliteConfig {
  /** The connection that writes, and reads inside transactions. */
  writer: StatementSource;
  /** A read-only connection to the same file for reads outside transactions; without it (an in-memory database) they queue for the writer. */
  reader?: StatementSource;
  /**
   * How long a write waits for another connection's write lock on the file before it fails
   * (SQLITE_BUSY), waiting on timers (wait-for-file-lock.ts): the writer's connection has no busy time-out of its own.
   */
  fileLockWaitMs: number;
}

export class DurableSqliteDialect implements EngineDialect {
  #driver: DurableSqliteDriver | undefined;

  constructor(readonly config: DurableSqliteConfig) {}

  createDriver(): Driver {
    this.#driver = new DurableSqliteDriver(this.config);
    return this.#driver;
  }

  get driver(): Driver {
    if (this.#driver === undefined) throw new Error('the SQLite dialect has no driver yet');
    return this.#driver;
  }

  /** A statement outside any transaction, without Kysely's executor (root-queries.ts). */
  runOutsideTransaction<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (this.#driver === undefined) return Promise.reject(new Error('the SQLite dialect has no driver yet'));
    return this.#driver.executeOutsideTransaction<R>(query);
  }

  /** Runs `work` while no write transaction is open and none starts (the WAL checkpointer's restart). */
  whileWritersWait(work: () => Promise<void>): Promise<void> {
    if (this.#driver === undefined) return Promise.reject(new Error('the SQLite dialect has no driver yet'));
    return this.#driver.whileWritersWait(work);
  }

  createQueryCompiler(): QueryCompiler {
    return new SqliteQueryCompiler();
  }

  createAdapter(): DialectAdapter {
    return new SqliteAdapter();
  }

  createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new SqliteIntrospector(db);
  }
}

/** A caller's use of the store: inside a write transaction, or statement by statement. */
class Session implements DatabaseConnection, UnsyncedCommit {
  inTransaction = false;
  /** The next transaction's commit writes the log without syncing it (database.ts `synced`). */
  unsynced = false;

  commitWithoutSync(): void {
    if (!this.inTransaction) this.unsynced = true;
  }

  constructor(readonly driver: DurableSqliteDriver) {}

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    return this.driver.execute<R>(this, query);
  }

  async *streamQuery<R>(query: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
    // Rows are read in one go and yielded one at a time: an open iterator would hold the connection.
    const { rows } = await this.driver.execute<R>(this, query);
    for (const row of rows) yield { rows: [row] };
  }
}

/** First come, first served; `tryLock` takes a free lock without a promise. */
class WriteLock {
  #held = false;
  readonly #queue: Array<() => void> = [];

  tryLock(): boolean {
    if (this.#held) return false;
    this.#held = true;
    return true;
  }

  lock(): Promise<void> {
    if (this.tryLock()) return Promise.resolve();
    return new Promise((resolve) => this.#queue.push(resolve));
  }

  unlock(): void {
    const next = this.#queue.shift();
    if (next) next();
    else this.#held = false;
  }
}

class DurableSqliteDriver implements Driver {
  readonly #writer: StatementSource;
  readonly #reader: StatementSource | undefined;
  readonly #fileLockWaitMs: number;
  readonly #lock = new WriteLock();
  /** synchronous=FULL still to restore after an unsynced transaction (see #endUnsynced). */
  #fullPending = false;
  /** The session of statements run outside any transaction (root-queries.ts). */
  readonly #outside = new Session(this);

  constructor(config: DurableSqliteConfig) {
    this.#writer = config.writer;
    this.#reader = config.reader;
    this.#fileLockWaitMs = config.fileLockWaitMs;
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    return new Session(this);
  }

  async releaseConnection(): Promise<void> {}

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    const session = connection as Session;
    await this.#lock.lock();
    try {
      // synchronous=NORMAL for this transaction alone (WAL: its commit writes the log without
      // syncing it; a checkpoint still syncs the log first), FULL again when it ends, before the
      // write lock passes on: the next synced commit syncs the log, these frames with it.
      this.#restoreFull();
      if (this.#fullPending) throw new Error('the SQLite writer could not return to synchronous=FULL');
      if (session.unsynced) this.#writer.prepare('pragma synchronous = NORMAL').statement.run();
      const begin = this.#writer.prepare('begin immediate').statement;
      await waitForFileLock(() => begin.run(), this.#fileLockWaitMs);
      session.inTransaction = true;
    } catch (error) {
      this.#endUnsynced(session);
      this.#lock.unlock();
      throw error;
    }
  }

  /**
   * Back to synchronous=FULL after an unsynced transaction (outside any transaction: SQLite's
   * rule). Should that fail (a rollback that failed left a transaction open), the next write
   * restores it before it runs, or fails: no synced write ever runs under NORMAL.
   */
  #endUnsynced(session: Session): void {
    if (!session.unsynced) return;
    session.unsynced = false;
    this.#fullPending = true;
    this.#restoreFull();
  }

  #restoreFull(): void {
    if (!this.#fullPending) return;
    try {
      this.#writer.prepare('pragma synchronous = FULL').statement.run();
      this.#fullPending = false;
    } catch {
      // Still pending: the next write tries again, and fails if it cannot.
    }
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const session = connection as Session;
    // A failed commit leaves the transaction open: Kysely then rolls it back (below).
    this.#writer.prepare('commit').statement.run();
    session.inTransaction = false;
    this.#endUnsynced(session);
    this.#lock.unlock();
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const session = connection as Session;
    if (!session.inTransaction) return;
    try {
      this.#writer.prepare('rollback').statement.run();
    } catch (error) {
      // SQLite rolled back on its own already (some errors end the transaction).
      if (!/no transaction is active/.test((error as Error).message)) throw error;
    } finally {
      session.inTransaction = false;
      this.#endUnsynced(session);
      this.#lock.unlock();
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

  async destroy(): Promise<void> {
    this.#reader?.close();
    this.#writer.close();
  }

  executeOutsideTransaction<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    return this.execute<R>(this.#outside, query);
  }

  /** Takes the write lock in turn (the event loop goes on meanwhile), runs `work`, lets the next writer in. */
  async whileWritersWait(work: () => Promise<void>): Promise<void> {
    await this.#lock.lock();
    try {
      await work();
    } finally {
      this.#lock.unlock();
    }
  }

  execute<R>(session: Session, query: CompiledQuery): Promise<QueryResult<R>> {
    if (session.inTransaction) return Promise.resolve(run<R>(this.#writer.prepare(query.sql), query.parameters));
    // Pragmas are settings of a connection: they are the writer's, whatever they read.
    if (this.#reader && !isPragma(query.sql)) {
      const statement = this.#reader.prepare(query.sql);
      if (statement.statement.readonly) return Promise.resolve(run<R>(statement, query.parameters));
    }
    // A write outside a transaction (or, without a reader, any statement): its own commit.
    if (this.#lock.tryLock()) return this.#autocommit<R>(query);
    return this.#lock.lock().then(() => this.#autocommit<R>(query));
  }

  #autocommit<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    let answer: QueryResult<R> | Promise<QueryResult<R>>;
    try {
      this.#restoreFull();
      if (this.#fullPending) throw new Error('the SQLite writer could not return to synchronous=FULL');
      const statement = this.#writer.prepare(query.sql);
      answer = waitForFileLock(() => run<R>(statement, query.parameters), this.#fileLockWaitMs);
    } catch (error) {
      this.#lock.unlock();
      return Promise.reject(error);
    }
    if (!(answer instanceof Promise)) {
      this.#lock.unlock();
      return Promise.resolve(answer);
    }
    // Another connection holds the file's write lock: this one's next writer waits for the retry.
    return answer.finally(() => this.#lock.unlock());
  }

}

function isPragma(sql: string): boolean {
  // The first character decides for every statement but pragmas: no regular expression per statement.
  const first = sql.charCodeAt(0);
  if (first !== 0x70 && first !== 0x50 && first > 0x20) return false;
  return /^\s*pragma\b/i.test(sql);
}

/**
 * A statement's rows as objects. better-sqlite3 builds each row object in C++, a property at a
 * time by name (each name made and looked up anew): a tenth of a retrieve's CPU. Rows are read
 * as arrays instead and made into objects by a function compiled once per statement
 * (row-literal.ts), kept with the statement in its connection's cache (statement-cache.ts).
 */
function rowMakerOf(cached: CachedStatement): RowMaker | null {
  if (cached.rowMaker === undefined) {
    const { statement } = cached;
    const names = statement.columns().map((column) => column.name);
    const make = compileRowLiteral<RowMaker['make']>(names, ['values'], (index) => `values[${index}]`);
    cached.rowMaker = make === undefined ? null : { columnsCount: names.length, make };
    if (cached.rowMaker !== null) statement.raw(true);
  }
  return cached.rowMaker;
}

function run<R>(cached: CachedStatement, parameters: readonly unknown[]): QueryResult<R> {
  const { statement } = cached;
  if (statement.reader) {
    const maker = rowMakerOf(cached);
    if (maker === null) return { rows: statement.all(parameters) as R[] };
    const values = statement.all(parameters) as unknown[][];
    if (values.length > 0 && (values[0] as unknown[]).length !== maker.columnsCount) {
      // The table changed under the statement (SQLite re-prepared it): make its maker again.
      cached.rowMaker = undefined;
      statement.raw(false);
      return run<R>(cached, parameters);
    }
    const rows = new Array<R>(values.length);
    for (let index = 0; index < values.length; index++) rows[index] = maker.make(values[index] as unknown[]) as R;
    return { rows };
  }
  const { changes, lastInsertRowid } = statement.run(parameters);
  return {
    numAffectedRows: BigInt(changes),
    insertId: BigInt(lastInsertRowid),
    rows: [],
  };
}
