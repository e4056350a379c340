/**
 * The statements of one transaction that are issued together go to the database together.
 * Kysely runs a transaction's statements one at a time, each waiting for the one before; with
 * PostgreSQL that is a round trip each. Prepared queries (prepared-query.ts) issued on a
 * transaction go through its queue instead: those issued in the same turn of the event loop
 * (independent statements started together, e.g. with Promise.all) leave in one batch, one
 * round trip (postgres-driver.ts). On SQLite, where a statement is a function call, the queue
 * runs each at once, without Kysely's layers. Either way statements run in the order issued.
 */
import type { CompiledQuery, DatabaseConnection, QueryResult } from 'kysely';
import { isBatchConnection, type BatchConnection, type PendingStatement as Pending } from './postgres-driver.js';
import type { Queryable } from './realms.js';

class StatementQueue {
  #pending: Pending[] = [];
  #scheduled = false;
  #open = true;

  constructor(readonly connection: DatabaseConnection) {}

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

const queues = new WeakMap<object, StatementQueue>();

/** The queue of a transaction opened by `withStatementQueue`; undefined for anything else. */
export function statementQueueOf(db: object): Pick<StatementQueue, 'run'> | undefined {
  return queues.get(db);
}

/** Runs `body` with a statement queue for the transaction `trx`, closed when `body` ends. */
export async function withStatementQueue<T>(trx: Pick<Queryable, 'getExecutor'>, body: () => Promise<T>): Promise<T> {
  const connection = await trx.getExecutor().provideConnection(async (held) => held);
  const queue = new StatementQueue(connection);
  queues.set(trx, queue);
  try {
    return await body();
  } finally {
    queue.close();
    queues.delete(trx);
  }
}
