/**
 * One transaction of a store's database, as the code that runs in it sees it: a Kysely
 * `Transaction` (every builder works on it as usual) that also holds the transaction's own
 * engine state — its statement queue (statement-queue.ts: prepared queries issued together
 * travel together) and its deferred writes. The state lives and dies with this object: nothing
 * is looked up in a registry, and a statement issued on an ended unit of work is refused.
 */
import { Transaction, type CompiledQuery, type KyselyProps, type QueryResult } from 'kysely';
import { StatementQueue } from './statement-queue.js';

/** A driver's connection whose transactions can commit without syncing them to disk (database.ts `synced`). */
export interface UnsyncedCommit {
  /** Called before BEGIN: the transaction about to begin need not be synced when it commits; the next one is, unless told the same. */
  commitWithoutSync(): void;
}

export class UnitOfWork<DB> extends Transaction<DB> {
  readonly #queue: StatementQueue;

  constructor(props: KyselyProps, queue: StatementQueue) {
    super(props);
    this.#queue = queue;
  }

  /**
   * Opens a unit of work on the transaction `trx` (Kysely's, which begins, commits and rolls
   * back) and runs `work` in it; the queue is closed when `work` ends, once every deferred write
   * has answered (a failed one fails the unit of work, which then rolls back).
   */
  static async within<DB, T>(trx: Transaction<DB>, props: Omit<KyselyProps, 'executor'>, work: (unit: UnitOfWork<DB>) => Promise<T>): Promise<T> {
    const executor = trx.getExecutor();
    const connection = await executor.provideConnection(async (held) => held);
    const queue = new StatementQueue(connection);
    const unit = new UnitOfWork<DB>({ ...props, executor }, queue);
    return queue.runBody(() => work(unit));
  }

  /** A compiled statement of this unit of work, through its queue (prepared-query.ts). */
  run<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    return this.#queue.run<R>(query);
  }

  /**
   * A write whose answer its caller does not read: on PostgreSQL it is issued now and answers at
   * once, and the unit of work waits for it before committing (statement-queue.ts); on SQLite,
   * where a statement is a call, it is simply run.
   */
  deferWrite(write: () => Promise<void>): Promise<void> {
    if (!this.#queue.batches) return write();
    this.#queue.defer(write());
    return Promise.resolve();
  }
}

/** `write` deferred in the unit of work `db` (above), or run at once on anything else (a plain transaction, the root). */
export function deferWrite(db: object, write: () => Promise<void>): Promise<void> {
  return db instanceof UnitOfWork ? db.deferWrite(write) : write();
}
