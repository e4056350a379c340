/**
 * Verification of a compact JWS JWT signed by one of coregate's own realms' keys, with
 * node:crypto's `verify` in libuv's thread pool (its callback form), as jws-sign.ts signs. jose
 * verifies through WebCrypto: 100–109 µs of CPU a forged token against 76–77 µs here, and 40 %
 * more forgeries answered a second (docs/performance.md, issue 28) — a forged token is what an
 * attacker sends, a different one each time. jose still verifies external issuers' tokens (their
 * JWKS, fetched and cached by jose) and decodes tokens.
 *
 * The checks, their order and the failures are jose's `jwtVerify` (compactVerify, then the claims
 * set) for the options bearer-auth.ts gives it, so that every answer stays the same: the header's
 * `alg` must be the key's and no critical extension is accepted (refuseCritical); then the
 * signature; then the payload, a JSON object; then `iss`, `aud` and `exp` present, `iss` and
 * `aud` as expected, `iat`, `nbf`, `exp` numbers when present, `nbf` not later than now plus the
 * tolerance, `exp` later than now minus it. A failure is thrown as jose throws it (its `code`, and `claim` for a claim), for
 * bearer-auth.ts's one mapping to refusals.
 */
import { KeyObject, verify } from 'node:crypto';
import type { CryptoKey } from 'jose';
import { ExpectedError } from '../core/expected-error.js';
import { signatureKey } from './jws-sign.js';
import type { SigningAlgorithm } from './signing-algorithms.js';

/** A verification failure, shaped as jose's errors (code, claim) are. */
export class JwtCheckFailed extends ExpectedError {
  constructor(
    message: string,
    readonly code: 'ERR_JWS_INVALID' | 'ERR_JOSE_NOT_SUPPORTED' | 'ERR_JOSE_ALG_NOT_ALLOWED' | 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED' | 'ERR_JWT_INVALID' | 'ERR_JWT_CLAIM_VALIDATION_FAILED' | 'ERR_JWT_EXPIRED',
    readonly claim?: string,
  ) {
    super(message);
  }
}

export interface JwtExpectations {
  issuer: string;
  audience: string;
  clockToleranceSeconds: number;
  /** Epoch seconds, whole (jose's `epoch`: the date's seconds, floored). */
  nowSeconds: number;
}

/** node:crypto's key for a realm's published CryptoKey, made once per key. */
const keyObjects = new WeakMap<CryptoKey, KeyObject>();

function keyObjectOf(key: CryptoKey): KeyObject {
  let keyObject = keyObjects.get(key);
  if (keyObject === undefined) {
    // jose's CryptoKey is WebCrypto's, which node:crypto converts.
    keyObject = KeyObject.from(key as Parameters<typeof KeyObject.from>[0]);
    keyObjects.set(key, keyObject);
  }
  return keyObject;
}

