/**
 * Where a realm's new signing keys come from: a fresh key pair each time (jose's `generateKeyPair`),
 * unless the wiring hands in another source, as it hands in a clock. An RSA key pair costs about a
 * quarter of a second of CPU to generate (an ES256 or EdDSA one well under a millisecond), and each
 * new store's first realm key is one: the test suite, which starts hundreds of servers on new
 * stores, hands in a few RSA key pairs made once per run (test/helpers/signing-keys.ts).
 */
import { generateKeyPair, type CryptoKey } from 'jose';
import type { SigningAlgorithm } from './signing-algorithms.js';

export interface SigningKeyPair {
  publicKey: CryptoKey;
  privateKey: CryptoKey;
}

/** Answers an extractable key pair of `alg` (its JWKs are stored, the private one sealed). */
export type SigningKeySource = (alg: SigningAlgorithm) => Promise<SigningKeyPair>;

/** A new key pair for every key: what a deployment uses. */
export const freshSigningKeys: SigningKeySource = (alg) => generateKeyPair(alg, { extractable: true });
