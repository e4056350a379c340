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
import { errors, type CryptoKey } from 'jose';
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

/**
 * JWTs signed by keys that are not coregate's — DPoP proofs (their header's key) and client
 * assertions (a client's registered key) — verified with node:crypto once jose has verified one
 * with the same protected header (issue 42). jose's jwtVerify through WebCrypto cost about twice
 * the CPU of node:crypto's synchronous `verify` for an ES256 proof (docs/performance.md, "FAPI at
 * the cost of one signature (issue 42)").
 * A client signs every proof of a session, every assertion, under one header (its `alg`, its key
 * or `kid`, `typ`): what jose decides from the header alone — its parsing, `crit` and `b64`, the
 * allowed `alg`, `typ`, the key it resolves (from the header's JWK, or the client's key set) and
 * whether that key suits the algorithm — was decided when jose accepted the first token of that
 * header, and the caller keeps the key under the header's exact text. Here only what each token
 * brings is checked, as jose checks it, in jose's order and with jose's errors (its classes,
 * messages, `claim` and `reason`, so that each caller's one mapping to refusals stays as it is):
 * the signature, then the payload as a JSON object of strict UTF-8, then the claims set
 * (`checkClaimsAsJose`). A token of another shape than the ordinary one — not three segments,
 * characters outside base64url, a signature of a length no encoding produces — is left to jose
 * (answered undefined). Synchronous, on the event loop: the thread pool's hand-off cost more CPU
 * than it spared here (measured), and every request that carries a proof needs its check.
 */
export interface KnownHeaderKey {
  alg: SigningAlgorithm;
  key: KeyObject;
}

/** The options of jose's validateClaimsSet that proofs and assertions use. */
export interface JoseClaimsOptions {
  issuer?: string;
  subject?: string;
  requiredClaims?: readonly string[];
  /** jose's `currentDate`, in epoch seconds, whole (jose floors the date). */
  nowSeconds: number;
  clockToleranceSeconds: number;
}

/** The claims set of `token` (its header verified before with `known.key`), or undefined to let jose decide; throws jose's error. */
export function verifyKnownHeaderJwt(token: string, known: KnownHeaderKey, options: JoseClaimsOptions): Record<string, unknown> | undefined {
  const firstDot = token.indexOf('.');
  const secondDot = token.indexOf('.', firstDot + 1);
  if (firstDot < 0 || secondDot < 0 || token.indexOf('.', secondDot + 1) >= 0) return undefined;
  const encodedPayload = token.slice(firstDot + 1, secondDot);
  const encodedSignature = token.slice(secondDot + 1);
  if (!base64urlAlphabet.test(encodedPayload) || !isBase64url(encodedSignature)) return undefined;
  const { digest, key } = signatureKey(known.alg, known.key);
  let verified = false;
  try {
    verified = verify(digest, Buffer.from(token.slice(0, secondDot), 'ascii'), key, Buffer.from(encodedSignature, 'base64url'));
  } catch {
    // jose: whatever WebCrypto throws is a signature that does not verify.
  }
  if (!verified) throw new errors.JWSSignatureVerificationFailed();
  if (encodedPayload.length % 4 === 1) throw new errors.JWSInvalid('Failed to base64url decode the payload');
  let claims: unknown;
  try {
    claims = JSON.parse(strictUtf8.decode(Buffer.from(encodedPayload, 'base64url')));
  } catch {
    claims = undefined;
  }
  if (typeof claims !== 'object' || claims === null || Array.isArray(claims)) throw new errors.JWTInvalid('JWT Claims Set must be a top-level JSON object');
  checkClaimsAsJose(claims as Record<string, unknown>, options);
  return claims as Record<string, unknown>;
}

/** jose's validateClaimsSet (jose 6) for the options above, without `typ` (the header's, decided with it). */
export function checkClaimsAsJose(claims: Record<string, unknown>, options: JoseClaimsOptions): void {
  const presence = [...(options.requiredClaims ?? [])];
  if (options.subject !== undefined) presence.push('sub');
  if (options.issuer !== undefined) presence.push('iss');
  for (const claim of new Set(presence.reverse())) {
    if (!Object.hasOwn(claims, claim)) throw new errors.JWTClaimValidationFailed(`missing required "${claim}" claim`, claims, claim, 'missing');
  }
  if (options.issuer !== undefined && claims.iss !== options.issuer) throw new errors.JWTClaimValidationFailed('unexpected "iss" claim value', claims, 'iss', 'check_failed');
  if (options.subject !== undefined && claims.sub !== options.subject) throw new errors.JWTClaimValidationFailed('unexpected "sub" claim value', claims, 'sub', 'check_failed');
  const now = options.nowSeconds;
  const tolerance = options.clockToleranceSeconds;
  numericDate(claims, 'iat');
  const nbf = numericDate(claims, 'nbf');
  if (nbf !== undefined && nbf > now + tolerance) throw new errors.JWTClaimValidationFailed('"nbf" claim timestamp check failed', claims, 'nbf', 'check_failed');
  const exp = numericDate(claims, 'exp');
  if (exp !== undefined && exp <= now - tolerance) throw new errors.JWTExpired('"exp" claim timestamp check failed', claims, 'exp', 'check_failed');
}

function numericDate(claims: Record<string, unknown>, claim: 'iat' | 'nbf' | 'exp'): number | undefined {
  const value = claims[claim];
  if (value === undefined) return undefined;
  if (typeof value !== 'number') throw new errors.JWTClaimValidationFailed(`"${claim}" claim must be a number`, claims, claim, 'invalid');
  return value;
}
