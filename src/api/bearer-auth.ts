/**
 * Bearer token validation (docs/api.md, "Tokens"). Tokens of coregate's own realms are checked
 * against the realm's published keys (the key cache is the JWKS cache, refreshed when the realm's
 * key generation changes), the realm's not-before and their client: unknown, disabled, or with its
 * tokens revoked since (`iat` before the client's not-before: docs/auth.md, "Client revocation"),
 * the token is refused; tokens of external issuers (a Keycloak realm) against the issuer's JWKS,
 * fetched, cached and refetched on an unknown `kid` at most every 30 s, and nothing else. Only
 * asymmetric algorithms: `none` and HMAC are refused whatever the token says.
 */
import { dateOf, epochSecondsOf, type Clock } from '../core/clock.js';
import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify, type CryptoKey, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import type { AuthSnapshot } from '../auth/auth-snapshot.js';
import type { Client } from '../store/clients.js';
import type { Keyring } from '../auth/keyring.js';
import { ExpectedError } from '../core/expected-error.js';
import { verifyCompactJwt } from '../auth/jws-verify.js';
import type { SigningAlgorithm } from '../auth/signing-algorithms.js';
import { LruMap } from '../cache/lru-map.js';
import { refusedTokenCharsMax, refusedTokensMax, verifiedTokensMax, type VerifiedToken } from '../cache/verified-tokens.js';
import type { Realm } from '../store/realms.js';

export const asymmetricAlgorithms = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];
/** At most 30 s of clock skew on exp and nbf (docs/api.md, "Tokens"). */
export const clockSkewSeconds = 30;
/** Refetch of an external JWKS on an unknown kid: at most once per this many ms. */
const jwksRefetchCooldownMs = 30_000;
/** An external JWKS is refetched at least this often. */
const jwksCacheMaxAgeMs = 10 * 60_000;
/** Three base64url segments: header, payload and signature (empty when unsigned, refused later by its alg). */
const compactJwsShape = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

export interface Principal {
  /** `{issuer}#{client_id}`: the namespace of correlation ids and operation ownership. */
  clientKey: string;
  clientId: string;
  issuer: string;
  /** The coregate realm that issued the token (its name), or undefined for an external issuer's token. */
  realm: string | undefined;
  scopes: ReadonlySet<string>;
  backboneUser: string | undefined;
  workstation: string | undefined;
  /** The key the token is bound to (`cnf`, docs/auth.md, "DPoP at the API"), or undefined for a bearer token. */
  confirmation: { jkt?: string; x5tS256?: string } | undefined;
}

export class TokenRejected extends ExpectedError {
  override name = 'TokenRejected';

  /**
   * `lasting`: the refusal is a property of the token itself and holds whenever it is sent again
   * (refusedTokensMax in cache/verified-tokens.ts says which); such a token is refused from memory.
   */
  constructor(
    message: string,
    readonly lasting = false,
  ) {
    super(message);
  }
}

export interface TokenVerifierOptions {
  keyring: Keyring;
  /** Whose time decides whether a token has expired (src/core/clock.ts). */
  clock: Clock;
  /** Realms and clients, read at most a second old (the auth service's snapshot). */
  snapshot: Pick<AuthSnapshot, 'realm' | 'peekRealm' | 'client' | 'peekClient' | 'clientBeforeRefusal'>;
  /** The auth service's public base URL: issuers `{publicUrl}/realms/{realm}` are local. */
  publicUrl: () => string;
  trustedIssuers: readonly string[];
  audience: string;
}

export class TokenVerifier {
  readonly #options: TokenVerifierOptions;
  readonly #remoteKeys = new Map<string, JWTVerifyGetKey>();
  /**
   * Keyed by the token's last characters (its signature's), each entry holding the whole token:
   * hashing a key of a few dozen characters instead of the whole token (about a kilobyte, a new
   * string on every request) was measurable on the request path. Two tokens ending alike share a
   * key; the one not stored is then verified afresh, never mistaken for the other.
   */
  readonly #verified = new LruMap<string, { token: string; verified: VerifiedToken<Principal> }>(verifiedTokensMax);
  /** Tokens refused for good, keyed as #verified, with the refusal's message (cache/verified-tokens.ts). */
  readonly #refused = new LruMap<string, { token: string; message: string }>(refusedTokensMax);

