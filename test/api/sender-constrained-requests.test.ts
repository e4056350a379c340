/**
 * A sender-constrained request is authenticated only once its constraint holds (docs/auth.md, "DPoP
 * at the API"; docs/security.md): the proof verifies, carries the realm's nonce when the realm
 * demands nonces, and is used for the first time. Until then nothing is charged to the token's
 * client: someone who captured a token and one of its proofs, without the private key, can replay
 * them as often as they like and take nothing of the victim's rate limit, request log or audit
 * trail. And a realm that demands DPoP nonces at its token endpoint demands them at the business
 * and operator APIs too (RFC 9449 §9).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { depositBody } from '../helpers/bodies.js';
import { clientAssertion, dpopProof, fapiMaterial, fapiRealm, keyPair, nonceRealm, type KeyPair, type ProofOptions } from '../helpers/fapi.js';
import { initiatePath, send, type HttpResult } from '../helpers/http.js';
import { describeEachStore } from '../helpers/suite.js';

const material = await fapiMaterial();
/** The per-client rate limit of this suite's server: more than a test's own calls, far fewer than a replay flood. */
const ratePerSecond = 10;

describeEachStore(
  'sender-constrained requests are authenticated only when the constraint holds',
  ({ server }) => {
    const issuer = (realm: string) => server().realmUrl(realm);
    const tokenUrl = (realm: string) => `${issuer(realm)}/protocol/openid-connect/token`;

    /** A DPoP-bound token of `key` for the fapi client of `realm` (after the nonce exchange, where the realm asks for one). */
    async function boundToken(key: KeyPair, realm = fapiRealm): Promise<string> {
      let nonce: string | undefined;
      for (let attempt = 0; attempt < 2; attempt += 1) {
        const form = new URLSearchParams({
          grant_type: 'client_credentials',
          client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
          client_assertion: await clientAssertion(issuer(realm), material.clientKey),
        });
        const proof = await dpopProof(key, 'POST', tokenUrl(realm), nonce === undefined ? {} : { nonce });
        const answer = await send(tokenUrl(realm), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', dpop: proof }, body: form });
        if (answer.status === 200) return answer.body.access_token as string;
        assert.equal(answer.body.error, 'use_dpop_nonce', JSON.stringify(answer.body));
        nonce = answer.headers.get('dpop-nonce') ?? undefined;
      }
      throw new Error('no token after the nonce exchange');
    }

    function proofFor(key: KeyPair, method: string, url: string, token: string, options: ProofOptions = {}): Promise<string> {
      return dpopProof(key, method, url, { accessToken: token, ...options });
    }

    function call(url: string, token: string, proof: string, init: { method?: string; body?: unknown; headers?: Record<string, string> } = {}): Promise<HttpResult> {
      return send(url, {
        method: init.method ?? 'GET',
        headers: {
          authorization: `DPoP ${token}`,
          dpop: proof,
          ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
          ...init.headers,
        },
        ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
      });
    }

    /** A retrieve of a deposit that does not exist: past the guards it is a 404, so any other answer is the guards'. */
    const retrieveUrl = () => `${server().url}/v1/term-deposits/TD-NONE-${randomUUID()}/retrieve`;

    test('a replayed proof is refused before the rate limit: replays take nothing of the victim\'s budget (docs/security.md)', async () => {
      const key = await keyPair('ES256');
      const token = await boundToken(key);
      const url = retrieveUrl();
      const captured = await proofFor(key, 'GET', url, token);
      assert.equal((await call(url, token, captured)).status, 404, 'the victim\'s own request');
      // Three times the limit's burst, replayed at once: before the fix the first ten took the
      // victim's bucket and the rest were 429s, as were the victim's next calls.
      const replays = await Promise.all(Array.from({ length: 3 * ratePerSecond }, () => call(url, token, captured)));
      assert.deepEqual([...new Set(replays.map((replay) => replay.status))], [401], 'every replay is 401, none 429');
      for (const replay of replays) assert.match(replay.headers.get('www-authenticate') ?? '', /^DPoP error="invalid_dpop_proof"/);
      const own = await Promise.all(Array.from({ length: ratePerSecond / 2 }, async () => call(url, token, await proofFor(key, 'GET', url, token))));
      assert.deepEqual(own.map((answer) => answer.status), own.map(() => 404), 'the victim\'s next calls, each with a fresh proof, are served');
    });

    test('a replayed proof leaves nothing in the victim\'s request log or audit trail, and executes nothing (docs/sandbox.md, docs/api.md)', async () => {
      const key = await keyPair('ES256');
      const token = await boundToken(key);
      const url = `${server().url}${initiatePath}`;
      const captured = await proofFor(key, 'POST', url, token);
      const original = await call(url, token, captured, { method: 'POST', body: depositBody(), headers: { 'x-correlation-id': `victim-${randomUUID()}` } });
      assert.equal(original.status, 200, JSON.stringify(original.body));
      const attackerIds = Array.from({ length: 20 }, () => `attacker-${randomUUID()}`);
      for (const correlationId of attackerIds) {
        const replay = await call(url, token, captured, { method: 'POST', body: depositBody(), headers: { 'x-correlation-id': correlationId, 'x-attacker': 'yes' } });
        assert.equal(replay.status, 401, JSON.stringify(replay.body));
        assert.equal(replay.body.errordetail?.[0]?.reason, 'INVALID_DPOP_PROOF');
      }
      const logUrl = `${server().url}/v1/sandbox/requests?limit=100`;
      const log = await call(logUrl, token, await proofFor(key, 'GET', logUrl, token));
      assert.equal(log.status, 200, JSON.stringify(log.body));
      const logged = (log.body.requests as Array<{ correlationId?: string; status: number }>).map((entry) => entry.correlationId);
      assert.deepEqual(logged.filter((id) => id?.startsWith('attacker-')), [], 'no replay in the victim\'s request log');
      assert.ok(logged.includes(original.headers.get('x-correlation-id') ?? ''), 'the victim\'s own request is logged');
      const audited = await server().coregate.store.db.selectFrom('audit_records').select(['correlation_id', 'outcome']).where('correlation_id', 'in', attackerIds).execute();
      assert.deepEqual(audited, [], 'no audit record attributed to the victim for a replay');
      const operations = await server().coregate.store.db.selectFrom('operations').select('correlation_id').where('correlation_id', 'in', attackerIds).execute();
      assert.deepEqual(operations, [], 'no replay claimed a correlation id or reached the core');
    });

    test('a proof that passed is spent even when its request is refused afterwards (rate, scope, correlation id): it cannot be replayed', async () => {
      const key = await keyPair('ES256');
      const token = await boundToken(key);
      const url = retrieveUrl();
      const proof = await proofFor(key, 'GET', url, token);
      const refused = await call(url, token, proof, { headers: { 'x-correlation-id': 'not valid!' } });
      assert.equal(refused.status, 400, 'refused for its correlation id, after authentication');
      const again = await call(url, token, proof);
      assert.equal(again.status, 401);
      assert.match(again.headers.get('www-authenticate') ?? '', /^DPoP error="invalid_dpop_proof"/);
    });

    test('a realm that demands DPoP nonces demands them at the business API: 401 use_dpop_nonce with DPoP-Nonce, and the nonce passes (docs/auth.md)', async () => {
      const key = await keyPair('ES256');
      const token = await boundToken(key, nonceRealm);
      const url = retrieveUrl();
      const withoutNonce = await call(url, token, await proofFor(key, 'GET', url, token));
      assert.equal(withoutNonce.status, 401, JSON.stringify(withoutNonce.body));
      assert.match(withoutNonce.headers.get('www-authenticate') ?? '', /^DPoP error="use_dpop_nonce", error_description="[^"]+", algs="PS256 ES256 EdDSA"$/);
      assert.equal(withoutNonce.body.errordetail?.[0]?.code, 'TD-401-004');
      assert.equal(withoutNonce.body.errordetail?.[0]?.reason, 'USE_DPOP_NONCE');
      const nonce = withoutNonce.headers.get('dpop-nonce');
      assert.ok(nonce, 'the DPoP-Nonce header names the nonce to use');
      assert.equal((await call(url, token, await proofFor(key, 'GET', url, token, { nonce }))).status, 404, 'a proof with the nonce passes the guards');
      assert.equal((await call(url, token, await proofFor(key, 'GET', url, token, { nonce }))).status, 404, 'the nonce serves more than one proof');
      const stale = await call(url, token, await proofFor(key, 'GET', url, token, { nonce: `${nonce}x` }));
      assert.equal(stale.status, 401);
      assert.match(stale.headers.get('www-authenticate') ?? '', /^DPoP error="use_dpop_nonce"/);
      assert.ok(stale.headers.get('dpop-nonce'));
      // A realm that does not demand nonces never asks for one.
      const plainToken = await boundToken(key, fapiRealm);
      assert.equal((await call(url, plainToken, await proofFor(key, 'GET', url, plainToken))).status, 404);
    });

    test('a realm that demands DPoP nonces demands them at the operator API too', async () => {
      const key = await keyPair('ES256');
      const token = await boundToken(key, nonceRealm);
      const url = `${server().url}/operator/v1/session`;
      const withoutNonce = await call(url, token, await proofFor(key, 'GET', url, token));
      assert.equal(withoutNonce.status, 401);
      assert.match(withoutNonce.headers.get('www-authenticate') ?? '', /^DPoP error="use_dpop_nonce"/);
      const nonce = withoutNonce.headers.get('dpop-nonce') ?? '';
      assert.ok(nonce !== '');
      const served = await call(url, token, await proofFor(key, 'GET', url, token, { nonce }));
      assert.equal(served.status, 200, JSON.stringify(served.body));
    });
  },
  { data: material.dataFile, flags: { sandbox: true, rateLimit: String(ratePerSecond) } },
);
