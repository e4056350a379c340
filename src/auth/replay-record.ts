/**
 * The one-time use of client assertions and DPoP proofs (docs/auth.md, "The replay
 * record"): a `jti` is accepted once while what carries it could still be accepted, on every
 * instance, across restarts and crashes. The record is the store's table `replay_records`
 * (migration 0009): one row per use under a unique key, so that of two instances inserting the
 * same use at once the database lets one win (PostgreSQL's unique index; SQLite's single writer).
 * A row whose time has passed may be taken again: its assertion or proof would be refused by its
 * own times anyway. The uses of one request (a token request's assertion and proof) are recorded
 * together, all or none: one refused leaves the others unused. SQLite keeps the rows in two
 * generations of tables instead (migration 0013, `SqliteReplayUses` below).
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
import { hash } from 'node:crypto';
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
   * Records the uses of one request, all or none: recorded when none could have been accepted
   * before the horizon and none was used before (unexpired); otherwise the first mark refused, in
   * the order given, and why — the horizon first: after a crash the record cannot tell whether
   * such a use was used. Two requests racing with a use in common: one of them is refused.
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
 * The uses of a batch's requests that the horizon lets through, and the verdicts of the others:
 * a request with a use acceptable before `since` is refused at its first such use, whether or not
 * it was used (after a crash the record cannot tell), and nothing of it is written.
 */
function beforeHorizon(batch: readonly Pending[], since: number): Array<ReplayVerdict | undefined> {
  return batch.map((pending) => {
    const index = pending.uses.findIndex((use) => use.acceptableFrom < since);
    return index < 0 ? undefined : { recorded: false, index, reason: 'before-horizon' };
  });
}

/** A request's verdict from which of its uses were inserted: the first one not inserted was recorded before (and unexpired), or taken by a race. */
function insertedVerdict(uses: readonly Use[], inserted: (use: Use) => boolean): ReplayVerdict {
  const index = uses.findIndex((use) => !inserted(use));
  return index < 0 ? { recorded: true } : { recorded: false, index, reason: 'used' };
}

/**
 * PostgreSQL: one statement for a batch, outside any transaction (its own implicit one), on the
 * unlogged tables, the uses as arrays (one prepared statement whatever their number, planned once:
 * it probes no index by a join whose estimate a plan could get wrong). It inserts the uses — an
 * expired row of the same key is taken over, an unexpired one stays and its use is not inserted —
 * in the keys' order, so that two instances' statements never wait for each other in a cycle;
 * and only while the horizon is the one the instance checked the uses against (else it inserts
 * nothing). Under a race with another instance the unique key decides: the use the other
 * statement inserted first is not inserted here. It answers the keys it inserted; when none, the
 * horizon is read apart (all used before, or another horizon: rare).
 */
const usesStatement = preparedQuery((db, now: bigint, keys: string[], expires: string[], since: bigint) => {
  const query = sql<{ key: string }>`insert into replay_records (key, expires_epoch_ms)
select m.key, m.expires_epoch_ms from unnest(${keys}::varchar[], ${expires}::bigint[]) as m (key, expires_epoch_ms)
where (select since_epoch_ms from replay_horizon where id = 1) = ${since}::bigint
order by m.key
on conflict (key) do update set expires_epoch_ms = excluded.expires_epoch_ms where replay_records.expires_epoch_ms < ${now}::bigint
returning key`;
  return { compile: () => query.compile(db) };
});
/** The first horizon after the tables were emptied; of two instances starting one at once, the first insert stays. */
const postgresHorizonStart = preparedQuery((db, since: bigint) => db.insertInto('replay_horizon').values({ id: 1, since_epoch_ms: since, boot_id: null }).onConflict((conflict) => conflict.column('id').doNothing()));
/** Undoes the uses a refused request inserted (another of its uses was recorded before): all or none. */
const postgresUndo = preparedQuery((db, keys: string[]) => db.deleteFrom('replay_records').where(sql<boolean>`key = any(${keys}::varchar[])`));
const horizonQuery = preparedQuery((db) => db.selectFrom('replay_horizon').select(['since_epoch_ms', 'boot_id']).where('id', '=', 1));
const pruneQuery = preparedQuery((db, now: bigint) => db.deleteFrom('replay_records').where('expires_epoch_ms', '<', now));
/** A horizon no statement finds: the first statement of an instance learns the stored one. */
const unknownHorizon = -1;

class PostgresReplayUses {
  readonly #store: Store;
  readonly #clock: Clock;
  readonly #queue = new WriteQueue((batch) => this.#write(batch));
  /** The horizon as the last statement found it. */
  #since = unknownHorizon;

  constructor(store: Store, clock: Clock) {
    this.#store = store;
    this.#clock = clock;
  }

  record(uses: readonly Use[]): Promise<ReplayVerdict> {
    return this.#queue.add(uses);
  }

