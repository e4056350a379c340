/**
 * FAPI 2.0's negative cases (docs/auth.md, "FAPI 2.0: strong client authentication and
 * sender-constrained tokens"), after the OpenID Foundation's FAPI 2.0 client credentials and DPoP
 * test plans (FAPI2SPFinalDpopNegativeTests and the client assertion modules): every malformed,
 * misdirected, stale or replayed assertion or proof is refused with the error docs/auth.md names,
 * is never a 500, never reaches the core, and never uses up a jti that a later valid request needs.
 * On both stores; re-run on two instances behind a round-robin proxy (scripts/test.mjs), where a
 * replay lands on the other instance than the first use.
 */
// @deployments two-instances
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { describeEachStore } from '../helpers/suite.js';
import { depositBody } from '../helpers/bodies.js';
import { clientAssertion, dpopProof, fapiClientId, fapiMaterial, fapiRealm, keyPair, nonceRealm, type AssertionOptions, type KeyPair, type ProofOptions } from '../helpers/fapi.js';

const material = await fapiMaterial();
const assertionType = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, any>;
}

async function answer(response: Response): Promise<Answer> {
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text === '' ? {} : (JSON.parse(text) as Record<string, any>) };
}

describeEachStore(
  'FAPI 2.0 negative cases',
  ({ server }) => {
    const issuer = (realm = fapiRealm) => server().realmUrl(realm);
    const tokenUrl = (realm = fapiRealm) => `${issuer(realm)}/protocol/openid-connect/token`;

    /** A token request of the fapi client: a fresh assertion and a proof of `dpopKey` unless told otherwise. */
    async function tokenRequest(options: { realm?: string; assertion?: string | null; assertionOptions?: AssertionOptions; proof?: string | null; proofs?: string[]; dpopKey?: KeyPair; proofOptions?: ProofOptions; form?: Record<string, string>; headers?: Record<string, string> } = {}): Promise<Answer> {
      const realm = options.realm ?? fapiRealm;
      const form = new URLSearchParams({ grant_type: 'client_credentials' });
      const assertion = options.assertion === undefined ? await clientAssertion(issuer(realm), material.clientKey, options.assertionOptions) : options.assertion;
      if (assertion !== null) {
        form.set('client_assertion_type', assertionType);
        form.set('client_assertion', assertion);
      }
      for (const [name, value] of Object.entries(options.form ?? {})) form.set(name, value);
      const headers = new Headers({ 'content-type': 'application/x-www-form-urlencoded', ...options.headers });
      const proof = options.proof === undefined ? await dpopProof(options.dpopKey ?? (await keyPair('ES256')), 'POST', tokenUrl(realm), options.proofOptions) : options.proof;
      if (proof !== null) headers.set('dpop', proof);
      for (const extra of options.proofs ?? []) headers.append('dpop', extra);
      return answer(await fetch(tokenUrl(realm), { method: 'POST', headers, body: form }));
    }

    /** A DPoP-bound token of `dpopKey`. */
    async function boundToken(dpopKey: KeyPair): Promise<string> {
      const granted = await tokenRequest({ dpopKey });
      assert.equal(granted.status, 200, JSON.stringify(granted.body));
      assert.equal(granted.body.token_type, 'DPoP');
      return granted.body.access_token as string;
    }

    function assertOAuth(result: Answer, status: number, error: string): void {
      assert.equal(result.status, status, JSON.stringify(result.body));
      assert.equal(result.body.error, error, JSON.stringify(result.body));
    }

    /** A retrieve of a deposit that does not exist: past the guards it would be a 404, so a 401 is the guards'. */
    const retrieveUrl = () => `${server().url}/v1/term-deposits/TD-NONE-${randomUUID()}/retrieve`;

    async function apiCall(url: string, token: string, options: { scheme?: string; proof?: string | null; proofs?: string[]; method?: 'GET' | 'POST'; body?: unknown } = {}): Promise<Answer> {
      const headers = new Headers({ authorization: `${options.scheme ?? 'DPoP'} ${token}` });
      if (options.proof !== null && options.proof !== undefined) headers.set('dpop', options.proof);
      for (const extra of options.proofs ?? []) headers.append('dpop', extra);
      if (options.body !== undefined) headers.set('content-type', 'application/json');
      return answer(await fetch(url, { method: options.method ?? 'GET', headers, ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }) }));
    }

    function assertApiRefusal(result: Answer, reason: 'INVALID_DPOP_PROOF' | 'INVALID_TOKEN', challengeError: 'invalid_dpop_proof' | 'invalid_token'): void {
      assert.equal(result.status, 401, JSON.stringify(result.body));
      assert.equal(result.body.errordetail?.[0]?.reason ?? result.body.reason, reason === 'INVALID_TOKEN' ? 'INVALID_TOKEN' : 'INVALID_DPOP_PROOF', JSON.stringify(result.body));
      const challenge = result.headers.get('www-authenticate') ?? '';
      assert.match(challenge, new RegExp(`^DPoP error="${challengeError}"`), challenge);
      assert.match(challenge, /algs="PS256 ES256 EdDSA"/);
    }

    // ----- Client assertions (private_key_jwt): 401 invalid_client -----

    test('an assertion signed RS256 in a fapi2 realm is invalid_client (the key is registered)', async () => {
      assertOAuth(await tokenRequest({ assertion: await clientAssertion(issuer(), material.rsaClientKey) }), 401, 'invalid_client');
    });

    test('an assertion whose aud is not the issuer (the token endpoint\'s URL, an array, another issuer) is invalid_client in a fapi2 realm', async () => {
      for (const aud of [tokenUrl(), [issuer()], `${issuer()}-other`]) {
        assertOAuth(await tokenRequest({ assertionOptions: { aud } }), 401, 'invalid_client');
      }
    });

    test('an assertion with exp in the past, without exp, or exp more than 5 minutes after iat is invalid_client', async () => {
      assertOAuth(await tokenRequest({ assertionOptions: { iatOffset: -120, expOffset: -60 } }), 401, 'invalid_client');
      assertOAuth(await tokenRequest({ assertionOptions: { expOffset: undefined } }), 401, 'invalid_client');
      assertOAuth(await tokenRequest({ assertionOptions: { expOffset: 301 } }), 401, 'invalid_client');
    });

    test('an assertion with iat or nbf more than 60 s in the future is invalid_client; 10 s ahead is accepted', async () => {
      assertOAuth(await tokenRequest({ assertionOptions: { iatOffset: 3600, expOffset: 3660 } }), 401, 'invalid_client');
      assertOAuth(await tokenRequest({ assertionOptions: { iatOffset: 61, expOffset: 120 } }), 401, 'invalid_client');
      const ahead = await tokenRequest({ assertionOptions: { iatOffset: 5, expOffset: 60 } });
      assert.equal(ahead.status, 200, JSON.stringify(ahead.body));
    });

    test('an assertion without jti, or whose iss differs from sub, is invalid_client', async () => {
      assertOAuth(await tokenRequest({ assertionOptions: { jti: undefined } }), 401, 'invalid_client');
      assertOAuth(await tokenRequest({ assertionOptions: { sub: 'someone-else' } }), 401, 'invalid_client');
      assertOAuth(await tokenRequest({ assertionOptions: { iss: 'someone-else' } }), 401, 'invalid_client');
    });

    test('a client_id in the form that differs from the assertion\'s iss is invalid_client', async () => {
      assertOAuth(await tokenRequest({ form: { client_id: 'treasury-app' } }), 401, 'invalid_client');
      const same = await tokenRequest({ form: { client_id: fapiClientId } });
      assert.equal(same.status, 200, JSON.stringify(same.body));
    });

    test('a replayed assertion is invalid_client, whichever instance it reaches', async () => {
      const assertion = await clientAssertion(issuer(), material.clientKey);
      const first = await tokenRequest({ assertion });
      assert.equal(first.status, 200, JSON.stringify(first.body));
      assertOAuth(await tokenRequest({ assertion }), 401, 'invalid_client');
      assertOAuth(await tokenRequest({ assertion }), 401, 'invalid_client');
    });

    test('a private_key_jwt client sending a secret (Basic, in the form, or beside its assertion) is invalid_client', async () => {
      const basic = `Basic ${Buffer.from(`${fapiClientId}:some-secret-of-sixteen-or-more`).toString('base64')}`;
      assertOAuth(await tokenRequest({ assertion: null, headers: { authorization: basic } }), 401, 'invalid_client');
      assertOAuth(await tokenRequest({ assertion: null, form: { client_id: fapiClientId, client_secret: 'some-secret-of-sixteen-or-more' } }), 401, 'invalid_client');
      assertOAuth(await tokenRequest({ form: { client_secret: 'some-secret-of-sixteen-or-more' } }), 401, 'invalid_client');
    });

    test('a malformed assertion (not a JWT, a wrong assertion type, an unknown key, alg none) is invalid_client, never a 500', async () => {
      assertOAuth(await tokenRequest({ assertion: 'not-a-jwt' }), 401, 'invalid_client');
      assertOAuth(await tokenRequest({ assertion: 'a.b.c' }), 401, 'invalid_client');
      const header = Buffer.from(JSON.stringify({ alg: 'none' })).toString('base64url');
      const payload = Buffer.from(JSON.stringify({ iss: fapiClientId, sub: fapiClientId, aud: issuer(), exp: Math.floor(Date.now() / 1000) + 60, jti: randomUUID() })).toString('base64url');
      assertOAuth(await tokenRequest({ assertion: `${header}.${payload}.` }), 401, 'invalid_client');
      assertOAuth(await tokenRequest({ form: { client_assertion_type: 'urn:example:other' } }), 401, 'invalid_client');
      const stranger = await keyPair('ES256', material.clientKey.publicJwk.kid as string);
      assertOAuth(await tokenRequest({ assertion: await clientAssertion(issuer(), stranger) }), 401, 'invalid_client');
    });

    // ----- DPoP proofs at the token endpoint: 400 invalid_dpop_proof -----

    test('a client with dpopBoundAccessTokens that sends no proof is 400 invalid_dpop_proof, and its assertion stays usable', async () => {
      const assertion = await clientAssertion(issuer(), material.clientKey);
      assertOAuth(await tokenRequest({ assertion, proof: null }), 400, 'invalid_dpop_proof');
      const retried = await tokenRequest({ assertion });
      assert.equal(retried.status, 200, `the refused request left the assertion's jti unused: ${JSON.stringify(retried.body)}`);
    });

    test('proofs with a wrong htm or htu, iat an hour off either way, no jti, or a typ other than dpop+jwt are 400 invalid_dpop_proof at the token endpoint', async () => {
      const cases: ProofOptions[] = [
        { htm: 'GET' },
        { htu: `${issuer()}/protocol/openid-connect/other` },
        { htu: 'https://elsewhere.example/token' },
        { iatOffset: -3600 },
        { iatOffset: 3600 },
        { jti: undefined },
        { typ: 'JWT' },
        { htu: undefined },
      ];
      for (const proofOptions of cases) assertOAuth(await tokenRequest({ proofOptions }), 400, 'invalid_dpop_proof');
    });

    test('a proof whose header carries a private key, an HMAC or RS256 alg, or that is not a JWT is 400 invalid_dpop_proof', async () => {
      const key = await keyPair('ES256');
      const { exportJWK } = await import('jose');
      const privateJwk = await exportJWK(key.privateKey);
      assertOAuth(await tokenRequest({ proof: await dpopProof(key, 'POST', tokenUrl(), { jwk: privateJwk }) }), 400, 'invalid_dpop_proof');
      const rsa = await keyPair('RS256');
      assertOAuth(await tokenRequest({ proof: await dpopProof(rsa, 'POST', tokenUrl()) }), 400, 'invalid_dpop_proof');
      assertOAuth(await tokenRequest({ proof: 'not-a-proof' }), 400, 'invalid_dpop_proof');
    });

    test('two DPoP headers at the token endpoint are 400 invalid_dpop_proof', async () => {
      const key = await keyPair('ES256');
      const proofs = [await dpopProof(key, 'POST', tokenUrl())];
      assertOAuth(await tokenRequest({ dpopKey: key, proofs }), 400, 'invalid_dpop_proof');
    });

    test('a replayed proof at the token endpoint is 400 invalid_dpop_proof', async () => {
      const key = await keyPair('ES256');
      const proof = await dpopProof(key, 'POST', tokenUrl());
      const first = await tokenRequest({ proof });
      assert.equal(first.status, 200, JSON.stringify(first.body));
      assertOAuth(await tokenRequest({ proof }), 400, 'invalid_dpop_proof');
    });

    test('a realm with dpopNonce answers use_dpop_nonce with a DPoP-Nonce header; the proof with that nonce is granted, on any instance', async () => {
      const key = await keyPair('ES256');
      const first = await tokenRequest({ realm: nonceRealm, dpopKey: key });
      assertOAuth(first, 400, 'use_dpop_nonce');
      const nonce = first.headers.get('dpop-nonce');
      assert.ok(nonce, 'a DPoP-Nonce header');
      const granted = await tokenRequest({ realm: nonceRealm, dpopKey: key, proofOptions: { nonce } });
      assert.equal(granted.status, 200, JSON.stringify(granted.body));
      const again = await tokenRequest({ realm: nonceRealm, dpopKey: key, proofOptions: { nonce } });
      assert.equal(again.status, 200, 'the nonce is valid on every instance, for more than one proof');
      assertOAuth(await tokenRequest({ realm: nonceRealm, dpopKey: key, proofOptions: { nonce: `${nonce}x` } }), 400, 'use_dpop_nonce');
    });

    // ----- DPoP at the business API: 401, DPoP challenge -----

    test('a DPoP-bound token with its proof is served; sent as Bearer it is 401 invalid_token with a DPoP challenge', async () => {
      const key = await keyPair('ES256');
      const token = await boundToken(key);
      const url = retrieveUrl();
      const served = await apiCall(url, token, { proof: await dpopProof(key, 'GET', url, { accessToken: token }) });
      assert.equal(served.status, 404, `past the guards: ${JSON.stringify(served.body)}`);
      assertApiRefusal(await apiCall(url, token, { scheme: 'Bearer' }), 'INVALID_TOKEN', 'invalid_token');
    });

    test('at the API, proofs with a wrong htm, htu or ath, iat an hour off either way, no jti, another typ, or another key than cnf.jkt are 401 invalid_dpop_proof', async () => {
      const key = await keyPair('ES256');
      const token = await boundToken(key);
      const url = retrieveUrl();
      const other = await keyPair('ES256');
      const cases: Array<[KeyPair, ProofOptions]> = [
        [key, { htm: 'POST' }],
        [key, { htu: `${server().url}/v1/term-deposits/other/retrieve` }],
        [key, { ath: 'not-the-hash' }],
        [key, {}], // no ath at all
        [key, { iatOffset: -3600, accessToken: token }],
        [key, { iatOffset: 3600, accessToken: token }],
        [key, { jti: undefined, accessToken: token }],
        [key, { typ: 'jwt', accessToken: token }],
        [other, { accessToken: token }],
      ];
      for (const [proofKey, options] of cases) {
        assertApiRefusal(await apiCall(url, token, { proof: await dpopProof(proofKey, 'GET', url, options) }), 'INVALID_DPOP_PROOF', 'invalid_dpop_proof');
      }
      assertApiRefusal(await apiCall(url, token, { proof: null }), 'INVALID_DPOP_PROOF', 'invalid_dpop_proof');
    });

    test('at the API, two DPoP headers and a replayed proof are 401 invalid_dpop_proof; the query does not change htu', async () => {
      const key = await keyPair('ES256');
      const token = await boundToken(key);
      const url = retrieveUrl();
      const proof = await dpopProof(key, 'GET', url, { accessToken: token });
      assertApiRefusal(await apiCall(url, token, { proof, proofs: [await dpopProof(key, 'GET', url, { accessToken: token })] }), 'INVALID_DPOP_PROOF', 'invalid_dpop_proof');
      assert.equal((await apiCall(`${url}?view=full`, token, { proof })).status, 404, 'the proof for the URL without its query is accepted once');
      assertApiRefusal(await apiCall(url, token, { proof }), 'INVALID_DPOP_PROOF', 'invalid_dpop_proof');
    });

    test('a bearer token (no cnf) sent with the DPoP scheme is 401 invalid_token; as Bearer it keeps working', async () => {
      const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: 'treasury-app', client_secret: 'treasury-app-secret-change-me-0123456789abcdef' });
      const granted = await answer(await fetch(server().tokenUrl(), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form }));
      assert.equal(granted.body.token_type, 'Bearer');
      const token = granted.body.access_token as string;
      const url = retrieveUrl();
      const key = await keyPair('ES256');
      assertApiRefusal(await apiCall(url, token, { proof: await dpopProof(key, 'GET', url, { accessToken: token }) }), 'INVALID_TOKEN', 'invalid_token');
      assert.equal((await apiCall(url, token, { scheme: 'Bearer' })).status, 404);
    });

    test('a request with the DPoP scheme and a token that is not one is 401 invalid_token with a DPoP challenge', async () => {
      const refused = await apiCall(retrieveUrl(), 'not.a-token.at-all', { proof: null });
      assertApiRefusal(refused, 'INVALID_TOKEN', 'invalid_token');
    });

    test('the operator API takes a DPoP-bound operator token only with its proof (as Bearer: 401), and the proof once', async () => {
      const key = await keyPair('ES256');
      const token = await boundToken(key);
      const url = `${server().url}/operator/v1/session`;
      const asBearer = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(asBearer.status, 401);
      assert.match(asBearer.headers.get('www-authenticate') ?? '', /^DPoP error="invalid_token"/);
      const proof = await dpopProof(key, 'GET', url, { accessToken: token });
      const served = await fetch(url, { headers: { authorization: `DPoP ${token}`, dpop: proof } });
      assert.equal(served.status, 200, await served.clone().text());
      assert.equal(((await served.json()) as { clientId?: string }).clientId, fapiClientId);
      const replayed = await fetch(url, { headers: { authorization: `DPoP ${token}`, dpop: proof } });
      assert.equal(replayed.status, 401);
      assert.match(replayed.headers.get('www-authenticate') ?? '', /^DPoP error="invalid_dpop_proof"/);
    });

    test('a client given new keys in the store is accepted with them at once (a refusal reads the client again)', async () => {
      const replacement = await keyPair('ES256');
      const { store } = server().coregate;
      const before = await store.db.selectFrom('clients').select('jwks').where('realm', '=', fapiRealm).where('client_id', '=', fapiClientId).executeTakeFirstOrThrow();
      // A first token request: the instance's snapshot now holds the client with its old keys.
      assert.equal((await tokenRequest()).status, 200);
      await store.db.updateTable('clients').set({ jwks: JSON.stringify({ keys: [replacement.publicJwk] }) }).where('realm', '=', fapiRealm).where('client_id', '=', fapiClientId).execute();
      try {
        const granted = await tokenRequest({ assertion: await clientAssertion(issuer(), replacement) });
        assert.equal(granted.status, 200, JSON.stringify(granted.body));
        // (The old key is not asserted refused here: another instance's snapshot, at most a second
        // old by design, may still hold it: the bound on what instances keep, docs/deployment.md,
        // "What an instance keeps in memory".)
      } finally {
        await store.db.updateTable('clients').set({ jwks: before.jwks }).where('realm', '=', fapiRealm).where('client_id', '=', fapiClientId).execute();
      }
    });

    test('a refused DPoP request never reaches the core: no operation is recorded for it', async () => {
      const key = await keyPair('ES256');
      const token = await boundToken(key);
      const url = `${server().url}/v1/term-deposits/initiate`;
      const before = await server().coregate.store.db.selectFrom('operations').select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow();
      const refused = await apiCall(url, token, { method: 'POST', body: depositBody(), proof: await dpopProof(key, 'POST', url, { ath: 'wrong' }) });
      assertApiRefusal(refused, 'INVALID_DPOP_PROOF', 'invalid_dpop_proof');
      const after = await server().coregate.store.db.selectFrom('operations').select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow();
      assert.equal(Number(after.count), Number(before.count));
      const executed = await apiCall(url, token, { method: 'POST', body: depositBody(), proof: await dpopProof(key, 'POST', url, { accessToken: token }) });
      assert.equal(executed.status, 200, JSON.stringify(executed.body));
    });
  },
  // Many refusals of one client from one address: the failed-authentication limit (429) is another rule's.
  { data: material.dataFile, flags: { authFailureLimit: '0', operatorApi: true } },
);

