/**
 * The port behind every limit of the service (docs/limits.md): counters kept per key, either in
 * this instance's memory or in a store every instance shares (Redis). Two primitives suffice:
 * a fixed-window counter (failed client authentications) and a token bucket (the business API's
 * per-client rate). Every implementation runs the suite in test/limits/limit-store-suite.ts.
 *
 * Keys are built by `limitKey` (limit-key.ts): they never hold a secret, and they are bounded in
 * length. A store adds its own prefix when it shares a namespace with others.
 */

/** A fixed window: it opens at the first hit of a key and closes `windowMs` later. */
export interface WindowCount {
  /** Hits in the open window; 0 when no window is open. */
  count: number;
  /** Milliseconds until the open window closes (the count starts again at 0); 0 when none is open. */
  resetInMs: number;
}

/** A token bucket: holds at most `burst` tokens and gains `ratePerSecond` tokens a second. */
export interface TokenBucket {
  ratePerSecond: number;
  burst: number;
}

export type BucketTake = { allowed: true } | { allowed: false; retryAfterMs: number };

export interface LimitStore {
  /** Counts one hit of `key` in its window (opening a window of `windowMs` when none is open). */
  hit(key: string, windowMs: number): Promise<WindowCount>;
  /** The window of `key` as it stands, without counting a hit. */
  peek(key: string): Promise<WindowCount>;
  /** Takes one token from the bucket of `key` (a full bucket when the key is new). */
  take(key: string, bucket: TokenBucket): Promise<BucketTake>;
  /** Releases connections; the store answers nothing afterwards. */
  close(): Promise<void>;
}
