/**
 * Failed client authentication, limited per realm, presented client id and source address
 * (docs/limits.md, "Failed client authentication"). Past `failuresMax` failures in a window of
 * `windowSeconds` (which opens at the first failure), the pair is refused with 429
 * `temporarily_unavailable` and `Retry-After` until the window closes. The same client from another
 * address is not affected.
 *
 * A blocked pair is refused before its secret is checked, a correct one included: otherwise the
 * 429 itself would tell an attacker which guess was right. Only `invalid_client` failures count;
 * successes neither count nor reset the count (a reset would let an attacker who shares an
 * address with a working client guess without end). Unknown client ids count like known ones,
 * keyed on the id as presented, so the limit does not tell them apart either.
 */
import { limitKey } from '../limits/limit-key.js';
import type { LimitStore } from '../limits/limit-store.js';
import { PerKeyQueue } from '../limits/per-key-queue.js';
import { OAuthError } from './oauth-error.js';

export interface AuthFailureLimit {
  /** Failures allowed per window; the next attempt is refused. 0 disables the limit. */
  failuresMax: number;
  /** The window opens at the first failure and lasts this long. 0 disables the limit. */
  windowSeconds: number;
  /**
   * The count is shared by several instances (Redis): each instance then checks one attempt of a
   * pair at a time, since attempts running on other instances are not seen here. Alone (the
   * count is the instance's own), up to `failuresMax` run at once. Default: alone.
   */
  shared?: boolean;
}

export const defaultAuthFailureLimit: AuthFailureLimit = { failuresMax: 10, windowSeconds: 60 };

export interface AuthAttempt {
  realm: string;
  /** The client id as presented (empty when none was); never the secret. */
  clientId: string;
  /** The peer address of the connection (the server does not trust X-Forwarded-For). */
  sourceAddress: string;
}

const blockedDescription = 'Too many failed client authentications from this address: retry later';

/** A pair's attempts running in this instance, and who waits for one of them to end. */
interface InFlight {
  running: number;
  waiting: Array<() => void>;
}

export class AuthFailureLimiter {
  readonly #store: LimitStore;
  readonly #limit: AuthFailureLimit;
  /** Admissions, one at a time per pair: the count read and the attempt started together. */
  readonly #queue = new PerKeyQueue();
  readonly #inFlight = new Map<string, InFlight>();

  constructor(store: LimitStore, limit: AuthFailureLimit) {
    this.#store = store;
    this.#limit = limit;
  }

  get enabled(): boolean {
    return this.#limit.failuresMax > 0 && this.#limit.windowSeconds > 0;
  }

  /**
   * Runs `authenticate` unless the attempt's pair is blocked (then throws the 429), and counts
   * its `invalid_client` failure. A burst cannot outrun the count: an attempt starts only while
   * the pair's failures and its attempts still running stay below the limit, each of them a
   * failure that may yet be counted; past that it waits for one to end. So a client that
   * authenticates well runs up to `failuresMax` attempts at once (a client assertion is verified
   * asynchronously: one at a time, a private_key_jwt client's token requests were bound to the
   * latency of one verification), and a burst of guesses is still checked exactly up to the
   * limit. With a count shared by several instances, an instance cannot see the others' running
   * attempts: each runs one at a time, as before (the limit then holds within one attempt per
   * instance).
   */
  async guard<T>(attempt: AuthAttempt, authenticate: () => Promise<T>): Promise<T> {
    if (!this.enabled) return authenticate();
    const key = limitKey('auth-failures', attempt.realm, attempt.clientId, attempt.sourceAddress);
    const flight = await this.#queue.run(key, () => this.#admit(key, attempt));
    try {
      return await authenticate();
    } catch (error) {
      // Counted before the attempt leaves the flight: the next admission reads the new count.
      if (error instanceof OAuthError && error.error === 'invalid_client') throw await this.#countFailure(key, attempt, error);
      throw error;
    } finally {
      flight.running -= 1;
      flight.waiting.shift()?.();
      if (flight.running === 0 && flight.waiting.length === 0) this.#inFlight.delete(key);
    }
  }

  /** Waits until the pair may start one more attempt (or throws the 429), and starts it. */
  async #admit(key: string, attempt: AuthAttempt): Promise<InFlight> {
    const concurrent = this.#limit.shared === true ? 1 : this.#limit.failuresMax;
    for (;;) {
      // Read before the count: admissions are one at a time, so running attempts can only end
      // (and count their failure) while the count is read, never start; the sum is never short.
      const runningBefore = this.#inFlight.get(key)?.running ?? 0;
      const window = await this.#store.peek(key);
      if (window.count >= this.#limit.failuresMax) throw this.#blocked(attempt, window.count, window.resetInMs);
      const flight = this.#inFlight.get(key);
      if (window.count + runningBefore < this.#limit.failuresMax && (flight?.running ?? 0) < concurrent) {
        const admitted = flight ?? { running: 0, waiting: [] };
        if (flight === undefined) this.#inFlight.set(key, admitted);
        admitted.running += 1;
        return admitted;
      }
      // The attempts counted may all have ended while the count was read: read again, then.
      if (flight === undefined || flight.running === 0) continue;
      await new Promise<void>((resolve) => flight.waiting.push(resolve));
    }
  }

  async #countFailure(key: string, attempt: AuthAttempt, failure: OAuthError): Promise<OAuthError> {
    const { count } = await this.#store.hit(key, this.#limit.windowSeconds * 1000);
    if (count !== this.#limit.failuresMax) return failure;
    const detail = `${failure.logDetail ?? 'client authentication failed'}; ${count} failures of client ${JSON.stringify(attempt.clientId)} from ${attempt.sourceAddress}: further attempts refused until the window closes`;
    return new OAuthError(failure.status, failure.error, failure.description, failure.headers, detail);
  }

  #blocked(attempt: AuthAttempt, count: number, resetInMs: number): OAuthError {
    const windowMs = this.#limit.windowSeconds * 1000;
    const retryAfterSeconds = Math.max(1, Math.ceil((resetInMs > 0 ? resetInMs : windowMs) / 1000));
    return new OAuthError(
      429,
      'temporarily_unavailable',
      blockedDescription,
      { 'Retry-After': String(retryAfterSeconds) },
      `client ${JSON.stringify(attempt.clientId)} from ${attempt.sourceAddress} refused without checking its secret: ${count} failed authentications in the window`,
    );
  }
}
