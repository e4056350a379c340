/**
 * Key files as the CLI takes them (docs/auth.md, "The SDK and the CLI"): a private key, PEM
 * (PKCS#8, or what openssl genpkey writes) or a private JWK; a client's public keys, a JWK set, one
 * JWK, or a PEM public key. node:crypto reads them: an operator command loads no JOSE library
 * (docs/performance.md).
 */
import { createHash, createPrivateKey, createPublicKey, type JsonWebKey, type KeyObject } from 'node:crypto';
import type { ClientJwks } from '../core/client-registration.js';
import { NamedFileError, readNamedFile } from './named-file.js';

export type KeyAlgorithm = 'ES256' | 'PS256' | 'EdDSA';

export class KeyFileError extends Error {}

/** The key file's text; one that cannot be read is refused in words (named-file.ts), as a key file's problem. */
function readKeyFile(flag: string, file: string, what: string): string {
  try {
    return readNamedFile(flag, file, what);
  } catch (error) {
    if (error instanceof NamedFileError) throw new KeyFileError(error.message);
    throw error;
  }
}

/** EC P-256 signs ES256, RSA PS256 (FAPI 2.0's), Ed25519 EdDSA. */
export function algorithmOf(flag: string, file: string, key: KeyObject): KeyAlgorithm {
  const type = key.asymmetricKeyType;
  if (type === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1') return 'ES256';
  if (type === 'rsa' || type === 'rsa-pss') return 'PS256';
  if (type === 'ed25519') return 'EdDSA';
  throw new KeyFileError(`${flag}: ${file} is a ${type ?? 'unknown'} key; use EC P-256 (ES256), RSA (PS256) or Ed25519 (EdDSA)`);
}

/** A private key file, with the `kid` of a JWK that has one. */
export function readPrivateKey(flag: string, file: string): { key: KeyObject; alg: KeyAlgorithm; kid: string | undefined } {
  const text = readKeyFile(flag, file, 'the private key (PEM, or a JWK with its private part)');
  let key: KeyObject;
  let kid: string | undefined;
  try {
    if (text.trimStart().startsWith('{')) {
      const jwk = JSON.parse(text) as JsonWebKey & { kid?: string };
      key = createPrivateKey({ key: jwk, format: 'jwk' });
      kid = jwk.kid;
    } else {
      key = createPrivateKey(text);
    }
  } catch {
    throw new KeyFileError(`${flag}: ${file} holds no private key (PEM, or a JWK with its private part)`);
  }
  return { key, alg: algorithmOf(flag, file, key), kid };
}

/**
 * A client's public keys: a JWK set as it is (the rules of docs/auth.md, "Client metadata and the
 * fapi2 profile", check its members), one JWK, or a PEM public key made into a JWK whose `kid` is
 * its RFC 7638 thumbprint.
 */
export function readPublicKeys(flag: string, file: string): ClientJwks {
  const text = readKeyFile(flag, file, 'the public keys (a JWK set, a JWK or a PEM public key)');
  if (text.includes('-----BEGIN')) {
    let key: KeyObject;
    try {
      key = createPublicKey(text);
    } catch {
      throw new KeyFileError(`${flag}: ${file} holds no public key`);
    }
    const alg = algorithmOf(flag, file, key);
    const jwk = key.export({ format: 'jwk' }) as Record<string, string> & { kty: string };
    return { keys: [{ ...jwk, kid: thumbprint(jwk), alg, use: 'sig' }] };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new KeyFileError(`${flag}: ${file} is neither JSON (a JWK set or a JWK) nor a PEM public key`);
  }
  const set = typeof parsed === 'object' && parsed !== null && 'keys' in parsed ? parsed : { keys: [parsed] };
  const keys = (set as { keys?: unknown }).keys;
  if (!Array.isArray(keys) || keys.some((key) => typeof key !== 'object' || key === null || typeof (key as { kty?: unknown }).kty !== 'string')) {
    throw new KeyFileError(`${flag}: ${file} must hold a JWK set {"keys": [{"kty": ...}]}, a JWK or a PEM public key`);
  }
  return set as ClientJwks;
}

/** RFC 7638: SHA-256 of the required members in lexicographic order, base64url. */
export function thumbprint(jwk: Record<string, string>): string {
  const required: Record<string, string[]> = { EC: ['crv', 'kty', 'x', 'y'], RSA: ['e', 'kty', 'n'], OKP: ['crv', 'kty', 'x'] };
  const members = required[jwk.kty ?? ''] ?? [];
  const canonical = `{${members.map((name) => `${JSON.stringify(name)}:${JSON.stringify(jwk[name])}`).join(',')}}`;
  return createHash('sha256').update(canonical).digest('base64url');
}
