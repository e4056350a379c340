/**
 * The one-time use of client assertions and DPoP proofs (CONTRACT §13): a `jti` is accepted once
 * while what carries it could still be accepted, on every instance. The record is the store's
 * table `replay_records` (migration 0009): one row per use under a unique key, written by one
 * statement, so that of two instances inserting the same use at once the database lets one win
 * (PostgreSQL's unique index; SQLite's single writer). A row whose time has passed may be taken
 * again, in the same statement: its assertion or proof would be refused by its own times anyway.
 *
 * What names a use is hashed (SHA-256): a `jti` is the caller's text, of any length.
 */
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { Clock } from '../core/clock.js';
import type { Store } from '../store/connect.js';

/** Expired rows are deleted at most this often, by the use that finds them due. */
export const replayPruneIntervalMs = 60_000;

/** A use to record once the request that carries it has passed every other check. */
export interface ReplayMark {
  /** What names the use: its kind, whose it is (a client, a proof's key) and its `jti`. */
  readonly parts: readonly string[];
  /** Until when (epoch ms) a second use must be refused. */
  readonly expiresEpochMs: number;
}

export interface ReplayRecord {
  /** True the first time `mark` is recorded while unexpired, false for a replay. */
  firstUse(mark: ReplayMark): Promise<boolean>;
}

export class StoreReplayRecord implements ReplayRecord {
  readonly #store: Store;
  readonly #clock: Clock;
  readonly #onPruneError: (error: unknown) => void;
  #nextPruneEpochMs = 0;
  #pruning: Promise<void> = Promise.resolve();

  /** `onPruneError`: where a failed deletion of expired rows goes (the log); the next one tries again. */
  constructor(store: Store, clock: Clock, onPruneError: (error: unknown) => void = () => {}) {
    this.#store = store;
    this.#clock = clock;
    this.#onPruneError = onPruneError;
  }

  async firstUse(mark: ReplayMark): Promise<boolean> {
    const now = this.#clock.now();
    const key = replayKey(mark.parts);
    const expires = BigInt(Math.ceil(mark.expiresEpochMs));
    // A unit of work, not a statement on its own: on SQLite the uses of requests that arrive
    // together share one durable commit (commit-group.ts) instead of a sync each.
    const result = await this.#store.transaction((unit) =>
      unit
        .insertInto('replay_records')
        .values({ key, expires_epoch_ms: expires })
        .onConflict((conflict) =>
          conflict
            .column('key')
            .doUpdateSet({ expires_epoch_ms: expires })
            .where(sql<boolean>`replay_records.expires_epoch_ms < ${BigInt(now)}`),
        )
        .executeTakeFirst(),
    );
    const first = Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
    if (now >= this.#nextPruneEpochMs) {
      // Beside the request, not in it: a deletion that fails or waits must not fail or hold the use just recorded.
      this.#nextPruneEpochMs = now + replayPruneIntervalMs;
      this.#pruning = this.#store.db
        .deleteFrom('replay_records')
        .where('expires_epoch_ms', '<', BigInt(now))
        .execute()
        .then(
          () => undefined,
          (error: unknown) => this.#onPruneError(error),
        );
    }
    return first;
  }

  /** Resolves once the last deletion of expired rows has ended (a test waits for it). */
  pruned(): Promise<void> {
    return this.#pruning;
  }
}

export function replayKey(parts: readonly string[]): string {
  const hash = createHash('sha256');
  // Each part's length first: ("ab", "c") and ("a", "bc") name different uses.
  for (const part of parts) hash.update(`${Buffer.byteLength(part)}:`).update(part);
  return hash.digest('hex');
}
