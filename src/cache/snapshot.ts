/**
 * A read-through cache whose entries are at most `maxAgeMs` old (docs/deployment.md, "What an
 * instance keeps in memory": nothing one instance keeps in memory may decide an outcome differently
 * from another for longer than a few seconds). Loads of one key are shared: a burst of requests
 * costs one read. Bounded: the least recently used keys are forgotten first.
 */
import type { Clock } from '../core/clock.js';
import { LruMap } from './lru-map.js';

interface Entry<V> {
  value: Promise<V>;
  loadedAtMs: number;
  /** Loaded by `refresh` (a refusal's read again), not by an expired entry's `get`. */
  forced: boolean;
  /** Set once the load has answered: `peek` reads it without a promise. */
  loaded?: { value: V };
}

export interface SnapshotOptions {
  maxAgeMs: number;
  entriesMax: number;
  /** Whose time ages the entries (src/core/clock.ts). */
  clock: Clock;
}

export class Snapshot<K, V> {
  readonly #load: (key: K) => Promise<V>;
  readonly #entries: LruMap<K, Entry<V>>;
  readonly #maxAgeMs: number;
  readonly #clock: Clock;

  constructor(load: (key: K) => Promise<V>, options: SnapshotOptions) {
    this.#load = load;
    this.#entries = new LruMap(options.entriesMax);
    this.#maxAgeMs = options.maxAgeMs;
    this.#clock = options.clock;
  }

  get(key: K): Promise<V> {
    const now = this.#clock.now();
    const entry = this.#entries.get(key);
    if (entry !== undefined && now - entry.loadedAtMs < this.#maxAgeMs) return entry.value;
    return this.#loadNow(key, now, false);
  }

  /**
   * Reads `key` from the store now, unless a read forced this way answered it less than
   * `minIntervalMs` ago: what a refusal reads again before it refuses, so that a flood of refused
   * requests for one key costs a few reads a second, not one each.
   */
  refresh(key: K, minIntervalMs: number): Promise<V> {
    const now = this.#clock.now();
    const entry = this.#entries.get(key);
    if (entry?.forced === true && now - entry.loadedAtMs < minIntervalMs) return entry.value;
    return this.#loadNow(key, now, true);
  }

  #loadNow(key: K, now: number, forced: boolean): Promise<V> {
    const value = this.#load(key);
    const loading: Entry<V> = { value, loadedAtMs: now, forced };
    this.#entries.set(key, loading);
    value.then(
      (loaded) => {
        loading.loaded = { value: loaded };
      },
      // A failed read is not remembered: the next caller tries again.
      () => {
        if (this.#entries.get(key)?.value === value) this.#entries.delete(key);
      },
    );
    return value;
  }

  /**
   * The value `get` would answer, without a promise, when it is loaded and fresh; undefined when
   * `get` would have to read (the caller then awaits `get`). The request path's common case costs
   * no microtask this way.
   */
  peek(key: K): { value: V } | undefined {
    const entry = this.#entries.get(key);
    if (entry?.loaded === undefined || this.#clock.now() - entry.loadedAtMs >= this.#maxAgeMs) return undefined;
    return entry.loaded;
  }

  /** Forgets one key (a change made by this instance), or every key. */
  invalidate(key?: K): void {
    if (key === undefined) this.#entries.clear();
    else this.#entries.delete(key);
  }
}
