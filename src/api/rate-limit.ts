/**
 * A per-client token bucket on the business API: `ratePerSecond` requests a second on average,
 * bursts up to the same number. Off (0) by default; a limit protects the core from one runaway
 * client. The bucket lives in the instance's limit store: shared by every instance when Redis is
 * configured, per instance otherwise (src/limits/).
 */
import { limitKey } from '../limits/limit-key.js';
import type { LimitStore } from '../limits/limit-store.js';

export type Allowance = { allowed: true } | { allowed: false; retryAfterSeconds: number };

export class RateLimiter {
  readonly #ratePerSecond: number;
  readonly #store: LimitStore;

  constructor(ratePerSecond: number, store: LimitStore) {
    this.#ratePerSecond = ratePerSecond;
    this.#store = store;
  }

  get enabled(): boolean {
    return this.#ratePerSecond > 0;
  }

  /** Takes one request from the client's bucket; answers the seconds to wait when it is empty. */
  async take(clientKey: string): Promise<Allowance> {
    if (!this.enabled) return { allowed: true };
    const taken = await this.#store.take(limitKey('rate', clientKey), { ratePerSecond: this.#ratePerSecond, burst: this.#ratePerSecond });
    if (taken.allowed) return taken;
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(taken.retryAfterMs / 1000)) };
  }
}
