/**
 * Tokens whose signature and claims were verified, kept until they expire so that a token
 * reused for many calls is verified once. What may change during a token's life — the realm's
 * not-before, its keys, the directory — is still checked on every use, from snapshots.
 * Bounded: a flood of distinct tokens evicts the least recently used.
 */
import { LruMap } from './lru-map.js';

/** About 1 KiB per token: a few MiB at most. */
export const verifiedTokensMax = 10_000;

export interface VerifiedToken<P> {
  principal: P;
  /** Epoch seconds. */
  expiresAt: number;
  issuedAt: number;
  /** Set for tokens of coregate's own realms: the realm and the key generation they were verified under. */
  realm?: { name: string; keyGeneration: number };
}

export class VerifiedTokens<P> {
  readonly #entries: LruMap<string, VerifiedToken<P>>;

  constructor(entriesMax = verifiedTokensMax) {
    this.#entries = new LruMap(entriesMax);
  }

  get(token: string): VerifiedToken<P> | undefined {
    return this.#entries.get(token);
  }

  remember(token: string, verified: VerifiedToken<P>): void {
    this.#entries.set(token, verified);
  }

  forget(token: string): void {
    this.#entries.delete(token);
  }

  get size(): number {
    return this.#entries.size;
  }
}
