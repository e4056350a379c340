/**
 * The one-time use of client assertions and DPoP proofs (CONTRACT §13, docs/auth.md "The replay
 * record"): a `jti` is accepted once while what carries it could still be accepted, on every
 * instance, across restarts and crashes. The record is the store's table `replay_records`
 * (migration 0009): one row per use under a unique key, so that of two instances inserting the
 * same use at once the database lets one win (PostgreSQL's unique index; SQLite's single writer).
 * A row whose time has passed may be taken again: its assertion or proof would be refused by its
 * own times anyway. The uses of one request (a token request's assertion and proof) are recorded
 * together, all or none: one refused leaves the others unused.
 *
 * Since issue 42 the record is written without a sync to disk, and what that can lose is closed
 * by a horizon (`replay_horizon`, migration 0012): the moment from which the record holds every
 * use. A use that could have been accepted before it (its `acceptableFromEpochMs`: 10 s before a
 * proof's iat, and so on) is refused, because its first use may be one the record lost.
 * - PostgreSQL: both tables are UNLOGGED (no WAL, no flush, no wait for a standby). PostgreSQL
 *   empties unlogged tables after a crash and on a standby's promotion, the horizon's row with
 *   them. A statement that finds no horizon records nothing; the instance then starts one at its
 *   own clock's time, read after that answer — so after the crash, since the statement ran on a
 *   connection made after it — and tries again: every assertion or proof from before is refused.
 * - SQLite: the uses are written in a commit that is not synced (database.ts `synced: false`; the
 *   business transactions keep theirs, and a later synced commit syncs these frames too). A
 *   process that crashes loses none of them (they were handed to the operating system); a crash of
 *   the machine may lose the last ones, and every process starts again after it. So the horizon
 *   holds the machine's boot (Linux's boot id, handed in by the wiring): the first process of
 *   another boot moves it to its own start. Where no boot id is known the uses are synced, as
 *   before issue 42.
 *
 * The uses of requests that arrive while a write is under way are written together, in one
 * statement (PostgreSQL) or one transaction (SQLite): the write's own cost — a round trip and a
 * statement on PostgreSQL, a transaction and its commit on SQLite — was most of a DPoP-bound
 * request's extra CPU (docs/performance.md, issue 42).
 *
 * What names a use is hashed (SHA-256): a `jti` is the caller's text, of any length.
 */
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { Clock } from '../core/clock.js';
import type { Store } from '../store/connect.js';
import type { UnitOfWork } from '../store/engine/unit-of-work.js';
import type { Database } from '../store/schema.js';
import { preparedQuery } from '../store/prepared.js';

/** Expired rows are deleted at most this often, by the use that finds them due. */
export const replayPruneIntervalMs = 60_000;

/** A use to record once the request that carries it has passed every other check. */
export interface ReplayMark {
  /** What names the use: its kind, whose it is (a client, a proof's key) and its `jti`. */
  readonly parts: readonly string[];
  /** Until when (epoch ms) a second use must be refused. */
  readonly expiresEpochMs: number;
  /** The earliest moment (epoch ms) the assertion or proof could have been accepted: one from before the record's horizon is refused. */
  readonly acceptableFromEpochMs: number;
}

/** Why a use was not recorded: used before (and unexpired), or acceptable before the record's horizon. */
export type ReplayRefusal = 'used' | 'before-horizon';

export type ReplayVerdict = { readonly recorded: true } | { readonly recorded: false; readonly index: number; readonly reason: ReplayRefusal };

/** The refusal's words for a proof the record refused (the token endpoint's and the API's). */
export function replayedProofMessage(reason: ReplayRefusal): string {
  return reason === 'used'
    ? 'The DPoP proof was used before (its jti)'
    : 'The DPoP proof was made before the replay record\'s horizon (its database restarted after a crash, or a new boot of its machine): make a new proof';
}

export interface ReplayRecord {
  /**
   * Records the uses of one request, all or none: recorded when none was used before (unexpired)
   * and none could have been accepted before the horizon; otherwise the first mark refused, in
   * the order given, and why (used before, at the same mark, when both hold). Two requests racing
   * with a use in common: one of them is refused.
   */
  record(marks: readonly ReplayMark[]): Promise<ReplayVerdict>;
}

export interface StoreReplayRecordOptions {
  /** Where a failed deletion of expired rows goes (the log); the next one tries again. */
  onPruneError?: (error: unknown) => void;
  /** SQLite: this process's start (epoch ms, the wiring's clock), the horizon after another boot. */
  startedAtEpochMs?: number;
  /** SQLite: the machine's boot id; absent, the uses are synced (nothing to close). */
  bootId?: string | undefined;
}

