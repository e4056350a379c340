/**
 * A per-client token bucket, per instance: `ratePerSecond` requests a second on average, bursts
 * up to the same number. Off (0) by default; a limit protects the core from one runaway client.
 */
/** Clients tracked at most: the least recently seen is forgotten beyond it (a bound on memory). */
const clientsMax = 10_000;

export class RateLimiter {
  readonly #ratePerSecond: number;
  readonly #buckets = new Map<string, { tokens: number; refilledAtMs: number }>();

  constructor(ratePerSecond: number) {
    this.#ratePerSecond = ratePerSecond;
  }

  get enabled(): boolean {
    return this.#ratePerSecond > 0;
  }

  /** Takes one request from the client's bucket; answers the seconds to wait when it is empty. */
  take(clientKey: string, nowMs: number = Date.now()): { allowed: true } | { allowed: false; retryAfterSeconds: number } {
    if (!this.enabled) return { allowed: true };
    const bucket = this.#buckets.get(clientKey) ?? { tokens: this.#ratePerSecond, refilledAtMs: nowMs };
    this.#buckets.delete(clientKey);
    this.#buckets.set(clientKey, bucket);
    if (this.#buckets.size > clientsMax) {
      const oldest = this.#buckets.keys().next().value;
      if (oldest !== undefined) this.#buckets.delete(oldest);
    }
    bucket.tokens = Math.min(this.#ratePerSecond, bucket.tokens + ((nowMs - bucket.refilledAtMs) / 1000) * this.#ratePerSecond);
    bucket.refilledAtMs = nowMs;
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { allowed: true };
    }
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / this.#ratePerSecond)) };
  }
}