/** The token's claims once its signature (by `key`, an `alg` key) and claims check out; throws JwtCheckFailed otherwise. */
export async function verifyCompactJwt(token: string, alg: SigningAlgorithm, key: CryptoKey, expected: JwtExpectations): Promise<Record<string, unknown>> {
  const parts = token.split('.');
  if (parts.length !== 3) throw new JwtCheckFailed('Invalid Compact JWS', 'ERR_JWS_INVALID');
  const [encodedHeader = '', encodedPayload = '', encodedSignature = ''] = parts;
  // Buffer's base64url decoder skips what it does not know and drops a lone last character;
  // jose's refuses both. Only the alphabet, and no length that no encoding produces.
  const header = isBase64url(encodedHeader) ? parseObject(encodedHeader) : undefined;
  if (header === undefined) throw new JwtCheckFailed('JWS Protected Header is invalid', 'ERR_JWS_INVALID');
  if (header.crit !== undefined) refuseCritical(header.crit);
  if (typeof header.alg !== 'string' || header.alg === '') throw new JwtCheckFailed('JWS "alg" (Algorithm) Header Parameter missing or invalid', 'ERR_JWS_INVALID');
  if (header.alg !== alg) throw new JwtCheckFailed('"alg" (Algorithm) Header Parameter value not allowed', 'ERR_JOSE_ALG_NOT_ALLOWED');
  if (!isBase64url(encodedSignature)) throw new JwtCheckFailed('Failed to base64url decode the signature', 'ERR_JWS_INVALID');
  // A payload with characters outside base64url is refused before the signature, as jose does for
  // any payload a realm signs (128 characters or more; below, jose finds the signature wrong: the
  // same refusal, under another code).
  // From here on every character is ASCII: the signing input is the segments' bytes as sent.
  if (!base64urlAlphabet.test(encodedPayload)) throw new JwtCheckFailed('non-ASCII or non-base64url payload', 'ERR_JWS_INVALID');
  if (!(await signatureVerifies(alg, keyObjectOf(key), `${encodedHeader}.${encodedPayload}`, Buffer.from(encodedSignature, 'base64url')))) {
    throw new JwtCheckFailed('signature verification failed', 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED');
  }
  // jose decodes the payload after the signature: a length no encoding produces fails there.
  if (!isBase64url(encodedPayload)) throw new JwtCheckFailed('Failed to base64url decode the payload', 'ERR_JWS_INVALID');
  const payload = parseObject(encodedPayload);
  if (payload === undefined) throw new JwtCheckFailed('JWT Claims Set must be a top-level JSON object', 'ERR_JWT_INVALID');
  checkClaims(payload, expected);
  return payload;
}

/**
 * coregate's realms never sign with critical extensions. jose refuses a malformed `crit` as an
 * invalid JWS and an unknown extension as not supported; it knows `b64` (RFC 7797), which a JWT
 * cannot use unencoded and has no reason to declare: refused here as invalid (jose would accept
 * `crit: ["b64"], b64: true`, a token only the realm's key could have signed and never does).
 * Only the refusal's code can differ from jose's, never whether the token passes otherwise.
 */
function refuseCritical(crit: unknown): never {
  if (!Array.isArray(crit) || crit.length === 0 || crit.some((name) => typeof name !== 'string' || name === '')) {
    throw new JwtCheckFailed('"crit" (Critical) Header Parameter MUST be an array of non-empty strings when present', 'ERR_JWS_INVALID');
  }
  if (new Set(crit).size !== crit.length) throw new JwtCheckFailed('"crit" (Critical) Header Parameter MUST NOT contain duplicate values', 'ERR_JWS_INVALID');
  const unknown = (crit as string[]).find((name) => name !== 'b64');
  if (unknown !== undefined) throw new JwtCheckFailed(`Extension Header Parameter "${unknown}" is not recognized`, 'ERR_JOSE_NOT_SUPPORTED');
  throw new JwtCheckFailed('The "b64" (base64url-encode payload) Header Parameter is not accepted', 'ERR_JWS_INVALID');
}

/**
 * In libuv's thread pool (the callback form), as jws-sign.ts signs: the event loop only encodes.
 * A signature that does not verify answers false; a failure of the check itself (OpenSSL,
 * memory) is thrown as it is, so that the refusal it causes is not taken for the token's own.
 */
function signatureVerifies(alg: SigningAlgorithm, key: KeyObject, signingInput: string, signature: Buffer): Promise<boolean> {
  const { digest, key: verifyKey } = signatureKey(alg, key);
  return new Promise((resolve, reject) => {
    verify(digest, Buffer.from(signingInput, 'ascii'), verifyKey, signature, (error, valid) => (error ? reject(error) : resolve(valid)));
  });
}

const base64urlAlphabet = /^[A-Za-z0-9_-]*$/;

/** base64url without padding, of a length some bytes encode to (never 4k + 1). */
function isBase64url(segment: string): boolean {
  return segment.length % 4 !== 1 && base64urlAlphabet.test(segment);
}

/** jose reads the claims set as strict UTF-8: invalid bytes fail it. */
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** A base64url segment holding a JSON object (strict UTF-8), or undefined. */
function parseObject(segment: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(strictUtf8.decode(Buffer.from(segment, 'base64url')));
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** jose's validateClaimsSet for { issuer, audience, requiredClaims: ['exp'], clockTolerance }. */
function checkClaims(payload: Record<string, unknown>, expected: JwtExpectations): void {
  // jose checks presence in this order: iss, aud, then the required claims.
  for (const claim of ['iss', 'aud', 'exp']) {
    if (!Object.hasOwn(payload, claim)) throw new JwtCheckFailed(`missing required "${claim}" claim`, 'ERR_JWT_CLAIM_VALIDATION_FAILED', claim);
  }
  if (payload.iss !== expected.issuer) throw new JwtCheckFailed('unexpected "iss" claim value', 'ERR_JWT_CLAIM_VALIDATION_FAILED', 'iss');
  const audience = payload.aud;
  const audienceMatches = typeof audience === 'string' ? audience === expected.audience : Array.isArray(audience) && audience.includes(expected.audience);
  if (!audienceMatches) throw new JwtCheckFailed('unexpected "aud" claim value', 'ERR_JWT_CLAIM_VALIDATION_FAILED', 'aud');
  const now = expected.nowSeconds;
  const tolerance = expected.clockToleranceSeconds;
  if (payload.iat !== undefined && typeof payload.iat !== 'number') throw new JwtCheckFailed('"iat" claim must be a number', 'ERR_JWT_CLAIM_VALIDATION_FAILED', 'iat');
  if (payload.nbf !== undefined) {
    if (typeof payload.nbf !== 'number') throw new JwtCheckFailed('"nbf" claim must be a number', 'ERR_JWT_CLAIM_VALIDATION_FAILED', 'nbf');
    if (payload.nbf > now + tolerance) throw new JwtCheckFailed('"nbf" claim timestamp check failed', 'ERR_JWT_CLAIM_VALIDATION_FAILED', 'nbf');
  }
  if (typeof payload.exp !== 'number') throw new JwtCheckFailed('"exp" claim must be a number', 'ERR_JWT_CLAIM_VALIDATION_FAILED', 'exp');
  if (payload.exp <= now - tolerance) throw new JwtCheckFailed('"exp" claim timestamp check failed', 'ERR_JWT_EXPIRED', 'exp');
}
