/**
 * The audit trail's hash chain (docs/api.md, "Audit"). Records are inserted, unchained, inside the
 * business transactions; the chain is extended just after commit by one chainer at a time (an
 * advisory lock on PostgreSQL), which gives each record its position (chain_seq) and its hash:
 * SHA-256(previous hash + canonical JSON of the record). Chaining inside every business transaction
 * would serialize them all on the chain's head. Batches of refusals, which have no business
 * transaction, take the chain's lock and are chained as they are inserted.
 */
import { hash as oneShotHash } from 'node:crypto';
import { sql } from 'kysely';
import { preparedQuery } from '../store/prepared.js';
import { canonicalJsonOfFields } from '../core/canonical-json.js';
import { sleep, type Clock } from '../core/clock.js';
import type { Store } from '../store/connect.js';
import { getSetting, putSetting } from '../store/settings.js';
import {
  countUnchained,
  hasUnchained,
  insertAuditEntries,
  lastChained,
  listChained,
  listUnchained,
  setChainLinks,
  storedAuditEntry,
  type AuditEntry,
  type ChainedAuditEntry,
  type ChainLink,
} from '../store/audit.js';
import type { Queryable } from '../store/queryable.js';

export const genesisHash = '0'.repeat(64);
/** Records chained per transaction: bounds the chainer's lock time. */
const chainBatchMax = 500;
const auditLockId = 0x61756474; // "audt"
const chainHeadSetting = 'audit.chain_head';

/**
 * Whoever extends the chain holds this lock until its transaction ends. On PostgreSQL an advisory
 * lock shared by every instance, waited for (a try-lock lost would leave records unchained until
 * the next run, or make a refusal batch leave its records to the chainer: written twice). The
 * statements issued after it in the transaction read what the previous holder committed: under
 * READ COMMITTED each statement takes its snapshot when it starts, and PostgreSQL releases a
 * transaction's locks only after its commit is visible. On SQLite the transaction's write lock is
 * the chain's lock.
 */
const chainLock = preparedQuery((db) => db.selectNoFrom(sql<string>`pg_advisory_xact_lock(${auditLockId})::text`.as('locked')));
const localLockTimeout = preparedQuery((db, timeout: string) => db.selectNoFrom(sql<string>`set_config('lock_timeout', ${timeout}, true)`.as('lock_timeout')));

/**
 * How long a transaction waits for the chain's lock on PostgreSQL. Holders keep it for a batch's
 * few statements and its commit; one that hangs (a frozen instance, a lost network) must not stall
 * every other instance's refusals: past this, a refusal batch is written unchained instead, and a
 * chainer run fails and is reported (the next commit asks for another).
 */
export const chainLockTimeoutMs = 5_000;

/** The chain's lock was not granted within its time-out (PostgreSQL's lock_not_available). */
export function isChainLockTimeout(error: unknown): boolean {
  return (error as { code?: unknown } | undefined)?.code === '55P03';
}

/** Someone else is extending the chain right now (SQLite's write lock held, or the lock's time-out passed). */
export function isChainBusy(error: unknown): boolean {
  return (error as { code?: unknown } | undefined)?.code === 'SQLITE_BUSY' || isChainLockTimeout(error);
}

function lockAuditChain(store: Store, trx: Queryable, timeoutMs: number): Promise<unknown> | undefined {
  if (store.dialect !== 'postgres') return undefined;
  // Both leave in the same batch; the time-out is the transaction's own (set_config's is_local).
  return Promise.all([localLockTimeout.execute(trx, `${timeoutMs}ms`), chainLock.execute(trx)]);
}

/** The hashed fields of a record, in RFC 8785 order (every field of AuditEntry: test/audit/audit-hash.test.ts). */
export const auditHashedFields = [
  'backboneUser',
  'clientId',
  'correlationId',
  'details',
  'durationMs',
  'httpStatus',
  'id',
  'operation',
  'outcome',
  'recordedAt',
  'reference',
  'workstation',
] as const satisfies ReadonlyArray<keyof AuditEntry>;

/** SHA-256 of the previous hash and the record's canonical JSON (its fields named in auditHashedFields, nothing else). */
export function auditHash(prevHash: string, entry: AuditEntry): string {
  return oneShotHash('sha256', `${prevHash}\n${canonicalJsonOfFields(entry, auditHashedFields)}`, 'hex');
}

/** Chains every committed, unchained record; answers how many it chained. */
export async function extendAuditChain(store: Store): Promise<number> {
  let total = 0;
  for (;;) {
    // On SQLite this joins the next commit group: the chain's links cost no fsync of their own.
    const chained = await store.transaction(async (trx) => {
      await lockAuditChain(store, trx, chainLockTimeoutMs);
      const pending = await listUnchained(trx, chainBatchMax);
      let head = (await lastChained(trx)) ?? { seq: 0, hash: genesisHash };
      const links: ChainLink[] = [];
      for (const entry of pending) {
        const hash = auditHash(head.hash, entry);
        links.push({ id: entry.id, seq: head.seq + 1, prevHash: head.hash, hash });
        head = { seq: head.seq + 1, hash };
      }
      await setChainLinks(trx, links);
      // The head is kept apart from the records, so that removing the newest records is detected.
      if (pending.length > 0) await putSetting(trx, chainHeadSetting, JSON.stringify(head));
      return pending.length;
    });
    total += chained;
    if (chained < chainBatchMax) return total;
  }
}

/**
 * In a transaction of `store`: takes the chain's lock, then inserts the records `take` answers
 * with their chain links when every earlier record is chained; otherwise unchained, for the
 * chainer to take in turn. For a batch of refused requests this replaces a chainer run, whose
 * reading back and updating of the records was a seventh of a refusal's CPU on SQLite and a third
 * of PostgreSQL's. The records are taken once the lock is held, so that those that arrived while
 * it was awaited join the batch. Answers whether the records were chained.
 */
