/**
 * Audit records of refused requests (CONTRACT §8), written in batches. A refusal has no business
 * transaction to join, and writing each one on its own cost a commit per refused request (on
 * PostgreSQL a round trip and a WAL flush each): 400s were slower than whole deposits. Refusals
 * that arrive together are written by one multi-row insert in one commit, and each is answered
 * only once that commit is durable, as before. The batch's transaction takes the chain's lock and
 * links its records into the hash chain as it inserts them, when no earlier record waits for the
 * chainer (chain.ts): otherwise every refused record would be written twice, inserted and then
 * updated with its link.
 */
import type { Store } from '../store/connect.js';
import { auditRowsPerStatementMax, insertAuditEntries, type AuditEntry } from '../store/audit.js';
import { chainLockTimeoutMs, insertAuditEntriesChained, isChainLockTimeout, type AuditChainer } from './chain.js';

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
 * chainer). On PostgreSQL a batch begins and waits for the chain's lock, and the next batch is
 * started once it has taken its records, so that at most one of an instance's batches waits for
 * the lock while the others finish their writes and commits.
 */
export const refusalAuditBatchesInFlightMax = 4;

export class RefusalAudit {
  readonly #store: Store;
  readonly #chainer: AuditChainer;
  #queue: Waiting[] = [];
  readonly #lockTimeoutMs: number;
  #inFlight = 0;
  #scheduled = false;

  constructor(store: Store, chainer: AuditChainer, options: { lockTimeoutMs?: number } = {}) {
    this.#store = store;
    this.#chainer = chainer;
    this.#lockTimeoutMs = options.lockTimeoutMs ?? chainLockTimeoutMs;
  }

  /** Resolves once the record is committed (durable); chained in that commit when nothing waits for the chainer, else soon after. */
  record(entry: AuditEntry): Promise<void> {
    if (this.#queue.length >= refusalAuditQueueMax) return Promise.reject(new Error(`more than ${refusalAuditQueueMax} refusal audit records are waiting to be written`));
    return new Promise<void>((resolve, reject) => {
      this.#queue.push({ entry, resolve, reject });
      this.#schedule();
    });
  }

  #schedule(): void {
    if (this.#inFlight >= refusalAuditBatchesInFlightMax || this.#scheduled || this.#queue.length === 0) return;
    // Until the batch is taken, later refusals join it rather than start batches of their own.
    this.#scheduled = true;
    // The rest of this turn of the event loop joins the batch: requests read together, written together.
    setImmediate(() => void this.#write());
  }

  /** The waiting records, taken when their write starts: whoever arrived until then is in it. */
  #take(): Waiting[] {
    this.#scheduled = false;
    const batch = this.#queue.splice(0, auditRowsPerStatementMax);
    this.#schedule();
    return batch;
  }

  async #write(): Promise<void> {
    this.#inFlight += 1;
    let batch: Waiting[] | undefined;
    const take = () => {
      batch = this.#take();
      return batch.map((waiting) => waiting.entry);
    };
    try {
      let chained: boolean;
      try {
        chained = await this.#store.transaction((trx) => insertAuditEntriesChained(this.#store, trx, take, this.#lockTimeoutMs));
      } catch (error) {
        if (batch !== undefined || !isChainLockTimeout(error)) throw error;
        // The chain's lock is held past its time-out (a hung instance): written unchained, for the chainer.
        await insertAuditEntries(this.#store.db, take());
        chained = false;
      }
      for (const waiting of batch ?? []) waiting.resolve();
      if (!chained) this.#chainer.schedule();
    } catch (error) {
      // A store that refuses before the unit of work began (a failed log sync) refuses the waiting records too.
      for (const waiting of batch ?? this.#take()) waiting.reject(error);
    } finally {
      this.#inFlight -= 1;
      this.#schedule();
    }
  }
}
