/**
 * FAPI 2.0 scenarios (docs/auth.md, "FAPI 2.0: strong client authentication and sender-constrained
 * tokens"): the token endpoint with `private_key_jwt` and a DPoP proof, and a retrieve with a
 * DPoP-bound token, beside their bearer figures. A load generator sends requests from a synchronous
 * function, so the assertions and proofs (each used once) are made just before their scenario, by
 * the SDK's own signing (jose), as many as its run can use at the rates this machine reaches
 * (`capPerSecond`): a run that outgrows its pool sends replays, which the report counts as
 * unexpected answers. Proofs are accepted for 60 s after they are made: a scenario longer than ~45
 * s would outlive its pool's.
 */
import { exportJWK, generateKeyPair, type CryptoKey, type JWK } from 'jose';
import { clientAssertion, DpopKey } from '../src/sdk/proof-of-possession.js';
import type { Scenario } from './load.js';

export const fapiRealm = 'bench-fapi';
export const fapiClientId = 'bench-fapi-app';
const assertionType = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

/** The client's registered key pair, and its session's DPoP key (the SDK's: one per session). */
export interface FapiKeys {
  client: { privateKey: CryptoKey; publicJwk: JWK };
  dpop: DpopKey;
}

export async function fapiKeys(): Promise<FapiKeys> {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  return { client: { privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid: 'bench-client-key', alg: 'ES256' } }, dpop: await DpopKey.generate('ES256') };
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

/** What the SDK sends (src/sdk/proof-of-possession.ts): an assertion valid 60 s, a proof of the session's key. */
function assertion(keys: FapiKeys, issuer: string, nowMs: number): Promise<string> {
  return clientAssertion(fapiClientId, issuer, { key: keys.client.privateKey, kid: keys.client.publicJwk.kid as string, alg: 'ES256' }, nowMs);
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
  const now = Date.now();
  const tokenUrl = `${issuer}/protocol/openid-connect/token`;
  const form = new URLSearchParams({ grant_type: 'client_credentials', client_assertion_type: assertionType, client_assertion: await assertion(keys, issuer, now) });
  const response = await fetch(`${url}/realms/${fapiRealm}/protocol/openid-connect/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', dpop: await keys.dpop.proof('POST', tokenUrl, now) }, body: form });
  const body = (await response.json()) as { access_token?: string; token_type?: string };
  if (!response.ok || body.token_type !== 'DPoP' || !body.access_token) throw new Error(`the fapi token request answered ${response.status}: ${JSON.stringify(body)}`);
  return body.access_token;
}

/** Token requests with a fresh assertion and proof each. */
export async function fapiTokenScenario(name: string, url: string, keys: FapiKeys, count: number): Promise<Scenario> {
  const issuer = await issuerOf(url);
  const tokenUrl = `${issuer}/protocol/openid-connect/token`;
  const now = Date.now();
  const requests = await pool(count, async () => ({
    body: new URLSearchParams({ grant_type: 'client_credentials', client_assertion_type: assertionType, client_assertion: await assertion(keys, issuer, now) }).toString(),
    proof: await keys.dpop.proof('POST', tokenUrl, now),
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
  const now = Date.now();
  const proofs = await pool(count, () => keys.dpop.proof('GET', `${base}${path}`, now, { accessToken: token }));
  return { name, expect: [200], request: (i) => ({ method: 'GET', path, headers: { authorization: `DPoP ${token}`, dpop: proofs[i % proofs.length]! } }) };
}
