/**
 * A shared limit store (Redis) with this instance's memory behind it. When the shared store fails
 * or its connection is lost, the service keeps answering on per-instance limits: one warning per
 * outage, one info line when the shared store is back, and the state readable (`degraded`,
 * `fallbacks`) for health and metrics.
 *
 * While degraded, the shared store is tried again at most once per `primaryProbeIntervalMs` (and
 * at once when its connection comes back), so a Redis that times out costs one request a second
 * its command time-out, not every request. Counts made in memory during an outage stay in memory:
 * after it, the shared counts resume where Redis had them.
 */
import type { Logger } from '../log.js';
import type { BucketTake, LimitStore, TokenBucket, WindowCount } from './limit-store.js';

/** While degraded, at most one operation per interval tries the shared store again. */
export const primaryProbeIntervalMs = 1_000;

export interface FallbackLimitStoreOptions {
  logger: Logger;
  /** The shared store as logs name it, without credentials (e.g. `redis://cache:6379`). */
  primaryName: string;
  /** Milliseconds since the epoch: the instance's clock (src/core/clock.ts), a fake one in tests. */
  clock: () => number;
}

export class FallbackLimitStore implements LimitStore {
  readonly #primary: LimitStore;
  readonly #fallback: LimitStore;
  readonly #logger: Logger;
  readonly #primaryName: string;
  readonly #clock: () => number;
  #degraded = false;
  #retryPrimaryAtMs = 0;
  #fallbacks = 0;
  #outages = 0;
  #closed = false;

  constructor(primary: LimitStore, fallback: LimitStore, options: FallbackLimitStoreOptions) {
    this.#primary = primary;
    this.#fallback = fallback;
    this.#logger = options.logger;
    this.#primaryName = options.primaryName;
    this.#clock = options.clock;
  }

  /** True while the shared store is unusable and limits are kept per instance. */
  degraded(): boolean {
    return this.#degraded;
  }

  /** Operations answered from memory because the shared store failed or was down, since start. */
  fallbacks(): number {
    return this.#fallbacks;
  }

  /** Outages seen since start (each one warned about once). */
  outages(): number {
    return this.#outages;
  }

  /** The shared store failed or lost its connection. */
  primaryDown(reason: string): void {
    this.#retryPrimaryAtMs = this.#clock() + primaryProbeIntervalMs;
    if (this.#degraded || this.#closed) return;
    this.#degraded = true;
    this.#outages += 1;
    this.#logger.warn(
      { limitStore: this.#primaryName, reason },
      'shared limit store unreachable: limits are kept per instance until it is back',
    );
  }

  /** The shared store answered or reconnected. */
  primaryUp(): void {
    this.#retryPrimaryAtMs = 0;
    if (!this.#degraded || this.#closed) return;
    this.#degraded = false;
    this.#logger.info({ limitStore: this.#primaryName, fallbacks: this.#fallbacks }, 'shared limit store reachable again: limits are shared');
  }

  hit(key: string, windowMs: number): Promise<WindowCount> {
    return this.#run((store) => store.hit(key, windowMs));
  }

  peek(key: string): Promise<WindowCount> {
    return this.#run((store) => store.peek(key));
  }

  take(key: string, bucket: TokenBucket): Promise<BucketTake> {
    return this.#run((store) => store.take(key, bucket));
  }

  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all([this.#primary.close(), this.#fallback.close()]);
  }

  async #run<T>(operation: (store: LimitStore) => Promise<T>): Promise<T> {
    if (!this.#degraded || this.#clock() >= this.#retryPrimaryAtMs) {
      try {
        const result = await operation(this.#primary);
        this.primaryUp();
        return result;
      } catch (error) {
        this.primaryDown(error instanceof Error ? error.message : String(error));
      }
    }
    this.#fallbacks += 1;
    return operation(this.#fallback);
  }
}
