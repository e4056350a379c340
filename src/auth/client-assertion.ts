/**
 * `private_key_jwt` (RFC 7523 §2.2; docs/auth.md, "private_key_jwt"): the client proves itself with
 * a JWT signed by one of its registered keys. jose verifies the signature against the client's
 * JWKS, the allowed algorithms and `iss`/`sub`; the audience, lifetime and `jti` rules are
 * here. Once jose accepted an assertion, the next ones under the same protected header (a client
 * signs them all alike) are verified with node:crypto and the key jose chose (jws-verify.ts, issue
 * 42: the same checks and refusals at about half of jose's CPU). Nothing is recorded: the
 * assertion's use (`replay`) is recorded by the caller once the request passed its other checks.
 * Every refusal is `invalid_client` (the caller's), its cause for the log.
 */
import { KeyObject } from 'node:crypto';
import { createLocalJWKSet, decodeProtectedHeader, errors, jwtVerify, type CryptoKey, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose';
import { LruMap } from '../cache/lru-map.js';
import { dateOf, type Clock } from '../core/clock.js';
import { ExpectedError } from '../core/expected-error.js';
import { assertionAlgorithms, fapiAlgorithms, type RealmProfile } from './client-metadata.js';
import { verifyKnownHeaderJwt, type KnownHeaderKey } from './jws-verify.js';
import type { ReplayMark } from './replay-record.js';
import { isSigningAlgorithm } from './signing-algorithms.js';

export const clientAssertionType = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
/** `exp` at most 5 minutes after `iat` (or after now without one): docs/auth.md, "private_key_jwt". */
export const assertionLifetimeMaxSeconds = 300;
/** `iat`/`nbf` up to this far ahead of this clock are accepted (FAPI 2.0 §5.3.2.1: 10 s; beyond 60 s refused). */
export const assertionFutureMaxSeconds = 10;
/** An assertion is a few hundred bytes to a few kilobytes; one this long is refused unread. */
export const assertionCharsMax = 16_384;

export class AssertionRejected extends ExpectedError {
  override name = 'AssertionRejected';
}

export interface AssertionExpectation {
  clientId: string;
  jwks: JSONWebKeySet;
  profile: RealmProfile | null;
  /** The realm's issuer identifier: the audience of a `fapi2` realm's assertions, and of any realm's. */
  issuer: string;
  /** Outside a `fapi2` realm the endpoint's URL is an audience too (the token endpoint's, as RFC 7523 has it). */
  endpointUrls: readonly string[];
}

/** Clients' key sets kept imported (jose's local JWKS imports each key once): a client signs every assertion with one key. */
export const clientKeySetsMax = 1_000;

/** Protected headers of one key set whose key jose resolved: a client signs with one or two keys. */
const knownHeadersPerKeySet = 16;
/** A longer header is verified by jose each time, never kept (an assertion's is a few dozen characters). */
const knownHeaderCharsMax = 1_024;

interface KeySet {
  keys: JWTVerifyGetKey;
  /** The key jose resolved for each protected header it accepted, by the realm's profile and the header's text. */
  known: LruMap<string, KnownHeaderKey>;
}

/** Verifies client assertions against their clients' keys, imported once per key set. */
export class ClientAssertionVerifier {
  readonly #keySets = new LruMap<string, KeySet>(clientKeySetsMax);

  constructor(readonly clock: Clock) {}

  verify(assertion: string, expected: AssertionExpectation): Promise<{ replay: ReplayMark }> {
    // Keyed by the set's text: a client whose keys change gets a new entry, never the old keys.
    const text = keySetText(expected.jwks);
    let keySet = this.#keySets.get(text);
    if (keySet === undefined) {
      try {
        keySet = { keys: createLocalJWKSet(expected.jwks), known: new LruMap(knownHeadersPerKeySet) };
      } catch {
        // The registration's rules keep such sets out; one that slipped in refuses, never a 500.
        return Promise.reject(new AssertionRejected('the client\'s registered keys are not a JWK set'));
      }
      this.#keySets.set(text, keySet);
    }
    if (assertion.length > assertionCharsMax) return Promise.reject(new AssertionRejected('the client assertion is too long'));
    // The header's text under the realm's profile (which decides the algorithms allowed).
    const headerEnd = assertion.indexOf('.');
    const knownAs = headerEnd > 0 && headerEnd <= knownHeaderCharsMax ? `${expected.profile ?? ''}:${assertion.slice(0, headerEnd)}` : undefined;
    const known = knownAs === undefined ? undefined : keySet.known.get(knownAs);
    if (known !== undefined) {
      let payload: Record<string, unknown> | undefined;
      try {
        payload = verifyKnownHeaderJwt(assertion, known, claimsOptions(expected, this.clock));
      } catch (error) {
        return Promise.reject(new AssertionRejected(`the client assertion is invalid: ${assertionProblem(error)}`));
      }
      if (payload !== undefined) {
        try {
          return Promise.resolve(assertionUse(payload, expected, this.clock));
        } catch (error) {
          return Promise.reject(error);
        }
      }
    }
    return verifyClientAssertion(assertion, expected, this.clock, keySet.keys, (key) => {
      if (knownAs !== undefined) keySet.known.set(knownAs, key);
    });
  }
}

/** jose's options for an assertion of `expected`'s client, now on `clock`. */
/**
 * The key set's text, made once per set object: a client's registration (the auth snapshot's)
 * hands the same object to every request until it changes, and serializing it per request was a
 * measurable part of a private_key_jwt token's own work (docs/performance.md, issue 42).
 */
const keySetTexts = new WeakMap<object, string>();

function keySetText(jwks: JSONWebKeySet): string {
  let text = keySetTexts.get(jwks);
  if (text === undefined) {
    text = JSON.stringify(jwks);
    keySetTexts.set(jwks, text);
  }
  return text;
}

function claimsOptions(expected: AssertionExpectation, clock: Clock) {
  return {
    issuer: expected.clientId,
    subject: expected.clientId,
    requiredClaims: ['exp', 'jti', 'iss', 'sub', 'aud'],
    // jose's epoch: the date's whole seconds.
    nowSeconds: Math.floor(clock.now() / 1000),
    clockToleranceSeconds: assertionFutureMaxSeconds,
  };
}

/** jose's full check; `accepted` learns the key jose resolved, once it accepted the assertion. */
async function verifyClientAssertion(assertion: string, expected: AssertionExpectation, clock: Clock, keys: JWTVerifyGetKey, accepted: (key: KnownHeaderKey) => void): Promise<{ replay: ReplayMark }> {
  const algorithms = expected.profile === 'fapi2' ? [...fapiAlgorithms] : [...assertionAlgorithms];
  let header: { alg?: string | undefined };
  try {
    header = decodeProtectedHeader(assertion);
  } catch {
    throw new AssertionRejected('the client assertion is not a JWT');
  }
  if (header.alg === undefined || !algorithms.includes(header.alg as never)) {
    throw new AssertionRejected(`the client assertion's alg ${JSON.stringify(header.alg ?? null)} is not one of ${algorithms.join(', ')}${expected.profile === 'fapi2' ? ' (a fapi2 realm)' : ''}`);
  }
  const options = claimsOptions(expected, clock);
  let payload: Record<string, unknown>;
  try {
    const verified = await jwtVerify(assertion, keys, {
      algorithms,
      issuer: options.issuer,
      subject: options.subject,
      currentDate: dateOf(clock),
      clockTolerance: options.clockToleranceSeconds,
      requiredClaims: options.requiredClaims,
    });
    payload = verified.payload;
    const alg = header.alg;
    // jose hands back the key it chose from the set (a CryptoKey); node:crypto takes it as a KeyObject.
    if (isSigningAlgorithm(alg) && verified.key !== undefined && !(verified.key instanceof Uint8Array)) {
      accepted({ alg, key: KeyObject.from(verified.key as CryptoKey as Parameters<typeof KeyObject.from>[0]) });
    }
  } catch (error) {
    throw new AssertionRejected(`the client assertion is invalid: ${assertionProblem(error)}`);
  }
  return assertionUse(payload, expected, clock);
}

/** The checks of docs/auth.md, "private_key_jwt", on an assertion jose's rules accepted, and the use to record; throws AssertionRejected. */
function assertionUse(payload: Record<string, unknown>, expected: AssertionExpectation, clock: Clock): { replay: ReplayMark } {
  const nowSeconds = clock.now() / 1000;
  const exp = payload.exp as number;
  if (exp <= nowSeconds) throw new AssertionRejected('the client assertion has expired');
  const iat = typeof payload.iat === 'number' ? payload.iat : undefined;
  if (iat !== undefined && iat > nowSeconds + assertionFutureMaxSeconds) throw new AssertionRejected('the client assertion\'s iat is in the future');
  if (exp > (iat ?? nowSeconds) + assertionLifetimeMaxSeconds) {
    throw new AssertionRejected(`the client assertion's exp is more than ${assertionLifetimeMaxSeconds} s after ${iat === undefined ? 'now' : 'its iat'}`);
  }
  checkAudience(payload.aud, expected);
  const jti = payload.jti;
  if (typeof jti !== 'string' || jti === '' || jti.length > 256) throw new AssertionRejected('the client assertion has no jti');
  // The earliest moment it could be accepted: 10 s before its iat and its nbf, or, without an iat,
  // 5 minutes before its exp (it is refused while exp is further than that from now). A record
  // that may have lost uses refuses one from before its own start (replay-record.ts).
  const nbf = typeof payload.nbf === 'number' ? payload.nbf - assertionFutureMaxSeconds : -Infinity;
  const acceptableFromSeconds = Math.max(iat === undefined ? exp - assertionLifetimeMaxSeconds : iat - assertionFutureMaxSeconds, nbf);
  return { replay: { parts: ['client-assertion', expected.issuer, expected.clientId, jti], expiresEpochMs: exp * 1000 + assertionFutureMaxSeconds * 1000, acceptableFromEpochMs: acceptableFromSeconds * 1000 } };
}

/** A `fapi2` realm: the issuer identifier, as a single string (FAPI 2.0 §5.3.2.1); elsewhere also the endpoint's URL, or an array holding one. */
function checkAudience(aud: unknown, expected: AssertionExpectation): void {
  if (expected.profile === 'fapi2') {
    if (aud !== expected.issuer) throw new AssertionRejected(`the client assertion's aud must be the issuer ${expected.issuer}, as a single string (a fapi2 realm)`);
    return;
  }
  const accepted = [expected.issuer, ...expected.endpointUrls];
  const audiences = Array.isArray(aud) ? aud : [aud];
  if (!audiences.some((value) => typeof value === 'string' && accepted.includes(value))) {
    throw new AssertionRejected(`the client assertion's aud must be the issuer ${expected.issuer} or the endpoint's URL`);
  }
}

function assertionProblem(error: unknown): string {
  if (error instanceof errors.JWTExpired) return 'it has expired';
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === 'iss' || error.claim === 'sub') return 'iss and sub must both be the client id';
    return `${error.claim}: ${error.reason === 'missing' ? 'missing' : error.message}`;
  }
  if (error instanceof errors.JWKSNoMatchingKey) return 'no registered key of the client matches it (kid, alg, key type)';
  if (error instanceof errors.JWSSignatureVerificationFailed) return 'the signature does not verify with the client\'s registered keys';
  if (error instanceof errors.JOSEAlgNotAllowed) return 'the algorithm is not allowed';
  if (error instanceof errors.JOSEError) return error.message;
  return 'it cannot be read';
}