  constructor(options: TokenVerifierOptions) {
    this.#options = options;
    for (const issuer of options.trustedIssuers) {
      // Keycloak's JWKS path; an issuer elsewhere would publish it in its discovery document.
      const jwksUrl = new URL(`${issuer}/protocol/openid-connect/certs`);
      this.#remoteKeys.set(issuer, createRemoteJWKSet(jwksUrl, { cooldownDuration: jwksRefetchCooldownMs, cacheMaxAge: jwksCacheMaxAgeMs }));
    }
  }

  /**
   * The principal of a token verified before, when everything that could refuse it now is at
   * hand without a read: its expiry and, for a coregate realm, the realm and the client fresh in
   * the snapshot. Undefined means "ask `verify`" (never "refused"); a refusal it can decide at
   * once (a token that is no JWT at all, or expired, or revoked) throws as `verify` does. This is
   * the request path's common case, answered with no promise.
   */
  #lookUp(token: string): VerifiedToken<Principal> | undefined {
    const entry = this.#verified.get(cacheKeyOf(token));
    return entry !== undefined && entry.token === token ? entry.verified : undefined;
  }

  #forget(token: string): void {
    const key = cacheKeyOf(token);
    if (this.#verified.get(key)?.token === token) this.#verified.delete(key);
  }

  /** Throws the refusal of a token refused for good before; the same message as then. */
  #refuseAgain(token: string): void {
    const refused = this.#refused.get(cacheKeyOf(token));
    if (refused !== undefined && refused.token === token) throw new TokenRejected(refused.message, true);
  }

  /**
   * Keeps a lasting refusal of `token` (cache/verified-tokens.ts) and answers it, to be thrown. A
   * token longer than any realm issues is not kept: memory stays bounded by refusedTokensMax ×
   * refusedTokenCharsMax whatever a client sends.
   */
  #remember(token: string, error: unknown): unknown {
    if (error instanceof TokenRejected && error.lasting && token.length <= refusedTokenCharsMax) this.#refused.set(cacheKeyOf(token), { token, message: error.message });
    return error;
  }

  verifyCached(token: string): Principal | undefined {
    const verified = this.#lookUp(token);
    if (verified === undefined) {
      // Garbage is refused here, at once: a rejected promise per bad token cost a 401 a tenth.
      if (!compactJwsShape.test(token)) throw new TokenRejected('The token is not a JWT');
      // A token refused for good before (expired, forged...) is refused again without a promise.
      this.#refuseAgain(token);
      return undefined;
    }
    if (epochSecondsOf(this.#options.clock) > verified.expiresAt + clockSkewSeconds) {
      this.#forget(token);
      throw this.#remember(token, new TokenRejected('The token has expired', true));
    }
    if (verified.realm === undefined) return verified.principal;
    const { snapshot } = this.#options;
    const realm = snapshot.peekRealm(verified.realm.name);
    if (realm?.value === undefined || realm.value.key_generation !== verified.realm.keyGeneration) return undefined;
    if (verified.issuedAt < realm.value.not_before) throw new TokenRejected(revokedMessage);
    const client = snapshot.peekClient(verified.realm.name, verified.principal.clientId);
    if (client === undefined) return undefined;
    refuseRevokedByClient(client.value, verified.issuedAt);
    // Unknown or disabled here is read again before the refusal (`verify`): a client just
    // created or enabled works at once.
    return client.value?.enabled === true ? verified.principal : undefined;
  }

  async verify(token: string): Promise<Principal> {
    try {
      return await this.#verify(token);
    } catch (error) {
      throw this.#remember(token, error);
    }
  }

  async #verify(token: string): Promise<Principal> {
    this.#refuseAgain(token);
    const verified = this.#lookUp(token);
    if (verified !== undefined && (await this.#stillValid(token, verified))) return verified.principal;
    // Most garbage is refused here, before jose would build (and throw) an error for it.
    // Not kept: the shape is cheaper to check again than to look up.
    if (!compactJwsShape.test(token)) throw new TokenRejected('The token is not a JWT');
    let unverified: JWTPayload;
    let header: { alg?: string | undefined; kid?: string | undefined };
    try {
      unverified = decodeJwt(token);
      header = decodeProtectedHeader(token);
    } catch {
      throw new TokenRejected('The token is not a JWT', true);
    }
    if (header.alg === undefined || !asymmetricAlgorithms.includes(header.alg)) throw new TokenRejected('The token is not signed with an accepted algorithm', true);
    const issuer = typeof unverified.iss === 'string' ? unverified.iss : '';
    const local = await this.#verifyLocal(token, issuer, header.kid);
    const payload = local?.payload ?? (await this.#verifyRemote(token, issuer));
    const principal = principalOf(payload, issuer, local?.realm.name);
    const entry: VerifiedToken<Principal> = { principal, expiresAt: payload.exp ?? 0, issuedAt: payload.iat ?? 0 };
    if (local) entry.realm = { name: local.realm.name, keyGeneration: local.realm.key_generation };
    // Kept before the revocations are checked: a revoked token sent again is refused without its
    // signature being checked again (`verifyCached`), its revocation still decided on every use.
    this.#verified.set(cacheKeyOf(token), { token, verified: entry });
    if (local) await this.#refuseRevoked(local.realm, entry);
    return principal;
  }

  /**
   * A token verified before: still unexpired, its realm's keys unchanged (else it is verified
   * again), and neither the realm nor its client has revoked it since.
   */
  async #stillValid(token: string, verified: VerifiedToken<Principal>): Promise<boolean> {
    if (epochSecondsOf(this.#options.clock) > verified.expiresAt + clockSkewSeconds) {
      this.#forget(token);
      throw new TokenRejected('The token has expired', true);
    }
    if (verified.realm === undefined) return true;
    const realm = await this.#options.snapshot.realm(verified.realm.name);
    if (realm === undefined || realm.key_generation !== verified.realm.keyGeneration) {
      this.#forget(token);
      return false;
    }
    await this.#refuseRevoked(realm, verified);
    return true;
  }

  /**
   * Throws when the realm's not-before or the token's client refuses a token of `realm`: a client
   * unknown or disabled is read again from the store before the refusal (what grants access works
   * at once); a not-before only rises, so the snapshot's refuses without a read.
   */
  async #refuseRevoked(realm: Realm, verified: VerifiedToken<Principal>): Promise<void> {
    if (verified.issuedAt < realm.not_before) throw new TokenRejected(revokedMessage);
    const { snapshot } = this.#options;
    const clientId = verified.principal.clientId;
    let client = await snapshot.client(realm.name, clientId);
    refuseRevokedByClient(client, verified.issuedAt);
    if (client?.enabled === true) return;
    client = await snapshot.clientBeforeRefusal(realm.name, clientId);
    refuseRevokedByClient(client, verified.issuedAt);
    if (client === undefined) throw new TokenRejected('The token\'s client does not exist');
    if (!client.enabled) throw new TokenRejected('The token\'s client is disabled');
  }

  async #verifyLocal(token: string, issuer: string, kid: string | undefined): Promise<{ payload: JWTPayload; realm: Realm } | undefined> {
    const prefix = `${this.#options.publicUrl()}/realms/`;
    if (!issuer.startsWith(prefix)) return undefined;
    const name = realmNameOf(issuer.slice(prefix.length));
    let realm = await this.#options.snapshot.realm(name);
    let key = realm && (await this.#options.keyring.publishedKeys(realm)).find((entry) => entry.kid === kid);
    if (!key) {
      // Read again before refusing: the realm may be new, or another instance may have rotated
      // its key within the snapshot's second and signed this token with the new one.
      realm = await this.#options.snapshot.realm(name, true);
      key = realm && (await this.#options.keyring.publishedKeys(realm)).find((entry) => entry.kid === kid);
    }
    if (!realm) throw new TokenRejected('The token\'s issuer is not trusted');
    if (!key) throw new TokenRejected('The token is signed by an unknown key');
    // The API's own audience (docs/api.md, "Tokens"), whatever the realm issues for: a realm
    // configured for another API (audience "partner-api") issues tokens this API must refuse.
    // Checked here with node:crypto (auth/jws-verify.ts: a forged token cost a fifth as much as
    // through jose).
    const payload = await verifyLocally(token, key.alg, key.publicKey, { issuer, audience: this.#options.audience }, this.#options.clock);
    return { payload, realm };
  }

  async #verifyRemote(token: string, issuer: string): Promise<JWTPayload> {
    const keys = this.#remoteKeys.get(issuer);
    if (!keys) throw new TokenRejected('The token\'s issuer is not trusted');
    return verifyWith(token, keys, { issuer, audience: this.#options.audience, algorithms: asymmetricAlgorithms }, this.#options.clock);
  }
}

async function verifyWith(
  token: string,
  key: Parameters<typeof jwtVerify>[1] & object,
  expected: { issuer: string; audience: string; algorithms: string[] },
  clock: Clock,
): Promise<JWTPayload> {
  try {
    const { payload } = await jwtVerify(token, key as never, {
      issuer: expected.issuer,
      audience: expected.audience,
      algorithms: expected.algorithms,
      clockTolerance: clockSkewSeconds,
      currentDate: dateOf(clock),
      requiredClaims: ['exp'],
    });
    refuseIssuedInTheFuture(payload, clock);
    return payload;
  } catch (error) {
    // An external issuer's keys are jose's cache, refetched only for an unknown kid: a signature
    // that fails against them may pass once they are fetched again. Not lasting.
    throw rejectionOf(error, { keysMayChange: true });
  }
}

/** A token of one of coregate's own realms, checked against its key as jose's jwtVerify would (auth/jws-verify.ts). */
async function verifyLocally(token: string, alg: SigningAlgorithm, key: CryptoKey, expected: { issuer: string; audience: string }, clock: Clock): Promise<JWTPayload> {
  try {
    const payload = (await verifyCompactJwt(token, alg, key, { ...expected, clockToleranceSeconds: clockSkewSeconds, nowSeconds: epochSecondsOf(clock) })) as JWTPayload;
    refuseIssuedInTheFuture(payload, clock);
    return payload;
  } catch (error) {
    throw rejectionOf(error);
  }
}

/** jose checks iat only against a maximum age; a token "issued" in the future is refused here. */
function refuseIssuedInTheFuture(payload: JWTPayload, clock: Clock): void {
  if (typeof payload.iat === 'number' && payload.iat > epochSecondsOf(clock) + clockSkewSeconds) {
    throw new TokenRejected(`The token's iat claim lies more than ${clockSkewSeconds} s in the future`);
  }
}

/** The refusal of a verification's failure (jose's, or jws-verify.ts's shaped as jose's). */
function rejectionOf(error: unknown, options: { keysMayChange?: boolean } = {}): TokenRejected {
  if (error instanceof TokenRejected) return error;
  const code = (error as { code?: string }).code;
  if (code === 'ERR_JWT_EXPIRED') return new TokenRejected('The token has expired', true);
  if (code === 'ERR_JWT_CLAIM_VALIDATION_FAILED') {
    const claim = (error as { claim?: string }).claim ?? '';
    // nbf and iat are about time still to come: the same token may pass later.
    return new TokenRejected(`The token's ${claim} claim is not acceptable`, claim !== 'nbf' && claim !== 'iat');
  }
  // A remote issuer's keys may be fetched again (a new kid): not lasting.
  if (code === 'ERR_JWKS_NO_MATCHING_KEY') return new TokenRejected('The token is signed by an unknown key');
  if (code === 'ERR_JWKS_TIMEOUT' || code === 'ERR_JOSE_GENERIC') return new TokenRejected('The token\'s issuer keys cannot be fetched');
  // The signature checked against the key its kid names, or the token not well formed: for good.
  // Anything else (a failed fetch of a remote issuer's keys...) may pass when sent again.
  return new TokenRejected('The token signature is invalid', options.keysMayChange !== true && code !== undefined && tokenFaultCodes.has(code));
}

/** jose's errors that are the token's own fault with the key it names: its refusal is lasting. */
const tokenFaultCodes = new Set(['ERR_JWS_SIGNATURE_VERIFICATION_FAILED', 'ERR_JWS_INVALID', 'ERR_JWT_INVALID', 'ERR_JOSE_ALG_NOT_ALLOWED']);

/** Characters of a token's end that key the cache of verified tokens. */
const cacheKeyChars = 32;

function cacheKeyOf(token: string): string {
  return token.length <= cacheKeyChars ? token : token.slice(-cacheKeyChars);
}

const revokedMessage = 'The token was issued before the realm\'s not-before and is revoked';
const clientRevokedMessage = 'The token was issued before its client\'s not-before and is revoked';

/**
 * Throws when `client` revoked the token: it was issued before the client's not-before (set when
 * the client is disabled, given a new secret or new keys, or has its tokens revoked). Not a
 * lasting refusal (cache/verified-tokens.ts): it depends on the store, as the realm's does.
 */
function refuseRevokedByClient(client: Client | undefined, issuedAt: number): void {
  if (client !== undefined && issuedAt < client.tokensNotBefore) throw new TokenRejected(clientRevokedMessage);
}

/** The realm part of a local issuer; a malformed escape names no realm rather than failing. */
function realmNameOf(encoded: string): string {
  try {
    return decodeURIComponent(encoded);
  } catch {
    throw new TokenRejected('The token\'s issuer is not trusted');
  }
}

function principalOf(payload: JWTPayload, issuer: string, realm: string | undefined): Principal {
  const clientId = stringClaim(payload, 'client_id') ?? stringClaim(payload, 'azp');
  if (clientId === undefined) throw new TokenRejected('The token names no client (client_id or azp)', true);
  return {
    clientKey: `${issuer}#${clientId}`,
    clientId,
    issuer,
    realm,
    scopes: new Set((stringClaim(payload, 'scope') ?? '').split(' ').filter((scope) => scope !== '')),
    backboneUser: stringClaim(payload, 'backbone_user'),
    workstation: stringClaim(payload, 'workstation'),
    confirmation: confirmationOf(payload.cnf),
  };
}

/** `cnf` (RFC 7800): a DPoP key's thumbprint or a certificate's; a confirmation this service cannot check refuses the token. */
function confirmationOf(cnf: unknown): Principal['confirmation'] {
  if (cnf === undefined) return undefined;
  const members = typeof cnf === 'object' && cnf !== null ? (cnf as Record<string, unknown>) : {};
  const jkt = typeof members.jkt === 'string' && members.jkt !== '' ? members.jkt : undefined;
  const x5tS256 = typeof members['x5t#S256'] === 'string' && members['x5t#S256'] !== '' ? members['x5t#S256'] : undefined;
  if (jkt === undefined && x5tS256 === undefined) throw new TokenRejected('The token is bound (cnf) by a method this service cannot check', true);
  return { ...(jkt === undefined ? {} : { jkt }), ...(x5tS256 === undefined ? {} : { x5tS256 }) };
}

function stringClaim(payload: JWTPayload, name: string): string | undefined {
  const value = payload[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
}
