/**
 * DPoP proofs (RFC 9449 §4.3; docs/auth.md, "DPoP at the token endpoint" and "DPoP at the API"), at
 * the token endpoint and at the business API: a JWT of type `dpop+jwt`, signed PS256, ES256 or
 * EdDSA by the public key in its own header, whose `htm` and `htu` are this request's, whose `iat`
 * is within 60 s before and 10 s after now, with a `jti`, and (with a token) an `ath` that is the
 * token's SHA-256. jose imports the header's key (public only) and verifies the first proof of a
 * header, its signature and type; the next proofs of that header are verified with node:crypto
 * (jws-verify.ts, issue 42: the same checks and refusals at about half of jose's CPU); the rest
 * is here. Nothing is recorded: the caller records the proof's use (`replay`) once the request has
 * passed every other check, so that a request refused for another reason leaves its proof's `jti`
 * free.
 */
import { hash, KeyObject } from 'node:crypto';
import { calculateJwkThumbprint, decodeProtectedHeader, errors, importJWK, jwtVerify, type CryptoKey, type ProtectedHeaderParameters } from 'jose';
import { LruMap } from '../cache/lru-map.js';
import { dateOf, type Clock } from '../core/clock.js';
import { ExpectedError } from '../core/expected-error.js';
import { fapiAlgorithms, privateJwkMembers } from './client-metadata.js';
import { verifyKnownHeaderJwt } from './jws-verify.js';
import type { ReplayMark } from './replay-record.js';
import type { SigningAlgorithm } from './signing-algorithms.js';

/** A proof made up to 60 s ago, or up to 10 s ahead of this clock (docs/auth.md, "DPoP at the token endpoint"). */
export const proofAgeMaxSeconds = 60;
export const proofFutureMaxSeconds = 10;
/** A proof is a few hundred bytes; a header this long is refused before it is parsed. */
export const proofCharsMax = 8_192;
/** The algorithms a proof may use, as the challenges list them. */
export const dpopAlgorithms: readonly string[] = fapiAlgorithms;

export class DpopProofRejected extends ExpectedError {
  override name = 'DpopProofRejected';

  /** `useNonce`: the proof lacks the server's current nonce (RFC 9449 §8: `use_dpop_nonce`). */
  constructor(message: string, readonly useNonce = false) {
    super(message);
  }
}

export interface ProofExpectation {
  /** The request's method. */
  method: string;
  /** The request's URL as the caller addressed it (the service's public URL and the path). */
  url: string;
  /** The access token sent with the proof (the business API): `ath` must be its SHA-256. */
  accessToken?: string;
  /** Whether the proof's `nonce` is one this service issued and still accepts; absent: no nonce required. */
  acceptsNonce?: (nonce: string | undefined) => boolean;
}

export interface VerifiedProof {
  /** RFC 7638 thumbprint (SHA-256) of the proof's key: the token's `cnf.jkt`. */
  jkt: string;
  /** The proof's use, to record once the request passed every other check. */
  replay: ReplayMark;
}

/** The one proof of a request: none, or exactly one `DPoP` header (RFC 9449 §4.3: one, and a JWT). */
export function singleProof(rawHeaders: readonly string[]): string | undefined {
  let proof: string | undefined;
  for (let index = 0; index < rawHeaders.length; index += 2) {
    if (rawHeaders[index]?.toLowerCase() !== 'dpop') continue;
    if (proof !== undefined) throw new DpopProofRejected('The request has more than one DPoP header');
    proof = rawHeaders[index + 1] ?? '';
  }
  return proof;
}

/** Proof headers whose key is kept imported: a DPoP session signs every proof with one key. */
export const proofKeysMax = 10_000;
/** A longer header (an RSA key is ~700 characters) is verified each time, never kept. */
const proofHeaderCharsCached = 2_048;

interface ProofKey {
  key: CryptoKey;
  /** The same key as node:crypto takes it: the next proofs of the header are verified with it. */
  keyObject: KeyObject;
  alg: SigningAlgorithm;
  jkt: string;
}

