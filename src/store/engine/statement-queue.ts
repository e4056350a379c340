/**
 * The statements of one transaction that are issued together go to the database together.
 * Kysely runs a transaction's statements one at a time, each waiting for the one before; with
 * PostgreSQL that is a round trip each. Prepared queries (prepared-query.ts) issued on a
 * transaction go through its queue instead: those issued in the same turn of the event loop
 * (independent statements started together, e.g. with Promise.all) leave in one batch, one
 * round trip (postgres-driver.ts). On SQLite, where a statement is a function call, the queue
 * runs each at once, without Kysely's layers. Either way statements run in the order issued.
 *
 * Writes whose answer nothing reads (`deferWrite`) may be deferred on PostgreSQL: the caller goes
 * on at once, so the statements it issues next (a deposit's settlement after the core's writes)
 * leave in the same round trip, and the unit of work waits for every deferred write before it
 * commits. A deferred write that failed fails the unit of work, which then rolls back, with that
 * failure (the first in statement order) as its error.
 */
import type { CompiledQuery, DatabaseConnection, QueryResult } from 'kysely';
import { NotRunInBatch } from './not-run-in-batch.js';
import { isBatchConnection, type BatchConnection, type PendingStatement as Pending } from './batch-connection.js';

/** The queue of one unit of work (unit-of-work.ts), which holds it for the transaction's life. */
export class StatementQueue {
  #pending: Pending[] = [];
  #scheduled = false;
  #open = true;
  /** Deferred writes, each answering its failure or undefined. */
  #deferred: Array<Promise<{ error: unknown } | undefined>> = [];

  constructor(readonly connection: DatabaseConnection) {}

  /** Whether statements travel in batches (PostgreSQL), where deferring a write saves a round trip. */
  get batches(): boolean {
    return isBatchConnection(this.connection);
  }

  defer(write: Promise<void>): void {
    this.#deferred.push(write.then(() => undefined, (error: unknown) => ({ error })));
  }

  /**
   * Waits for every deferred write, those deferred while it waits included; answers the first
   * failure in the order issued — a write's own before one that did not run because an earlier
   * statement of its batch failed (that statement's error is its caller's, or another write's).
   */
  async deferredFailure(): Promise<{ error: unknown } | undefined> {
    let waited = 0;
    let outcomes: Array<{ error: unknown } | undefined> = [];
    while (waited < this.#deferred.length) {
      waited = this.#deferred.length;
      outcomes = await Promise.all(this.#deferred);
    }
    const failures = outcomes.filter((outcome) => outcome !== undefined);
    return failures.find((failure) => !(failure.error instanceof NotRunInBatch)) ?? failures[0];
  }

  run<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (!this.#open) return Promise.reject(new Error('the transaction of this statement has ended'));
    const { connection } = this;
    if (!isBatchConnection(connection)) return connection.executeQuery<R>(query);
    return new Promise<QueryResult<R>>((resolve, reject) => {
      this.#pending.push({ query, resolve: resolve as (result: QueryResult<unknown>) => void, reject });
      if (this.#scheduled) return;
      this.#scheduled = true;
      // After the microtasks of this turn: every statement started together joins the batch.
      process.nextTick(() => this.#send(connection));
    });
  }

  /**
   * Runs `body`, the unit of work's, and closes the queue when it ends, once every deferred write
   * has answered: a failed one is the unit of work's failure.
   */
  async runBody<T>(body: () => Promise<T>): Promise<T> {
    try {
      let value: T;
      try {
        value = await body();
      } catch (error) {
        // A deferred write that failed came first (the statements after it failed because of it),
        // unless it only did not run: then the body's error is the cause.
        const failed = await this.deferredFailure();
        throw failed !== undefined && !(failed.error instanceof NotRunInBatch) ? failed.error : error;
      }
      const failed = await this.deferredFailure();
      if (failed !== undefined) throw failed.error;
      return value;
    } finally {
      this.close();
    }
  }

  close(): void {
    this.#open = false;
  }

  #send(connection: BatchConnection): void {
    this.#scheduled = false;
    const batch = this.#pending;
    this.#pending = [];
    if (!this.#open) {
      // The unit of work ended (it failed) before these left: never send them on a connection
      // that may be rolled back, or back in the pool and serving another transaction.
      for (const pending of batch) pending.reject(new Error('the transaction of this statement ended before it was sent'));
      return;
    }
    const answers = connection.executeBatch(batch.map((pending) => pending.query));
    answers.forEach((answer, index) => {
      const pending = batch[index] as Pending;
      answer.then(pending.resolve, pending.reject);
    });
  }
}