export class StoreReplayRecord implements ReplayRecord {
  readonly #clock: Clock;
  readonly #onPruneError: (error: unknown) => void;
  readonly #dialect: PostgresReplayUses | SqliteReplayUses;
  #nextPruneEpochMs = 0;
  #pruning: Promise<void> = Promise.resolve();

  constructor(store: Store, clock: Clock, options: StoreReplayRecordOptions = {}) {
    this.#clock = clock;
    this.#onPruneError = options.onPruneError ?? (() => {});
    this.#dialect = store.dialect === 'postgres' ? new PostgresReplayUses(store, clock) : new SqliteReplayUses(store, clock, options.startedAtEpochMs ?? clock.now(), options.bootId);
  }

  async record(marks: readonly ReplayMark[]): Promise<ReplayVerdict> {
    if (marks.length === 0) return { recorded: true };
    const uses = marks.map((mark) => ({ key: replayKey(mark.parts), expires: Math.ceil(mark.expiresEpochMs), acceptableFrom: Math.floor(mark.acceptableFromEpochMs) }));
    // The same use twice in one request: the second is a replay of the first (and one statement may not write a row twice).
    const repeated = uses.findIndex((use, index) => uses.findIndex((other) => other.key === use.key) !== index);
    const verdict = repeated >= 0 ? ({ recorded: false, index: repeated, reason: 'used' } as const) : await this.#dialect.record(uses);
    const now = this.#clock.now();
    if (now >= this.#nextPruneEpochMs) this.#prune(now);
    return verdict;
  }

  /** True the first time `mark` is recorded while unexpired (and after the horizon), false otherwise. */
  async firstUse(mark: ReplayMark): Promise<boolean> {
    return (await this.record([mark])).recorded;
  }

  /** Resolves once the last deletion of expired rows has ended (a test waits for it). */
  pruned(): Promise<void> {
    return this.#pruning;
  }

  /** The horizon (epoch ms) as this record knows it: SQLite's once read, PostgreSQL's as stored (a test looks). */
  horizon(): Promise<number | undefined> {
    return this.#dialect.horizon();
  }

  #prune(now: number): void {
    // Beside the request, not in it: a deletion that fails or waits must not fail or hold the use just recorded.
    this.#nextPruneEpochMs = now + replayPruneIntervalMs;
    this.#pruning = this.#dialect.prune(now).then(
      () => undefined,
      (error: unknown) => this.#onPruneError(error),
    );
  }
}

/** A mark as the store writes it. */
interface Use {
  key: string;
  expires: number;
  acceptableFrom: number;
}

/** One request's uses, waiting for the write that carries them. */
interface Pending {
  uses: readonly Use[];
  resolve: (verdict: ReplayVerdict) => void;
  reject: (error: unknown) => void;
}

/** Uses written together at most (a statement's arrays on PostgreSQL, a transaction on SQLite). */
const usesPerWriteMax = 256;

/**
 * The next write's requests, taken from `queue` in order: up to `usesPerWriteMax` uses, and never
 * two requests with a use in common (the later one waits for the next write, which sees the
 * earlier one's outcome). The others stay queued.
 */
function nextBatch(queue: Pending[]): Pending[] {
  const batch: Pending[] = [];
  const keys = new Set<string>();
  let uses = 0;
  let kept = 0;
  for (const pending of queue) {
    const fits = uses + pending.uses.length <= usesPerWriteMax || batch.length === 0;
    if (fits && pending.uses.every((use) => !keys.has(use.key))) {
      batch.push(pending);
      uses += pending.uses.length;
      for (const use of pending.uses) keys.add(use.key);
    } else {
      queue[kept++] = pending;
    }
  }
  queue.length = kept;
  return batch;
}

/**
 * Requests that arrive while a write is under way wait for it to end, then go together in the
 * next one: one write at a time per instance. The first request after a quiet spell waits for
 * the end of the event loop's turn, so that the requests read in the same turn share its write.
 */
class WriteQueue {
  readonly #queue: Pending[] = [];
  #busy = false;

  constructor(readonly write: (batch: readonly Pending[]) => Promise<void>) {}