/**
 * Verifies proofs. A session's proofs share one protected header (typ, alg, its public key), so
 * the key each header carries is imported and its thumbprint computed once, keyed by the header's
 * text: importing it and hashing it anew cost most of a proof's CPU. jose verifies a header's
 * first proof; once it accepted one, the header's next proofs are verified by node:crypto with the
 * same key (jws-verify.ts `verifyKnownHeaderJwt`), which decides what jose would from the rest.
 */
export class DpopProofVerifier {
  readonly #keys = new LruMap<string, ProofKey>(proofKeysMax);

  constructor(readonly clock: Clock) {}

  async verify(proof: string, expected: ProofExpectation): Promise<VerifiedProof> {
    if (proof.length > proofCharsMax || !/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(proof)) {
      throw new DpopProofRejected('The DPoP proof is not a signed JWT');
    }
    // Keyed by the header's hash: a short key that keeps no proof alive (a slice would).
    const headerText = proof.slice(0, proof.indexOf('.'));
    const cacheKey = headerText.length <= proofHeaderCharsCached ? hash('sha256', headerText, 'base64url') : undefined;
    const cached = cacheKey === undefined ? undefined : this.#keys.get(cacheKey);
    const proofKey = cached ?? (await this.#importKey(proof));
    let payload: Record<string, unknown> | undefined;
    try {
      // jose's epoch: the date's whole seconds.
      if (cached !== undefined) payload = verifyKnownHeaderJwt(proof, { alg: cached.alg, key: cached.keyObject }, { nowSeconds: Math.floor(this.clock.now() / 1000), clockToleranceSeconds: proofFutureMaxSeconds });
      payload ??= (await jwtVerify(proof, proofKey.key, { typ: 'dpop+jwt', algorithms: [proofKey.alg], currentDate: dateOf(this.clock), clockTolerance: proofFutureMaxSeconds })).payload;
    } catch (error) {
      throw new DpopProofRejected(`The DPoP proof is invalid: ${proofProblem(error)}`);
    }
    // Only a key whose proof verified is kept: headers made up by anyone do not fill the cache.
    if (cached === undefined && cacheKey !== undefined) this.#keys.set(cacheKey, proofKey);
    const nowSeconds = this.clock.now() / 1000;
    const { iat, jti, htm, htu, nbf } = payload;
    if (typeof jti !== 'string' || jti === '' || jti.length > 256) throw new DpopProofRejected('The DPoP proof has no jti');
    if (typeof iat !== 'number' || !Number.isFinite(iat)) throw new DpopProofRejected('The DPoP proof has no iat');
    if (iat > nowSeconds + proofFutureMaxSeconds) throw new DpopProofRejected('The DPoP proof\'s iat is in the future');
    if (iat < nowSeconds - proofAgeMaxSeconds) throw new DpopProofRejected(`The DPoP proof's iat is more than ${proofAgeMaxSeconds} s old`);
    if (htm !== expected.method) throw new DpopProofRejected(`The DPoP proof's htm is not ${expected.method}`);
    if (typeof htu !== 'string' || !sameResource(htu, expected.url)) throw new DpopProofRejected(`The DPoP proof's htu is not ${withoutQuery(expected.url) ?? expected.url}`);
    if (expected.accessToken !== undefined) {
      const ath = hash('sha256', expected.accessToken, 'base64url');
      if (payload.ath !== ath) throw new DpopProofRejected('The DPoP proof\'s ath is not the access token\'s hash');
    }
    if (expected.acceptsNonce !== undefined) {
      const nonce = typeof payload.nonce === 'string' ? payload.nonce : undefined;
      if (!expected.acceptsNonce(nonce)) throw new DpopProofRejected(nonce === undefined ? 'The DPoP proof needs a nonce' : 'The DPoP proof\'s nonce is not current', true);
    }
    // Kept until the proof's iat leaves the window: later, the window refuses it by itself. It
    // could be accepted from 10 s before its iat (or nbf) on: a record that may have lost uses
    // refuses it if that is before its own start (replay-record.ts).
    const { jkt } = proofKey;
    const acceptableFromSeconds = Math.max(iat, typeof nbf === 'number' ? nbf : -Infinity) - proofFutureMaxSeconds;
    return { jkt, replay: { parts: ['dpop', jkt, jti], expiresEpochMs: (iat + proofAgeMaxSeconds + proofFutureMaxSeconds) * 1000, acceptableFromEpochMs: acceptableFromSeconds * 1000 } };
  }

  /** The header's key: typ dpop+jwt, an allowed alg, a public JWK (jose imports it), and its RFC 7638 thumbprint. */
  async #importKey(proof: string): Promise<ProofKey> {
    let header: ProtectedHeaderParameters;
    try {
      header = decodeProtectedHeader(proof);
    } catch {
      throw new DpopProofRejected('The DPoP proof\'s header cannot be read');
    }
    if (header.typ !== 'dpop+jwt') throw new DpopProofRejected('The DPoP proof is invalid: typ must be dpop+jwt');
    const alg = header.alg;
    if (alg === undefined || !dpopAlgorithms.includes(alg)) throw new DpopProofRejected(`The DPoP proof is invalid: alg must be one of ${dpopAlgorithms.join(', ')}`);
    const signingAlg = alg as SigningAlgorithm;
    const jwk = header.jwk;
    if (typeof jwk !== 'object' || jwk === null || Array.isArray(jwk)) throw new DpopProofRejected('The DPoP proof has no public key (jwk) in its header');
    if (privateJwkMembers.some((member) => member in jwk)) throw new DpopProofRejected('The DPoP proof\'s header holds a private key: it must hold the public key only');
    let key: CryptoKey;
    let keyObject: KeyObject;
    let jkt: string;
    try {
      const imported = await importJWK(jwk, alg);
      if (imported instanceof Uint8Array || imported.type !== 'public') throw new DpopProofRejected('The DPoP proof\'s header must hold a public key');
      key = imported;
      // WebCrypto's key as node:crypto's (the same conversion as jws-verify.ts's for realms' keys).
      keyObject = KeyObject.from(key as Parameters<typeof KeyObject.from>[0]);
      jkt = await calculateJwkThumbprint(jwk, 'sha256');
    } catch (error) {
      if (error instanceof DpopProofRejected) throw error;
      throw new DpopProofRejected(`The DPoP proof's jwk cannot be used with ${alg}`);
    }
    return { key, keyObject, alg: signingAlg, jkt };
  }
}

