/**
 * The replay record across processes (docs/auth.md, "The replay record"; issue 42):
 * a client assertion or DPoP proof is accepted once — on the same instance, on another instance
 * (also when both get it at the same moment), after a restart, after its process was killed
 * (SIGKILL) between the two uses, and after PostgreSQL emptied its unlogged tables (what a crash
 * or a promotion does, simulated with TRUNCATE): then the horizon refuses what was made before it.
 * Real `coregate serve` processes on one store, SQLite and PostgreSQL; the instances share a
 * public URL, so that the same assertion and proof are valid on each of them. SQLite serves one
 * instance (README): its horizon after another boot of the machine is shown in
 * test/auth/replay-record.test.ts, with a boot id handed in.
 */
// @lane process: starts coregate processes (docs/testing.md, "Lanes")
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, describe, test } from 'node:test';
import pg from 'pg';
import { clientAssertion, dpopProof, fapiMaterial, fapiRealm, keyPair, type KeyPair } from '../helpers/fapi.js';
import { spawnCoregate, type CoregateProcess } from '../helpers/processes.js';
import { storeTargets, type StoreTarget } from '../helpers/stores.js';
import { waitFor } from '../helpers/wait.js';

const material = await fapiMaterial();
const publicUrl = 'http://coregate.replay.test';
const issuer = `${publicUrl}/realms/${fapiRealm}`;
const tokenPath = `/realms/${fapiRealm}/protocol/openid-connect/token`;
const assertionType = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

interface Answer {
  status: number;
  body: Record<string, any>;
  challenge: string;
}

async function answer(response: Response): Promise<Answer> {
  const text = await response.text();
  return { status: response.status, body: text === '' ? {} : (JSON.parse(text) as Record<string, any>), challenge: response.headers.get('www-authenticate') ?? '' };
}

