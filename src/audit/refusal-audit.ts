/**
 * Audit records of refused requests (CONTRACT §8), written in batches. A refusal has no business
 * transaction to join, and writing each one on its own cost a commit per refused request (on
 * PostgreSQL a round trip and a WAL flush each): 400s were slower than whole deposits. Refusals
 * that arrive together are written by one multi-row insert in one commit, and each is answered
 * only once that commit is durable, as before.
 */
import type { Store } from '../store/connect.js';
import { auditRowsPerStatementMax, insertAuditEntries, type AuditEntry } from '../store/audit.js';
import { insertAuditEntriesChainedIfCaughtUp, type AuditChainer } from './chain.js';

interface Waiting {
  entry: AuditEntry;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/** Records waiting for the next batch at most; past it a caller is refused at once (back-pressure). */
export const refusalAuditQueueMax = 10_000;
/**
 * Batches being written at once. More than one: a batch need not wait for the previous one's
 * commit (on SQLite they share the next commit group with the business transactions and the
 * chainer; on PostgreSQL they use connections of the pool side by side).
 */
export const refusalAuditBatchesInFlightMax = 4;

export class RefusalAudit {
  readonly #store: Store;
  readonly #chainer: AuditChainer;
  #queue: Waiting[] = [];
  #inFlight = 0;
  #scheduled = false;

  constructor(store: Store, chainer: AuditChainer) {
    this.#store = store;
    this.#chainer = chainer;
  }

  /** Resolves once the record is committed (durable); the chain is extended soon after. */
  record(entry: AuditEntry): Promise<void> {
    if (this.#queue.length >= refusalAuditQueueMax) return Promise.reject(new Error(`more than ${refusalAuditQueueMax} refusal audit records are waiting to be written`));
    return new Promise<void>((resolve, reject) => {
      this.#queue.push({ entry, resolve, reject });
      this.#schedule();
    });
  }

  #schedule(): void {
    if (this.#inFlight >= refusalAuditBatchesInFlightMax || this.#scheduled || this.#queue.length === 0) return;
    this.#scheduled = true;
    // The rest of this turn of the event loop joins the batch: requests read together, written together.
    setImmediate(() => {
      this.#scheduled = false;
      void this.#write();
    });
  }

  async #write(): Promise<void> {
    this.#inFlight += 1;
    const batch = this.#queue.splice(0, auditRowsPerStatementMax);
    try {
      const entries = batch.map((waiting) => waiting.entry);
      // On SQLite the batch's transaction holds the one write lock: its records are chained as they are written.
      const chained =
        this.#store.dialect === 'sqlite'
          ? await this.#store.transaction((trx) => insertAuditEntriesChainedIfCaughtUp(trx, entries))
          : (await insertAuditEntries(this.#store.db, entries), false);
      for (const waiting of batch) waiting.resolve();
      if (!chained) this.#chainer.schedule();
    } catch (error) {
      for (const waiting of batch) waiting.reject(error);
    } finally {
      this.#inFlight -= 1;
      this.#schedule();
    }
  }
}
