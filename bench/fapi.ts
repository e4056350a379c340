/**
 * FAPI 2.0 scenarios (CONTRACT §13): the token endpoint with `private_key_jwt` and a DPoP proof,
 * and a retrieve with a DPoP-bound token, beside their bearer figures. A load generator sends
 * requests from a synchronous function, so the assertions and proofs (each used once) are made
 * with jose just before their scenario, as many as its run can use at the rates this machine
 * reaches (`capPerSecond`): a run that outgrows its pool sends replays, which the report counts
 * as unexpected answers. Proofs are accepted for 60 s after they are made: a scenario longer
 * than ~45 s would outlive its pool's.
 */
import { randomUUID } from 'node:crypto';
import { createHash } from 'node:crypto';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import type { Scenario } from './load.js';

export const fapiRealm = 'bench-fapi';
export const fapiClientId = 'bench-fapi-app';
const assertionType = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

interface KeyPair {
  privateKey: CryptoKey;
  publicJwk: JWK;
}

export interface FapiKeys {
  client: KeyPair;
  dpop: KeyPair;
}

async function keyPair(kid: string): Promise<KeyPair> {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  return { privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg: 'ES256' } };
}

export async function fapiKeys(): Promise<FapiKeys> {
  return { client: await keyPair('bench-client-key'), dpop: await keyPair('bench-dpop-key') };
}

/** The realm of the bench's data file: fapi2, ES256 tokens, the client's public key, DPoP-bound tokens. */
export function fapiRealmData(keys: FapiKeys): Record<string, unknown> {
  return {
    name: fapiRealm,
    profile: 'fapi2',
    signatureAlgorithm: 'ES256',
    accessTokenLifespanSeconds: 3600,
    clients: [
      {
        clientId: fapiClientId,
        tokenEndpointAuthMethod: 'private_key_jwt',
        jwks: { keys: [keys.client.publicJwk] },
        dpopBoundAccessTokens: true,
        scopes: ['termDeposit:initiate', 'termDeposit:retrieve'],
        technicalUser: 'svc-bench',
        defaultWorkstation: 'WS-BENCH-01',
      },
    ],
  };
}

/** The realm's issuer as the server names it (its public URL): assertions' audience, proofs' htu base. */
async function issuerOf(url: string): Promise<string> {
  const response = await fetch(`${url}/realms/${fapiRealm}/.well-known/openid-configuration`);
  if (!response.ok) throw new Error(`the fapi realm's discovery answered ${response.status}`);
  return ((await response.json()) as { issuer: string }).issuer;
}

function assertion(keys: FapiKeys, issuer: string, now: number): Promise<string> {
  return new SignJWT({ jti: randomUUID() })
    .setProtectedHeader({ alg: 'ES256', kid: keys.client.publicJwk.kid as string })
    .setIssuer(fapiClientId)
    .setSubject(fapiClientId)
    .setAudience(issuer)
    .setIssuedAt(now)
    .setExpirationTime(now + 120)
    .sign(keys.client.privateKey);
}

function proof(keys: FapiKeys, method: string, url: string, now: number, accessToken?: string): Promise<string> {
  const { kid: _kid, alg: _alg, ...jwk } = keys.dpop.publicJwk;
  const claims: Record<string, unknown> = { htm: method, htu: url, iat: now, jti: randomUUID() };
  if (accessToken !== undefined) claims.ath = createHash('sha256').update(accessToken).digest('base64url');
  return new SignJWT(claims).setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk }).sign(keys.dpop.privateKey);
}

/** `count` of something made by `make`, a batch at a time. */
async function pool<T>(count: number, make: () => Promise<T>): Promise<T[]> {
  const made: T[] = [];
  while (made.length < count) made.push(...(await Promise.all(Array.from({ length: Math.min(500, count - made.length) }, make))));
  return made;
}

/** One DPoP-bound token of the session's key, for the API scenarios. */
export async function fapiToken(url: string, keys: FapiKeys): Promise<string> {
  const issuer = await issuerOf(url);
  const now = Math.floor(Date.now() / 1000);
  const tokenUrl = `${issuer}/protocol/openid-connect/token`;
  const form = new URLSearchParams({ grant_type: 'client_credentials', client_assertion_type: assertionType, client_assertion: await assertion(keys, issuer, now) });
  const response = await fetch(`${url}/realms/${fapiRealm}/protocol/openid-connect/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', dpop: await proof(keys, 'POST', tokenUrl, now) }, body: form });
  const body = (await response.json()) as { access_token?: string; token_type?: string };
  if (!response.ok || body.token_type !== 'DPoP' || !body.access_token) throw new Error(`the fapi token request answered ${response.status}: ${JSON.stringify(body)}`);
  return body.access_token;
}

/** Token requests with a fresh assertion and proof each. */
export async function fapiTokenScenario(name: string, url: string, keys: FapiKeys, count: number): Promise<Scenario> {
  const issuer = await issuerOf(url);
  const tokenUrl = `${issuer}/protocol/openid-connect/token`;
  const now = Math.floor(Date.now() / 1000);
  const requests = await pool(count, async () => ({
    body: new URLSearchParams({ grant_type: 'client_credentials', client_assertion_type: assertionType, client_assertion: await assertion(keys, issuer, now) }).toString(),
    proof: await proof(keys, 'POST', tokenUrl, now),
  }));
  return {
    name,
    expect: [200],
    request: (i) => {
      const request = requests[i % requests.length]!;
      return { method: 'POST', path: `/realms/${fapiRealm}/protocol/openid-connect/token`, headers: { 'content-type': 'application/x-www-form-urlencoded', dpop: request.proof }, body: request.body };
    },
  };
}

/** Retrieves with the DPoP-bound token, a fresh proof each. */
export async function dpopRetrieveScenario(name: string, url: string, keys: FapiKeys, token: string, depositId: string, count: number): Promise<Scenario> {
  const base = (await issuerOf(url)).replace(/\/realms\/[^/]+$/, '');
  const path = `/v1/term-deposits/${depositId}/retrieve`;
  const now = Math.floor(Date.now() / 1000);
  const proofs = await pool(count, () => proof(keys, 'GET', `${base}${path}`, now, token));
  return { name, expect: [200], request: (i) => ({ method: 'GET', path, headers: { authorization: `DPoP ${token}`, dpop: proofs[i % proofs.length]! } }) };
}
