/**
 * Audit records of refused requests (docs/api.md, "Audit"), written in batches. A refusal has no
 * business transaction to join, and writing each one on its own cost a commit per refused request
 * (on PostgreSQL a round trip and a WAL flush each): 400s were slower than whole deposits. Refusals
 * that arrive together are written by one multi-row insert in one commit, and each is answered only
 * once that commit is durable, as before. The batch's transaction takes the chain's lock and links
 * its records into the hash chain as it inserts them, when no earlier record waits for the chainer
 * (chain.ts): otherwise every refused record would be written twice, inserted and then updated with
 * its link.
 *
 * While the database is unreachable a batch's write fails as an outage (database-unavailable.ts):
 * its records go to the audit spool (audit-spool.ts) instead, durably on local disk, and its
 * callers are answered once they are kept there. While the spool holds records, new ones go there
 * too, after them, until its drain (audit-spool-drain.ts) has appended them all to the audit table:
 * a process's records reach the chain in the order it kept them (docs/api.md "Audit"); records of
 * several processes, or a batch still committing beside one being spooled, may interleave otherwise.
 */
import type { Store } from '../store/connect.js';
import { auditRowsPerStatementMax, insertAuditEntries, type AuditEntry } from '../store/audit.js';
import { isDatabaseUnavailable } from '../store/engine/database-unavailable.js';
import { AuditSpoolFull, type AuditSpool } from './audit-spool.js';
import { AuditUnavailable, type AuditLossReason } from './audit-unavailable.js';
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


export interface RefusalAuditOptions {
  lockTimeoutMs?: number;
  /** Where records go while the database is unreachable; without one, such a record is lost (and logged by the caller). */
  spool?: AuditSpool | undefined;
  /** Told of every record that could not be kept, neither in the database nor in the spool. */
  onLost?: (reason: AuditLossReason) => void;
}

export class RefusalAudit {
  readonly #store: Store;
  readonly #chainer: AuditChainer;
  #queue: Waiting[] = [];
  readonly #lockTimeoutMs: number;
  readonly #spool: AuditSpool | undefined;
  readonly #onLost: (reason: AuditLossReason) => void;
  #inFlight = 0;
  #scheduled = false;
  /** Batches being written and records going straight to the spool, for idle(): one entry per batch, not per record. */
  readonly #writes = new Set<Promise<unknown>>();

  constructor(store: Store, chainer: AuditChainer, options: RefusalAuditOptions = {}) {
    this.#store = store;
    this.#chainer = chainer;
    this.#lockTimeoutMs = options.lockTimeoutMs ?? chainLockTimeoutMs;
    this.#spool = options.spool;
    this.#onLost = options.onLost ?? (() => {});
  }

  /**
   * Resolves once the record is durable: committed (chained in that commit when nothing waits for
   * the chainer, else soon after), or kept in the spool during an outage. Rejects when it is lost.
   */
  record(entry: AuditEntry): Promise<void> {
    // Behind the records the spool holds, never ahead of them.
    if (this.#spool?.holdsRecords) return this.#track(this.#keep([entry]));
    if (this.#queue.length >= refusalAuditQueueMax) {
      this.#onLost('write_failed');
      return Promise.reject(new AuditUnavailable(`more than ${refusalAuditQueueMax} refusal audit records are waiting to be written`));
    }
    return new Promise<void>((resolve, reject) => {
      this.#queue.push({ entry, resolve, reject });
      this.#schedule();
    });
  }

  /** Resolves when every record handed in so far is written, kept in the spool, or lost (shutdown, tests). */
  async idle(): Promise<void> {
    while (this.#queue.length > 0 || this.#writes.size > 0) {
      // Records queued and no batch started yet: the batch starts on the next turn of the event loop.
      if (this.#writes.size === 0) await new Promise((resolve) => setImmediate(resolve));
      else await Promise.allSettled([...this.#writes]);
    }
  }

  #track<T>(write: Promise<T>): Promise<T> {
    this.#writes.add(write);
    const forget = () => this.#writes.delete(write);
    write.then(forget, forget);
    return write;
  }

  /** Into the spool; a record it cannot keep is lost, and counted. */
  async #keep(entries: readonly AuditEntry[]): Promise<void> {
    const spool = this.#spool;
    if (spool === undefined) throw new Error('no audit spool');
    try {
      await spool.keep(entries);
    } catch (error) {
      for (let lost = 0; lost < entries.length; lost += 1) this.#onLost(error instanceof AuditSpoolFull ? 'spool_full' : 'spool_failed');
      throw error instanceof AuditUnavailable ? error : new AuditUnavailable(`the audit spool could not keep the record: ${(error as Error).message}`, { cause: error });
    }
  }

  #schedule(): void {
    if (this.#inFlight >= refusalAuditBatchesInFlightMax || this.#scheduled || this.#queue.length === 0) return;
    // Until the batch is taken, later refusals join it rather than start batches of their own.
    this.#scheduled = true;
    // The rest of this turn of the event loop joins the batch: requests read together, written together.
    setImmediate(() => void this.#track(this.#write()));
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
    if (this.#spool?.holdsRecords) {
      // The spool filled meanwhile (another batch met the outage): these go behind its records.
      await this.#spoolBatch(take(), batch ?? []);
      return;
    }
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
      const failed = batch ?? this.#take();
      if (this.#spool !== undefined && isDatabaseUnavailable(error)) {
        // An outage: the records are kept on local disk and appended once the database is back.
        // (A commit whose answer the outage lost may have stored them: the drain inserts each id once.)
        await this.#spoolBatch(failed.map((waiting) => waiting.entry), failed, false);
        return;
      }
      for (let lost = 0; lost < failed.length; lost += 1) this.#onLost('write_failed');
      for (const waiting of failed) waiting.reject(error);
    } finally {
      this.#inFlight -= 1;
      this.#schedule();
    }
  }

  /** A batch into the spool; each caller answered when it is kept (or lost). */
  async #spoolBatch(entries: readonly AuditEntry[], batch: readonly Waiting[], release = true): Promise<void> {
    try {
      await this.#keep(entries);
      for (const waiting of batch) waiting.resolve();
    } catch (error) {
      for (const waiting of batch) waiting.reject(error);
    } finally {
      if (release) {
        this.#inFlight -= 1;
        this.#schedule();
      }
    }
  }
}