/** A token request with this assertion and proof, sent to `instance`. */
async function tokenRequest(instance: CoregateProcess, assertion: string, proof: string): Promise<Answer> {
  const form = new URLSearchParams({ grant_type: 'client_credentials', client_assertion_type: assertionType, client_assertion: assertion });
  return answer(await fetch(`${instance.url}${tokenPath}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', dpop: proof }, body: form }));
}

const newAssertion = (options: { iatOffset?: number } = {}) => clientAssertion(issuer, material.clientKey, options);
const newTokenProof = (key: KeyPair, options: { iatOffset?: number } = {}) => dpopProof(key, 'POST', `${publicUrl}${tokenPath}`, options);

/** A deposit that does not exist: past the guards the retrieve is a 404, so a 401 is the guards'. */
const retrievePath = `/v1/term-deposits/TD-NONE-${randomUUID()}/retrieve`;

async function retrieve(instance: CoregateProcess, token: string, proof: string): Promise<Answer> {
  return answer(await fetch(`${instance.url}${retrievePath}`, { headers: { authorization: `DPoP ${token}`, dpop: proof } }));
}

const newRetrieveProof = (key: KeyPair, token: string, options: { iatOffset?: number } = {}) => dpopProof(key, 'GET', `${publicUrl}${retrievePath}`, { accessToken: token, ...options });

function assertGranted(result: Answer): string {
  assert.equal(result.status, 200, JSON.stringify(result.body));
  assert.equal(result.body.token_type, 'DPoP');
  return result.body.access_token as string;
}

function assertRefusedAssertion(result: Answer): void {
  assert.equal(result.status, 401, JSON.stringify(result.body));
  assert.equal(result.body.error, 'invalid_client', JSON.stringify(result.body));
}

/** A proof refused as used before (`used`) or as made before the horizon, at the token endpoint (400) or the API (401). */
function assertRefusedProof(result: Answer, where: 'token' | 'api', reason: 'used' | 'horizon' = 'used'): void {
  const text = where === 'token' ? String(result.body.error_description) : result.challenge;
  assert.equal(result.status, where === 'token' ? 400 : 401, JSON.stringify(result.body));
  if (where === 'token') assert.equal(result.body.error, 'invalid_dpop_proof', JSON.stringify(result.body));
  else assert.match(result.challenge, /error="invalid_dpop_proof"/);
  assert.match(text, reason === 'used' ? /used before/ : /horizon/, text);
}

/** A session: its DPoP key and a token bound to it, granted by `instance`. */
async function session(instance: CoregateProcess): Promise<{ key: KeyPair; token: string }> {
  const key = await keyPair('ES256');
  return { key, token: assertGranted(await tokenRequest(instance, await newAssertion(), await newTokenProof(key))) };
}

const running = new Set<CoregateProcess>();
after(async () => {
  for (const instance of running) await instance.stop('SIGKILL');
});

function serve(dbUrl: string): Promise<CoregateProcess> {
  return spawnCoregate(['serve', '--data', material.dataFile, '--db', dbUrl, '--public-url', publicUrl, '--log-level', 'warn'], { readyTimeoutMs: 120_000 }).then((instance) => {
    running.add(instance);
    return instance;
  });
}

async function stop(instance: CoregateProcess, signal: NodeJS.Signals): Promise<void> {
  const exit = await instance.stop(signal);
  running.delete(instance);
  if (signal === 'SIGKILL') assert.equal(exit.signal, 'SIGKILL', 'killed, not ended on its own');
}

/** Uses an assertion, a token proof and an API proof once on `instance`; answers them for a replay. */
async function useOnce(instance: CoregateProcess) {
  const { key, token } = await session(instance);
  const assertion = await newAssertion();
  const tokenProof = await newTokenProof(key);
  assertGranted(await tokenRequest(instance, assertion, tokenProof));
  const apiProof = await newRetrieveProof(key, token);
  assert.equal((await retrieve(instance, token, apiProof)).status, 404, 'the proof passed the guards');
  return { key, token, assertion, tokenProof, apiProof };
}

/** Each of them refused on `instance`, as used before; the request's other uses stay free (all or none). */
async function assertReplaysRefused(instance: CoregateProcess, used: Awaited<ReturnType<typeof useOnce>>): Promise<void> {
  assertRefusedAssertion(await tokenRequest(instance, used.assertion, await newTokenProof(used.key)));
  const freshAssertion = await newAssertion();
  assertRefusedProof(await tokenRequest(instance, freshAssertion, used.tokenProof), 'token');
  assertGranted(await tokenRequest(instance, freshAssertion, await newTokenProof(used.key)));
  assertRefusedProof(await retrieve(instance, used.token, used.apiProof), 'api');
}

async function withStore(target: StoreTarget, body: (dbUrl: string) => Promise<void>): Promise<void> {
  const created = await target.create();
  try {
    await body(created.url);
  } finally {
    for (const instance of running) await stop(instance, 'SIGKILL');
    await created.drop();
  }
}

const postgres = storeTargets.find((target) => target.name === 'postgres') as StoreTarget;

for (const target of storeTargets) {
  describe(`the replay record across processes [${target.name}]`, { skip: target.skip }, () => {
    test('a replayed assertion and proofs are refused by the same instance, after a restart (SIGTERM), and after a SIGKILL between the two uses', async () => {
      await withStore(target, async (dbUrl) => {
        let instance = await serve(dbUrl);
        const first = await useOnce(instance);
        await assertReplaysRefused(instance, first);

        const beforeRestart = await useOnce(instance);
        await stop(instance, 'SIGTERM');
        instance = await serve(dbUrl);
        await assertReplaysRefused(instance, beforeRestart);

        // Killed right after its answers: what it recorded (without a sync, issue 42) was handed to
        // the operating system (SQLite) or to PostgreSQL before the answers, and is still there.
        const beforeKill = await useOnce(instance);
        await stop(instance, 'SIGKILL');
        instance = await serve(dbUrl);
        await assertReplaysRefused(instance, beforeKill);
        await assertReplaysRefused(instance, first);
      });
    });
  });
}

describe('the replay record on two instances of one PostgreSQL store', { skip: postgres.skip }, () => {
  test('a use on one instance is refused on the other, also when both get it at the same moment; the request that loses a race keeps its other uses free', async () => {
    await withStore(postgres, async (dbUrl) => {
      // One after the other: a store without the run's migrated template is migrated by the first.
      const a = await serve(dbUrl);
      const b = await serve(dbUrl);
      const used = await useOnce(a);
      await assertReplaysRefused(b, used);

      const { key, token } = await session(b);
      for (let round = 0; round < 10; round++) {
        // The same proof at the API on both at once: one passes.
        const proof = await newRetrieveProof(key, token);
        const statuses = (await Promise.all([retrieve(a, token, proof), retrieve(b, token, proof)])).map((result) => result.status).sort();
        assert.deepEqual(statuses, [401, 404], `round ${round}`);
        // The same assertion and proof at the token endpoint on both at once: one token.
        const assertion = await newAssertion();
        const tokenProof = await newTokenProof(key);
        const granted = (await Promise.all([tokenRequest(a, assertion, tokenProof), tokenRequest(b, assertion, tokenProof)])).filter((result) => result.status === 200);
        assert.equal(granted.length, 1, `round ${round}`);
        // The same proof with two assertions: one request is granted, the other is refused for
        // its proof, and its assertion stays usable.
        const [mine, theirs] = [await newAssertion(), await newAssertion()];
        const shared = await newTokenProof(key);
        const results = await Promise.all([tokenRequest(a, mine, shared), tokenRequest(b, theirs, shared)]);
        const won = results.findIndex((result) => result.status === 200);
        assert.ok(won >= 0, JSON.stringify(results.map((result) => result.body)));
        assertRefusedProof(results[1 - won] as Answer, 'token');
        assertGranted(await tokenRequest(won === 0 ? b : a, won === 0 ? theirs : mine, await newTokenProof(key)));
      }
    });
  });

  test('after PostgreSQL emptied the unlogged tables (a crash, a promotion), a proof or assertion made before the new horizon is refused, even unused; one made after it is taken', async () => {
    await withStore(postgres, async (dbUrl) => {
      const instance = await serve(dbUrl);
      const used = await useOnce(instance);
      const { key, token } = await session(instance);
      const unusedAssertion = await newAssertion();
      const unusedProof = await newRetrieveProof(key, token);
      const client = new pg.Client({ connectionString: dbUrl });
      await client.connect();
      try {
        await client.query('truncate replay_records, replay_horizon');
        // Lost with the tables, and refused by the horizon: the first use after them starts it.
        assertRefusedProof(await retrieve(instance, used.token, used.apiProof), 'api', 'horizon');
        assertRefusedProof(await retrieve(instance, token, unusedProof), 'api', 'horizon');
        assertRefusedAssertion(await tokenRequest(instance, unusedAssertion, await newTokenProof(key)));
        const { rows } = await client.query<{ since: string }>('select since_epoch_ms as since from replay_horizon where id = 1');
        const horizon = Number(rows[0]?.since);
        assert.ok(horizon > 0, 'a new horizon');
        // A proof may be accepted from 10 s before its iat: iat 10 s ahead makes one acceptable from
        // now, whole seconds — the next second after the horizon.
        await waitFor('a second after the horizon', async () => (Math.floor(Date.now() / 1000) * 1000 > horizon ? true : undefined), 5_000);
        assert.equal((await retrieve(instance, token, await newRetrieveProof(key, token, { iatOffset: 10 }))).status, 404);
        assertGranted(await tokenRequest(instance, await newAssertion({ iatOffset: 10 }), await newTokenProof(key, { iatOffset: 10 })));
      } finally {
        await client.end();
      }
    });
  });
});