export async function insertAuditEntriesChained(
  store: Store,
  trx: Queryable,
  take: () => readonly AuditEntry[],
  lockTimeoutMs = chainLockTimeoutMs,
): Promise<boolean> {
  // Issued together, in this order: one round trip on PostgreSQL (with BEGIN), the reads after the lock.
  const [lock, unchained, last] = await Promise.allSettled([lockAuditChain(store, trx, lockTimeoutMs), hasUnchained(trx), lastChained(trx)]);
  // The lock's failure first: the reads after it did not run.
  if (lock.status === 'rejected') throw lock.reason;
  if (unchained.status === 'rejected') throw unchained.reason;
  if (last.status === 'rejected') throw last.reason;
  const entries = take();
  if (unchained.value) {
    await insertAuditEntries(trx, entries);
    return false;
  }
  let head = last.value ?? { seq: 0, hash: genesisHash };
  const links: ChainLink[] = [];
  for (const entry of entries) {
    // Hashed as it reads back from the store, as the verifier will hash it.
    const hash = auditHash(head.hash, storedAuditEntry(entry));
    links.push({ id: entry.id, seq: head.seq + 1, prevHash: head.hash, hash });
    head = { seq: head.seq + 1, hash };
  }
  if (entries.length > 0) await Promise.all([insertAuditEntries(trx, entries, links), putSetting(trx, chainHeadSetting, JSON.stringify(head))]);
  return true;
}

/**
 * Under load a commit lands while the chainer runs, every time: a pause between back-to-back runs
 * lets one run chain many operations' records instead of each run costing its own statements
 * (and on SQLite a unit of the commit group) for a few. The first run after a quiet spell starts
 * at once.
 */
export const chainerRunPauseMs = 20;

/** Runs the chainer soon after commits without running it once per commit. */
export class AuditChainer {
  readonly #store: Store;
  readonly #onError: (error: unknown) => void;
  readonly #clock: Clock;
  #running: Promise<void> | undefined;
  #again = false;
  /** Aborted while someone waits for the chainer (idle()): the pause between runs is skipped. */
  #hurry = new AbortController();

  constructor(store: Store, onError: (error: unknown) => void, clock: Clock) {
    this.#store = store;
    this.#onError = onError;
    this.#clock = clock;
  }

  schedule(): void {
    if (this.#running) {
      this.#again = true;
      return;
    }
    this.#running = (async () => {
      for (;;) {
        this.#again = false;
        try {
          await extendAuditChain(this.#store);
        } catch (error) {
          this.#onError(error);
        }
        if (!this.#again) break;
        await sleep(this.#clock, chainerRunPauseMs, this.#hurry.signal);
      }
    })().finally(() => {
      this.#running = undefined;
    });
  }

  /**
   * Waits for the chainer to finish its current run (shutdown, tests), without the pauses
   * between runs: they save work under load, and whoever waits here wants the chain now.
   */
  async idle(): Promise<void> {
    while (this.#running) {
      this.#hurry.abort();
      await this.#running;
    }
    this.#hurry = new AbortController();
  }

  /** One run now (and any commits it finds meanwhile); resolves when the chain is extended. */
  runOnce(): Promise<void> {
    this.schedule();
    return this.idle();
  }
}

export interface ChainVerification {
  ok: boolean;
  chained: number;
  unchained: number;
  /** The first broken link, when not ok. */
  problem?: { chainSeq: number; id: string; issue: string };
}

export async function verifyAuditChain(store: Store): Promise<ChainVerification> {
  // The head is read first: a running server may extend the chain while this verifies.
  const storedHead = await getSetting(store.db, chainHeadSetting);
  const head = storedHead === undefined ? undefined : (JSON.parse(storedHead) as { seq: number; hash: string });
  let previous = { seq: 0, hash: genesisHash };
  let chained = 0;
  let headSeen = head === undefined || head.seq === 0;
  for (;;) {
    const page = await listChained(store.db, previous.seq, 1000);
    for (const entry of page) {
      const seq = entry.chainSeq ?? 0;
      const fail = (issue: string): ChainVerification => ({ ok: false, chained, unchained: 0, problem: { chainSeq: seq, id: entry.id, issue } });
      if (seq !== previous.seq + 1) return fail(`chain position ${previous.seq + 1} is missing`);
      if (entry.prevHash !== previous.hash) return fail('its previous-hash link does not match the record before it');
      if (entry.hash !== auditHash(previous.hash, entry)) return fail('its content does not match its hash (the record was altered)');
      if (head && seq === head.seq) {
        if (entry.hash !== head.hash) return fail('it is not the record the recorded chain head names (the chain was rewritten)');
        headSeen = true;
      }
      previous = { seq, hash: entry.hash ?? '' };
      chained += 1;
    }
    if (page.length < 1000) break;
  }
  if (!headSeen) {
    return {
      ok: false,
      chained,
      unchained: 0,
      problem: {
        chainSeq: previous.seq + 1,
        id: '-',
        issue: `the chain ends at position ${previous.seq} but its recorded head is position ${head?.seq}: records were removed`,
      },
    };
  }
  return { ok: true, chained, unchained: await countUnchained(store.db) };
}

/** Every record in chain order, then the unchained ones: for `coregate audit export`. */
export async function* exportAudit(store: Store): AsyncGenerator<ChainedAuditEntry> {
  let after = 0;
  for (;;) {
    const page = await listChained(store.db, after, 1000);
    yield* page;
    if (page.length < 1000) break;
    after = page[page.length - 1]?.chainSeq ?? after;
  }
  yield* await listUnchained(store.db, Number.MAX_SAFE_INTEGER);
}
