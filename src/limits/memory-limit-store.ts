/**
 * Limits in this instance's memory: the store when no Redis is configured, and the fallback while
 * a configured Redis is unreachable. Bounded: at most `memoryLimitKeysMax` keys, the least
 * recently used forgotten beyond it. Expired windows are dropped when next seen.
 */
import type { BucketTake, LimitStore, TokenBucket, WindowCount } from './limit-store.js';
import { LruMap } from '../cache/lru-map.js';

/**
 * Keys kept at most. A key is at most about 450 bytes (limit-key.ts bounds each part), an entry
 * with Map overhead well under 1 KiB, so the store stays below about 100 MB at worst. An attacker
 * who cycles through this many keys from one address to evict its own counter needs 100,000
 * failed requests, which takes longer than the default window.
 */
export const memoryLimitKeysMax = 100_000;

type Entry = { kind: 'window'; count: number; endsAtMs: number } | { kind: 'bucket'; tokens: number; refilledAtMs: number };

export interface MemoryLimitStoreOptions {
  /** Tests lower it to prove the bound. */
  keysMax?: number;
  /** Milliseconds since the epoch: the instance's clock (src/core/clock.ts), a fake one in tests. */
  clock: () => number;
}

export class MemoryLimitStore implements LimitStore {
  readonly #entries: LruMap<string, Entry>;
  readonly #clock: () => number;

  constructor(options: MemoryLimitStoreOptions) {
    this.#entries = new LruMap(options.keysMax ?? memoryLimitKeysMax);
    this.#clock = options.clock;
  }

  /** Keys held now (expired ones included until they are seen or evicted). */
  get size(): number {
    return this.#entries.size;
  }

  async hit(key: string, windowMs: number): Promise<WindowCount> {
    const nowMs = this.#clock();
    const open = this.#openWindow(key, nowMs);
    const window = open ?? { kind: 'window' as const, count: 0, endsAtMs: nowMs + windowMs };
    window.count += 1;
    this.#entries.set(key, window);
    return { count: window.count, resetInMs: window.endsAtMs - nowMs };
  }

  async peek(key: string): Promise<WindowCount> {
    const nowMs = this.#clock();
    const open = this.#openWindow(key, nowMs);
    return open ? { count: open.count, resetInMs: open.endsAtMs - nowMs } : { count: 0, resetInMs: 0 };
  }

  async take(key: string, bucket: TokenBucket): Promise<BucketTake> {
    const nowMs = this.#clock();
    const found = this.#entries.get(key);
    const state = found?.kind === 'bucket' ? found : { kind: 'bucket' as const, tokens: bucket.burst, refilledAtMs: nowMs };
    const elapsedMs = Math.max(0, nowMs - state.refilledAtMs);
    state.tokens = Math.min(bucket.burst, state.tokens + (elapsedMs / 1000) * bucket.ratePerSecond);
    state.refilledAtMs = nowMs;
    this.#entries.set(key, state);
    if (state.tokens >= 1) {
      state.tokens -= 1;
      return { allowed: true };
    }
    return { allowed: false, retryAfterMs: Math.ceil(((1 - state.tokens) / bucket.ratePerSecond) * 1000) };
  }

  async close(): Promise<void> {
    this.#entries.clear();
  }

  #openWindow(key: string, nowMs: number): (Entry & { kind: 'window' }) | undefined {
    const found = this.#entries.get(key);
    if (found?.kind !== 'window') return undefined;
    if (found.endsAtMs > nowMs) return found;
    this.#entries.delete(key);
    return undefined;
  }
}
