/**
 * Tokens whose signature and claims were verified, kept (in an LruMap keyed by the token) until
 * they expire so that a token reused for many calls is verified once. What may change during a
 * token's life — the realm's not-before, its keys, the directory — is still checked on every
 * use, from snapshots. Bounded: a flood of distinct tokens evicts the least recently used.
 */

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
