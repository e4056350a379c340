/**
 * FAPI 2.0 test material (docs/auth.md, "FAPI 2.0: strong client authentication and
 * sender-constrained tokens"): the demo data with a `fapi2` realm whose client proves itself with
 * `private_key_jwt` and receives DPoP-bound tokens, and a realm that asks for DPoP nonces; the
 * client's key pairs; client assertions and DPoP proofs made with jose, correct by default, each
 * field overridable for the negative cases.
 */
import { createHash, randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { readDemoData, writeTempDataFile } from './data-files.js';

export const fapiRealm = 'fapi';
export const nonceRealm = 'fapi-nonce';
export const fapiClientId = 'fapi-app';
/** The fapi client's scopes: the operator API's too, to show its tokens are bound there as well. */
export const fapiScopes = ['termDeposit:initiate', 'termDeposit:retrieve', 'coregate:operator'];

export interface KeyPair {
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  publicJwk: JWK;
}

export async function keyPair(alg: 'ES256' | 'PS256' | 'RS256' | 'EdDSA' = 'ES256', kid: string = randomUUID()): Promise<KeyPair> {
  const pair = await generateKeyPair(alg, { extractable: true });
  return { ...pair, publicJwk: { ...(await exportJWK(pair.publicKey)), kid, alg, use: 'sig' } };
}

export interface FapiMaterial {
  dataFile: string;
  /** The client's registered key (ES256). */
  clientKey: KeyPair;
  /** A second registered key of the client (RS256): a fapi2 realm refuses assertions it signs. */
  rsaClientKey: KeyPair;
}

/** The demo data plus the `fapi2` realm and the nonce realm, each with the private_key_jwt client. */
export async function fapiMaterial(): Promise<FapiMaterial> {
  const clientKey = await keyPair('ES256');
  const rsaClientKey = await keyPair('RS256');
  const data = readDemoData<{ realms: unknown[] }>();
  const client = {
    clientId: fapiClientId,
    tokenEndpointAuthMethod: 'private_key_jwt',
    jwks: { keys: [clientKey.publicJwk, rsaClientKey.publicJwk] },
    dpopBoundAccessTokens: true,
    scopes: fapiScopes,
  };
  data.realms.push({ name: fapiRealm, profile: 'fapi2', signatureAlgorithm: 'ES256', audience: 'coregate-api', clients: [client] });
  data.realms.push({ name: nonceRealm, profile: 'fapi2', signatureAlgorithm: 'ES256', audience: 'coregate-api', dpopNonce: true, clients: [client] });
  return { dataFile: writeTempDataFile(data, 'coregate-fapi-'), clientKey, rsaClientKey };
}

export interface AssertionOptions {
  alg?: string;
  key?: CryptoKey;
  kid?: string | undefined;
  iss?: string;
  sub?: string;
  aud?: string | string[] | undefined;
  /** Seconds from now; undefined leaves the claim out. */
  iatOffset?: number | undefined;
  expOffset?: number | undefined;
  jti?: string | undefined;
  nowSeconds?: number;
}

/** A client assertion (RFC 7523) of the fapi client: aud the realm's issuer, exp in 60 s, a fresh jti. */
export async function clientAssertion(issuer: string, key: KeyPair, options: AssertionOptions = {}): Promise<string> {
  const now = options.nowSeconds ?? Math.floor(Date.now() / 1000);
  const claims: Record<string, unknown> = { iss: options.iss ?? fapiClientId, sub: options.sub ?? fapiClientId };
  const aud = 'aud' in options ? options.aud : issuer;
  if (aud !== undefined) claims.aud = aud;
  const iatOffset = 'iatOffset' in options ? options.iatOffset : 0;
  if (iatOffset !== undefined) claims.iat = now + iatOffset;
  const expOffset = 'expOffset' in options ? options.expOffset : 60;
  if (expOffset !== undefined) claims.exp = now + expOffset;
  const jti = 'jti' in options ? options.jti : randomUUID();
  if (jti !== undefined) claims.jti = jti;
  const kid = 'kid' in options ? options.kid : (key.publicJwk.kid as string);
  return new SignJWT(claims).setProtectedHeader({ alg: options.alg ?? (key.publicJwk.alg as string), ...(kid === undefined ? {} : { kid }) }).sign(options.key ?? key.privateKey);
}

export interface ProofOptions {
  alg?: string;
  typ?: string;
  /** The header's jwk: the proof key's public JWK by default. */
  jwk?: JWK;
  key?: CryptoKey;
  htm?: string | undefined;
  htu?: string | undefined;
  /** Seconds from now. */
  iatOffset?: number | undefined;
  jti?: string | undefined;
  /** The access token whose hash becomes `ath`. */
  accessToken?: string;
  ath?: string;
  nonce?: string;
  nowSeconds?: number;
}

/** A DPoP proof (RFC 9449) of `pair` for `method url`: iat now, a fresh jti, `ath` of the token when given. */
export async function dpopProof(pair: KeyPair, method: string, url: string, options: ProofOptions = {}): Promise<string> {
  const now = options.nowSeconds ?? Math.floor(Date.now() / 1000);
  const claims: Record<string, unknown> = {};
  const htm = 'htm' in options ? options.htm : method;
  if (htm !== undefined) claims.htm = htm;
  const htu = 'htu' in options ? options.htu : url;
  if (htu !== undefined) claims.htu = htu;
  const iatOffset = 'iatOffset' in options ? options.iatOffset : 0;
  if (iatOffset !== undefined) claims.iat = now + iatOffset;
  const jti = 'jti' in options ? options.jti : randomUUID();
  if (jti !== undefined) claims.jti = jti;
  if (options.ath !== undefined) claims.ath = options.ath;
  else if (options.accessToken !== undefined) claims.ath = createHash('sha256').update(options.accessToken).digest('base64url');
  if (options.nonce !== undefined) claims.nonce = options.nonce;
  const { kid: _kid, use: _use, ...publicJwk } = pair.publicJwk;
  return new SignJWT(claims)
    .setProtectedHeader({ alg: options.alg ?? (pair.publicJwk.alg as string), typ: options.typ ?? 'dpop+jwt', jwk: options.jwk ?? publicJwk })
    .sign(options.key ?? pair.privateKey);
}
