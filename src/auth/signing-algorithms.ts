/**
 * The algorithms a realm's tokens are signed with, and a new realm's settings. A module of its own,
 * importing nothing, so that `coregate realms ...` checks a flag without loading jose.
 */
/** PS256 in every realm (docs/auth.md, "Client metadata and the fapi2 profile"); a `fapi2` realm's are PS256, ES256 and EdDSA (client-metadata.ts). */
export const signingAlgorithms = ['RS256', 'PS256', 'ES256', 'EdDSA'] as const;
export type SigningAlgorithm = (typeof signingAlgorithms)[number];

export function isSigningAlgorithm(value: string): value is SigningAlgorithm {
  return (signingAlgorithms as readonly string[]).includes(value);
}

/** A realm's settings when the data file or `coregate realms create` leaves them out. */
export const realmDefaults = {
  lifespanSeconds: 300,
  audience: 'coregate-api',
  signingAlg: 'RS256',
} as const;
