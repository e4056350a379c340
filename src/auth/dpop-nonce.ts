/**
 * Server nonces for DPoP proofs (RFC 9449 §8), valid on every instance without shared state: a
 * nonce is a time step and an HMAC of it (and of the realm) under a key every instance derives
 * from the store's sealed secret-hash key. A nonce of this step or the one before is accepted, so
 * a nonce lives one to two steps; a client told `use_dpop_nonce` takes the one in the `DPoP-Nonce`
 * header and tries again.
 */
import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../core/clock.js';

/** A nonce's time step: a nonce is accepted in its step and the next. */
export const dpopNonceStepMs = 60_000;

export class DpopNonces {
  readonly #key: Buffer;
  readonly #clock: Clock;

  /** `secretHashKey`: the store's (secret-hash-key.ts), the same on every instance. */
  constructor(secretHashKey: Buffer, clock: Clock) {
    this.#key = Buffer.from(hkdfSync('sha256', secretHashKey, Buffer.alloc(0), 'coregate dpop nonce v1', 32));
    this.#clock = clock;
  }

  /** The nonce to hand out now for the realm. */
  current(realm: string): string {
    return this.#nonce(realm, this.#step());
  }

  accepts(realm: string, nonce: string | undefined): boolean {
    if (nonce === undefined) return false;
    const step = this.#step();
    return [step, step - 1].some((candidate) => equal(nonce, this.#nonce(realm, candidate)));
  }

  #step(): number {
    return Math.floor(this.#clock.now() / dpopNonceStepMs);
  }

  #nonce(realm: string, step: number): string {
    const mac = createHmac('sha256', this.#key).update(`${realm}\n${step}`).digest('base64url').slice(0, 22);
    return `${step.toString(36)}.${mac}`;
  }
}

function equal(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