  async #write(batch: readonly Pending[]): Promise<void> {
    // Three tries: the instance learns the horizon (its first statement), or starts one (after the
    // tables were emptied) and learns it; a third change meanwhile is an error.
    for (let attempt = 0; attempt < 3; attempt++) {
      const since = this.#since;
      const verdicts = since === unknownHorizon ? batch.map(() => undefined) : beforeHorizon(batch, since);
      const keys: string[] = [];
      const expires: string[] = [];
      batch.forEach((pending, index) => {
        if (verdicts[index] !== undefined) return;
        for (const use of pending.uses) {
          keys.push(use.key);
          expires.push(String(use.expires));
        }
      });
      if (keys.length === 0) return answer(batch, verdicts);
      const { rows } = await usesStatement.execute(this.#store.db, BigInt(this.#clock.now()), keys, expires, BigInt(since));
      if (rows.length === 0) {
        const stored = await horizonQuery.first(this.#store.db);
        if (stored === undefined) {
          // No horizon: the tables were emptied (a crash, a promotion) and nothing was inserted. The
          // time is read now, after the statement that found them empty: after the crash.
          await postgresHorizonStart.execute(this.#store.db, BigInt(this.#clock.now()));
          this.#since = unknownHorizon;
          continue;
        }
        if (Number(stored.since_epoch_ms) !== since) {
          // Another horizon than the one checked: nothing was inserted; check against it.
          this.#since = Number(stored.since_epoch_ms);
          continue;
        }
      }
      const inserted = new Set(rows.map((row) => row.key));
      const undo: string[] = [];
      batch.forEach((pending, index) => {
        if (verdicts[index] !== undefined) return;
        const verdict = insertedVerdict(pending.uses, (use) => inserted.has(use.key));
        if (!verdict.recorded) for (const use of pending.uses) if (inserted.has(use.key)) undo.push(use.key);
        verdicts[index] = verdict;
      });
      // A refused request leaves none of its uses recorded. Should the undo fail, those uses stay
      // recorded: refused again, never accepted twice.
      if (undo.length > 0) await postgresUndo.execute(this.#store.db, undo).catch(() => undefined);
      return answer(batch, verdicts);
    }
    throw new Error('the replay record\'s horizon kept changing');
  }

  async horizon(): Promise<number | undefined> {
    const row = await horizonQuery.first(this.#store.db);
    return row === undefined ? undefined : Number(row.since_epoch_ms);
  }

  async prune(now: number): Promise<void> {
    await pruneQuery.execute(this.#store.db, BigInt(now));
  }
}

/** Resolves each request with its verdict. */
function answer(batch: readonly Pending[], verdicts: ReadonlyArray<ReplayVerdict | undefined>): void {
  batch.forEach((pending, index) => pending.resolve(verdicts[index] ?? { recorded: true }));
}

/** The generations' tables: a use goes into the current one, and the other is looked in. */
const generationTables = ['replay_uses_0', 'replay_uses_1'] as const;
type Generation = 0 | 1;

/** The generations' state, read in each write's transaction (another process may have moved it). */
const sqliteGenerationsQuery = preparedQuery((db) => db.selectFrom('replay_horizon').select(['generation', 'expires_max_0', 'expires_max_1']).where('id', '=', 1));
/** Empties a generation in one statement (SQLite clears the whole tree: no row by row deletion, no index to find them). */
const sqliteEmptyQueries = generationTables.map((table) => preparedQuery((db) => db.deleteFrom(table)));
/** The emptied generation becomes the current one, with nothing recorded in it yet. */
const sqliteRotateQueries = ([0, 1] as const).map((generation) =>
  preparedQuery((db) => db.updateTable('replay_horizon').set(generation === 0 ? { generation, expires_max_0: 0 } : { generation, expires_max_1: 0 }).where('id', '=', 1)),
);
/** The current generation's latest expiry, raised to the batch's. */
const sqliteExpiresMaxQueries = ([0, 1] as const).map((generation) =>
  preparedQuery((db, expires: bigint) =>
    db
      .updateTable('replay_horizon')
      .set(generation === 0 ? { expires_max_0: expires } : { expires_max_1: expires })
      .where('id', '=', 1)
      .where(generation === 0 ? 'expires_max_0' : 'expires_max_1', '<', expires),
  ),
);
/**
 * Inserts a use into the current generation unless the other one holds it unexpired, or takes
 * over its expired row in the current one: one change, or none when it is recorded and unexpired
 * in either. One statement a use (an upsert from a select: its `where` keeps SQLite's grammar
 * from reading `on conflict` as a join's).
 */
const sqliteUseQueries = ([0, 1] as const).map((current) => {
  const [table, older] = current === 0 ? generationTables : ([generationTables[1], generationTables[0]] as const);
  return preparedQuery((db, key: Uint8Array, expires: bigint, now: bigint) => {
    const query = sql`insert into ${sql.table(table)} (key, expires_epoch_ms)
select ${key}, ${expires} where not exists (select 1 from ${sql.table(older)} where key = ${key} and expires_epoch_ms >= ${now})
on conflict (key) do update set expires_epoch_ms = excluded.expires_epoch_ms where ${sql.ref(`${table}.expires_epoch_ms`)} < ${now}`;
    return { compile: () => query.compile(db) };
  });
});
const sqliteUndoQueries = generationTables.map((table) => preparedQuery((db, key: Uint8Array) => db.deleteFrom(table).where('key', '=', key)));
const sqliteHorizonUpdate = preparedQuery((db, since: bigint, bootId: string | null) => db.updateTable('replay_horizon').set({ since_epoch_ms: since, boot_id: bootId }).where('id', '=', 1));
const sqliteHorizonInsert = preparedQuery((db, since: bigint, bootId: string | null) => db.insertInto('replay_horizon').values({ id: 1, since_epoch_ms: since, boot_id: bootId }));

/**
 * SQLite: a batch is one unit of work in the commit group, committed without a sync where the
 * machine's boot is known. The single writer decides races: a batch's statements see every
 * commit before it (of this process or another on the same file) and its own earlier writes.
 *
 * The uses live in two generations of tables (migration 0013): a use goes into the current one
 * unless either holds it unexpired. Once every use of the other one has expired (its latest
 * expiry has passed), the write that finds it so empties it in one statement and makes it the
 * current one. A use's key is random, so each row inserted or deleted one by one touched another
 * page that the commit writes to the log: emptying a whole table replaced deleting expired rows
 * one at a time, which had cost two fifths of a use (docs/performance.md, issue 42).
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
    const verdicts = beforeHorizon(batch, await this.horizon());
    if (verdicts.every((verdict) => verdict !== undefined)) return answer(batch, verdicts);
    await this.#store.transaction(
      async (unit) => {
        const now = this.#clock.now();
        const current = await currentGeneration(unit, now);
        let expiresMax = 0;
        for (const [index, pending] of batch.entries()) {
          if (verdicts[index] !== undefined) continue;
          const verdict = await recordSqliteUses(unit, current, pending.uses, now);
          verdicts[index] = verdict;
          if (verdict.recorded) for (const use of pending.uses) expiresMax = Math.max(expiresMax, use.expires);
        }
        if (expiresMax > 0) await (sqliteExpiresMaxQueries[current] as (typeof sqliteExpiresMaxQueries)[number]).execute(unit, BigInt(expiresMax));
      },
      { synced: !this.#unsynced },
    );
    // Answered once committed: a verdict never stands on a write that could still roll back.
    answer(batch, verdicts);
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

  async prune(): Promise<void> {
    // Nothing to delete row by row: a write empties the older generation once all of it has expired.
  }
}

/** The generation this write's uses go into: the current one, or the other one emptied once all of it expired. */
async function currentGeneration(unit: UnitOfWork<Database>, now: number): Promise<Generation> {
  const state = await sqliteGenerationsQuery.first(unit);
  if (state === undefined) throw new Error('the replay record has no horizon row');
  const current: Generation = Number(state.generation) === 1 ? 1 : 0;
  const other: Generation = current === 0 ? 1 : 0;
  const otherExpiresMax = Number(other === 0 ? state.expires_max_0 : state.expires_max_1);
  if (otherExpiresMax >= now) return current;
  // Every use of the other generation has expired: nothing there can refuse a use any more.
  await (sqliteEmptyQueries[other] as (typeof sqliteEmptyQueries)[number]).execute(unit);
  await (sqliteRotateQueries[other] as (typeof sqliteRotateQueries)[number]).execute(unit);
  return other;
}

/**
 * One request's uses inside the batch's transaction, each in one statement (an insert that
 * changes no row found it recorded and unexpired, in either generation); the first refused one
 * undoes those before it, which nobody else saw (the transaction holds the write lock).
 */
async function recordSqliteUses(unit: UnitOfWork<Database>, current: Generation, uses: readonly Use[], now: number): Promise<ReplayVerdict> {
  const insert = sqliteUseQueries[current] as (typeof sqliteUseQueries)[number];
  const keys = uses.map((use) => Buffer.from(use.key, 'hex'));
  for (let index = 0; index < uses.length; index++) {
    const result = await insert.execute(unit, keys[index] as Buffer, BigInt((uses[index] as Use).expires), BigInt(now));
    if (Number(result.numAffectedRows ?? 0n) > 0) continue;
    const undo = sqliteUndoQueries[current] as (typeof sqliteUndoQueries)[number];
    for (let undone = 0; undone < index; undone++) await undo.execute(unit, keys[undone] as Buffer);
    return { recorded: false, index, reason: 'used' };
  }
  return { recorded: true };
}

export function replayKey(parts: readonly string[]): string {
  // Each part's length first: ("ab", "c") and ("a", "bc") name different uses. One string, hashed
  // in one call (a hash object and an update per part cost more than the hashing).
  let text = '';
  for (const part of parts) text += `${Buffer.byteLength(part)}:${part}`;
  return hash('sha256', text, 'hex');
}
