/**
 * The source of a new realm's first signing key for in-process servers (StartOptions.signingKeys):
 * RS256 keys from the few the runner made for the whole run (scripts/test-signing-keys.mjs), in
 * turn from a random place, so that successive keys of one process differ (a rotation gets other
 * key material); every other algorithm fresh, as it costs well under a millisecond. A file run on
 * its own makes two keys on first use. Spawned `coregate serve` processes make their own, as a
 * deployment does.
 */
import { readFileSync } from 'node:fs';
import { importJWK, type JWK } from 'jose';
import { freshSigningKeys, type SigningKeyPair, type SigningKeySource } from '../../src/auth/signing-key-source.js';

let pool: Promise<SigningKeyPair[]> | undefined;
let next = Math.floor(Math.random() * 1024);

async function runKeys(): Promise<SigningKeyPair[]> {
  const file = process.env.COREGATE_TEST_SIGNING_KEYS;
  if (file === undefined) return Promise.all([freshSigningKeys('RS256'), freshSigningKeys('RS256')]);
  const privateJwks = JSON.parse(readFileSync(file, 'utf8')) as JWK[];
  return Promise.all(
    privateJwks.map(async (jwk) => {
      const { kty, n, e } = jwk;
      return {
        privateKey: (await importJWK(jwk, 'RS256', { extractable: true })) as SigningKeyPair['privateKey'],
        publicKey: (await importJWK({ kty, n, e }, 'RS256', { extractable: true })) as SigningKeyPair['publicKey'],
      };
    }),
  );
}

export const runSigningKeys: SigningKeySource = async (alg) => {
  if (alg !== 'RS256') return freshSigningKeys(alg);
  pool ??= runKeys();
  const keys = await pool;
  return keys[next++ % keys.length] as SigningKeyPair;
};
