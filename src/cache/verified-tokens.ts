/**
 * Tokens whose signature and claims were verified, kept (in an LruMap keyed by the token) until
 * they expire so that a token reused for many calls is verified once. What may change during a
 * token's life — the realm's not-before, its keys, the token's client (disabled or revoked), the
 * directory — is still checked on every use, from snapshots. Bounded: a flood of distinct tokens
 * evicts the least recently used.
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

/**
 * Tokens refused for a reason that belongs to the token itself and can never change (not a JWT,
 * an algorithm not accepted, a signature that does not verify, expired, another issuer's or
 * audience's, no client named), kept with the refusal's message so that the same token sent
 * again is refused at the cost of a malformed one: a client retrying with an expired token, or
 * anyone replaying a forged one, cost a signature check (and a promise) per request, twice a
 * retrieve's CPU. Refusals that depend on the realm's or its clients' state (an unknown key, an
 * untrusted issuer, a revocation, a disabled client) or on time still to come (nbf, iat) are never
 * kept: what grants access works at once (docs/deployment.md, "What an instance keeps in memory").
 */
export const refusedTokensMax = 10_000;
/** A refused token longer than this is not kept (a realm's tokens are about 1 KiB): at most ~40 MiB. */
export const refusedTokenCharsMax = 4_096;
