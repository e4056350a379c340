/**
 * Client secrets are high-entropy, so a keyed SHA-256 (HMAC) is enough to store them: a slow
 * KDF would only slow the token path. Comparison is constant-time.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** 256 bits, as generated secrets must have (docs/auth.md, "Client secrets"). */
const generatedSecretBytes = 32;

export function generateClientSecret(): string {
  return randomBytes(generatedSecretBytes).toString('base64url');
}

/** The stored hash of a client without a secret (private_key_jwt, tls_client_auth): no secret's hash is empty, so none matches. */
export const noSecretHash = '';

export function hashClientSecret(hashKey: Buffer, secret: string): string {
  return createHmac('sha256', hashKey).update(secret, 'utf8').digest('hex');
}

/** Compares in constant time; a missing stored hash still costs one HMAC so timing reveals nothing. */
export function verifyClientSecret(hashKey: Buffer, secret: string, storedHash: string | undefined): boolean {
  const presented = Buffer.from(hashClientSecret(hashKey, secret), 'hex');
  const expected = Buffer.from(storedHash ?? '0'.repeat(64), 'hex');
  const equal = presented.length === expected.length && timingSafeEqual(presented, expected);
  return equal && storedHash !== undefined;
}