/** RFC 9449 §4.3: the URIs compared without their query and fragment, as URLs (case of the host, default ports). */
function sameResource(claimed: string, actual: string): boolean {
  const resource = resourceOf(actual);
  // The same text names the same resource: no second parse (a client names the URL as addressed).
  return resource !== undefined && (claimed === actual || withoutQuery(claimed) === resource);
}

/** The last request URL's resource: a client's requests name the same URL over and over (parsing it was a tenth of a proof's checks). */
let lastUrl: string | undefined;
let lastResource: string | undefined;

function resourceOf(url: string): string | undefined {
  if (url !== lastUrl) {
    lastResource = withoutQuery(url);
    lastUrl = url;
  }
  return lastResource;
}

/** The URL without its query and fragment; undefined for text that is no URL (never a throw: it names a refusal). */
function withoutQuery(url: string): string | undefined {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  } catch {
    return undefined;
  }
}

/** What jose found wrong, in words a client's developer can act on (never the key material). */
function proofProblem(error: unknown): string {
  if (error instanceof errors.JOSEAlgNotAllowed) return `alg must be one of ${dpopAlgorithms.join(', ')}`;
  if (error instanceof errors.JWTClaimValidationFailed) return error.claim === 'typ' ? 'typ must be dpop+jwt' : `${error.claim}: ${error.reason}`;
  if (error instanceof errors.JWSSignatureVerificationFailed) return 'the signature does not verify with the header\'s jwk';
  if (error instanceof errors.JWTExpired) return 'it has expired';
  if (error instanceof errors.JOSEError) return error.message;
  return 'it cannot be read';
}