  add(uses: readonly Use[]): Promise<ReplayVerdict> {
    return new Promise<ReplayVerdict>((resolve, reject) => {
      this.#queue.push({ uses, resolve, reject });
      if (this.#busy) return;
      this.#busy = true;
      setImmediate(() => this.#next());
    });
  }

  #next(): void {
    const batch = nextBatch(this.#queue);
    if (batch.length === 0) {
      this.#busy = false;
      return;
    }
    this.write(batch).then(
      () => this.#next(),
      (error: unknown) => {
        for (const pending of batch) pending.reject(error);
        this.#next();
      },
    );
  }
}

/**
 * PostgreSQL: one statement for a batch, outside any transaction (its own implicit one), on the
 * unlogged tables: the uses as arrays (one prepared statement whatever their number), with the
 * request each belongs to. It reads the horizon; refuses every use of a request of which one use
 * is recorded and unexpired or acceptable before the horizon; inserts the others (an expired row
 * of the same key is taken over), in the keys' order, so that two instances' statements never
 * wait for each other in a cycle. Without a horizon it records nothing. Under a race with another
 * instance the unique key decides: a use a concurrent statement inserted is not inserted again,
 * and is missing from `inserted`.
 */
interface UsesRow {
  inserted: number[];
  used: number[];
  early: number[];
  since: string | number | null;
}

const usesStatement = preparedQuery((db, now: number, keys: string[], expires: number[], acceptableFrom: number[], requests: number[]) => {
  const query = sql<UsesRow>`with
  horizon as (select since_epoch_ms from replay_horizon where id = 1),
  marks as (
    select * from unnest(${keys}::varchar[], ${expires}::bigint[], ${acceptableFrom}::bigint[], ${requests}::int[])
      with ordinality as m (key, expires_epoch_ms, acceptable_from, request, ordinal)),
  used as (select marks.ordinal, marks.request from marks join replay_records on replay_records.key = marks.key where replay_records.expires_epoch_ms >= ${now}::bigint),
  early as (select marks.ordinal, marks.request from marks, horizon where marks.acceptable_from < horizon.since_epoch_ms),
  inserted as (
    insert into replay_records (key, expires_epoch_ms)
    select key, expires_epoch_ms from marks
    where exists (select 1 from horizon)
      and request not in (select request from used union all select request from early)
    order by key
    on conflict (key) do update set expires_epoch_ms = excluded.expires_epoch_ms where replay_records.expires_epoch_ms < ${now}::bigint
    returning key)
select
  array(select marks.ordinal::int from marks join inserted on inserted.key = marks.key) as inserted,
  array(select ordinal::int from used) as used,
  array(select ordinal::int from early) as early,
  (select since_epoch_ms from horizon) as since`;
  return { compile: () => query.compile(db) };
});
/** The first horizon after the tables were emptied; of two instances starting one at once, the first insert stays. */
const postgresHorizonStart = preparedQuery((db, since: bigint) => db.insertInto('replay_horizon').values({ id: 1, since_epoch_ms: since, boot_id: null }).onConflict((conflict) => conflict.column('id').doNothing()));
/** Undoes the uses of a request that lost a race on another of its uses: all or none. */
const postgresUndo = preparedQuery((db, keys: string[]) => db.deleteFrom('replay_records').where(sql<boolean>`key = any(${keys}::varchar[])`));
const horizonQuery = preparedQuery((db) => db.selectFrom('replay_horizon').select(['since_epoch_ms', 'boot_id']).where('id', '=', 1));
const pruneQuery = preparedQuery((db, now: bigint) => db.deleteFrom('replay_records').where('expires_epoch_ms', '<', now));

class PostgresReplayUses {
  readonly #store: Store;
  readonly #clock: Clock;
  readonly #queue = new WriteQueue((batch) => this.#write(batch));

  constructor(store: Store, clock: Clock) {
    this.#store = store;
    this.#clock = clock;
  }

  record(uses: readonly Use[]): Promise<ReplayVerdict> {
    return this.#queue.add(uses);
  }

  async #write(batch: readonly Pending[]): Promise<void> {
    const keys: string[] = [];
    const expires: number[] = [];
    const acceptableFrom: number[] = [];
    const requests: number[] = [];
    batch.forEach((pending, request) => {
      for (const use of pending.uses) {
        keys.push(use.key);
        expires.push(use.expires);
        acceptableFrom.push(use.acceptableFrom);
        requests.push(request);
      }
    });
    let row = await usesStatement.first(this.#store.db, this.#clock.now(), keys, expires, acceptableFrom, requests);
    if (row !== undefined && row.since === null) {
      // No horizon: the tables were emptied (a crash, a promotion) and nothing was recorded. The
      // time is read now, after the statement that found them empty: after the crash.
      await postgresHorizonStart.execute(this.#store.db, BigInt(this.#clock.now()));
      row = await usesStatement.first(this.#store.db, this.#clock.now(), keys, expires, acceptableFrom, requests);
    }
    if (row === undefined || row.since === null) throw new Error('the replay record has no horizon');
    // The statement's ordinals count from 1, in the order of `keys`.
    const inserted = new Set(row.inserted);
    const used = new Set(row.used);
    const early = new Set(row.early);
    const undo: string[] = [];
    let ordinal = 1;
    const verdicts = batch.map((pending) => {
      const first = ordinal;
      ordinal += pending.uses.length;
      const verdict = verdictOf(pending.uses.length, (index) => used.has(first + index), (index) => early.has(first + index), (index) => inserted.has(first + index));
      if (!verdict.recorded) pending.uses.forEach((use, index) => inserted.has(first + index) && undo.push(use.key));
      return verdict;
    });
    // A request that lost a race on one use leaves none recorded (rare: the same use sent to two
    // instances at once). Should the undo fail, those uses stay recorded: refused again, never
    // accepted twice.
    if (undo.length > 0) await postgresUndo.execute(this.#store.db, undo).catch(() => undefined);
    batch.forEach((pending, index) => pending.resolve(verdicts[index] as ReplayVerdict));
  }

  async horizon(): Promise<number | undefined> {
    const row = await horizonQuery.first(this.#store.db);
    return row === undefined ? undefined : Number(row.since_epoch_ms);
  }

  async prune(now: number): Promise<void> {
    await pruneQuery.execute(this.#store.db, BigInt(now));
  }
}

/** The first refused use in order (used before early at the same use), else recorded when every use was inserted; else the first one a race took. */
function verdictOf(count: number, used: (index: number) => boolean, early: (index: number) => boolean, inserted: (index: number) => boolean): ReplayVerdict {
  for (let index = 0; index < count; index++) {
    if (used(index)) return { recorded: false, index, reason: 'used' };
    if (early(index)) return { recorded: false, index, reason: 'before-horizon' };
  }
  for (let index = 0; index < count; index++) if (!inserted(index)) return { recorded: false, index, reason: 'used' };
  return { recorded: true };
}

/** Inserts a use, or takes over its expired row: one change, or none when it is recorded and unexpired. */
const sqliteUseQuery = preparedQuery((db, key: string, expires: bigint, now: bigint) =>
  db
    .insertInto('replay_records')
    .values({ key, expires_epoch_ms: expires })
    .onConflict((conflict) => conflict.column('key').doUpdateSet({ expires_epoch_ms: expires }).where('replay_records.expires_epoch_ms', '<', now)),
);
const sqliteUsedQuery = preparedQuery((db, key: string, now: bigint) => db.selectFrom('replay_records').select('key').where('key', '=', key).where('expires_epoch_ms', '>=', now));
const sqliteUndoQuery = preparedQuery((db, key: string) => db.deleteFrom('replay_records').where('key', '=', key));
/** Expired rows deleted beside each batch, a few more than it adds: the table never holds many more than its unexpired rows. */
const sqlitePruneQuery = preparedQuery((db, now: bigint, limit: number) =>
  db.deleteFrom('replay_records').where('key', 'in', (inner) => inner.selectFrom('replay_records').select('key').where('expires_epoch_ms', '<', now).orderBy('expires_epoch_ms').limit(limit)),
);
const sqliteHorizonUpdate = preparedQuery((db, since: bigint, bootId: string | null) => db.updateTable('replay_horizon').set({ since_epoch_ms: since, boot_id: bootId }).where('id', '=', 1));
const sqliteHorizonInsert = preparedQuery((db, since: bigint, bootId: string | null) => db.insertInto('replay_horizon').values({ id: 1, since_epoch_ms: since, boot_id: bootId }));
const sqlitePruneSlack = 16;

/**
 * SQLite: a batch is one unit of work in the commit group, committed without a sync where the
 * machine's boot is known. The single writer decides races: a batch's statements see every
 * commit before it (of this process or another on the same file) and its own earlier writes.
 */
class SqliteReplayUses {
  readonly #store: Store;
  readonly #clock: Clock;
  readonly #startedAt: number;
  readonly #bootId: string | undefined;
  /** Whether the uses' commits go unsynced: only where a crash of the machine is detected (its boot). */
  readonly #unsynced: boolean;
  readonly #queue = new WriteQueue((batch) => this.#write(batch));
  #since: Promise<number> | undefined;

  constructor(store: Store, clock: Clock, startedAt: number, bootId: string | undefined) {
    this.#store = store;
    this.#clock = clock;
    this.#startedAt = startedAt;
    this.#bootId = bootId;
    this.#unsynced = bootId !== undefined;
  }

  async record(uses: readonly Use[]): Promise<ReplayVerdict> {
    // The horizon is read (and, after another boot, moved) before the first use is written.
    await this.horizon();
    return this.#queue.add(uses);
  }

  async #write(batch: readonly Pending[]): Promise<void> {
    const since = await this.horizon();
    const verdicts = await this.#store.transaction(
      async (unit) => {
        const now = this.#clock.now();
        const verdicts: ReplayVerdict[] = [];
        let added = 0;
        for (const pending of batch) {
          const verdict = await recordSqliteUses(unit, pending.uses, now, since);
          verdicts.push(verdict);
          if (verdict.recorded) added += pending.uses.length;
        }
        if (added > 0) await sqlitePruneQuery.execute(unit, BigInt(now), 2 * added + sqlitePruneSlack);
        return verdicts;
      },
      { synced: !this.#unsynced },
    );
    // Answered once committed: a verdict never stands on a write that could still roll back.
    batch.forEach((pending, index) => pending.resolve(verdicts[index] as ReplayVerdict));
  }

  horizon(): Promise<number> {
    return (this.#since ??= this.#openHorizon());
  }

  /**
   * Read once per process, in a synced transaction: the stored horizon while its boot is this one
   * (or none wrote unsynced yet); after another boot — whose last unsynced uses a crash may have
   * taken — this process's start, stored with this boot.
   */
  #openHorizon(): Promise<number> {
    const bootId = this.#bootId ?? null;
    const opened = this.#store.transaction(async (unit) => {
      const row = await horizonQuery.first(unit);
      if (row === undefined) {
        await sqliteHorizonInsert.execute(unit, 0n, bootId);
        return 0;
      }
      const stored = Number(row.since_epoch_ms);
      if (row.boot_id === bootId) return stored;
      const since = row.boot_id === null ? stored : Math.max(stored, this.#startedAt);
      await sqliteHorizonUpdate.execute(unit, BigInt(since), bootId);
      return since;
    });
    // A failure is not kept: the next use tries again.
    opened.catch(() => {
      if (this.#since === opened) this.#since = undefined;
    });
    return opened;
  }

  async prune(now: number): Promise<void> {
    // Each batch deletes expired rows as it goes; this catches up after a pause (rows left from before a restart).
    await this.#store.transaction((unit) => sqlitePruneQuery.execute(unit, BigInt(now), 10_000).then(() => undefined), { synced: !this.#unsynced });
  }
}

/**
 * One request's uses inside the batch's transaction: each inserted in order (one statement: an
 * insert that changes no row found it recorded and unexpired); the first refused one undoes those
 * before it, which nobody else saw (the transaction holds the write lock). A use acceptable before
 * the horizon is refused before it is written, as used if it is (PostgreSQL's order).
 */
async function recordSqliteUses(unit: UnitOfWork<Database>, uses: readonly Use[], now: number, since: number): Promise<ReplayVerdict> {
  let verdict: ReplayVerdict | undefined;
  let index = 0;
  for (; index < uses.length; index++) {
    const use = uses[index] as Use;
    if (use.acceptableFrom < since) {
      const used = (await sqliteUsedQuery.first(unit, use.key, BigInt(now))) !== undefined;
      verdict = { recorded: false, index, reason: used ? 'used' : 'before-horizon' };
      break;
    }
    const result = await sqliteUseQuery.execute(unit, use.key, BigInt(use.expires), BigInt(now));
    if (Number(result.numAffectedRows ?? 0n) === 0) {
      verdict = { recorded: false, index, reason: 'used' };
      break;
    }
  }
  if (verdict === undefined) return { recorded: true };
  for (let undone = 0; undone < index; undone++) await sqliteUndoQuery.execute(unit, (uses[undone] as Use).key);
  return verdict;
}

export function replayKey(parts: readonly string[]): string {
  const hash = createHash('sha256');
  // Each part's length first: ("ab", "c") and ("a", "bc") name different uses.
  for (const part of parts) hash.update(`${Buffer.byteLength(part)}:`).update(part);
  return hash.digest('hex');
}
