/**
 * Several instances on one database (docs/deployment.md, "Several instances behind a load
 * balancer"): everything that decides an outcome is shared through the store, so two instances
 * answer as one would.
 */
// @deployments remote-core
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { findAccount } from '../../src/reference-core/storage/banking.js';
import { depositBody } from '../helpers/bodies.js';
import { initiatePath, send } from '../helpers/http.js';
import { demoToken, startTestServer, type TestServer } from '../helpers/server.js';
import { describeEachStoreUrl } from '../helpers/suite.js';
import { coreTablesOf } from '../../src/reference-core/storage/core-db.js';

describeEachStoreUrl('two API instances on one store', ({ dbUrl }) => {
  let first: TestServer | undefined;
  let second: TestServer | undefined;
  const servers = () => {
    if (!first || !second) throw new Error('servers not started');
    return [first, second] as const;
  };
  before(async () => {
    first = await startTestServer({ db: dbUrl() });
    // Same public URL: tokens of either instance are the realm's tokens, verified with the shared keys.
    second = await startTestServer({ db: dbUrl(), publicUrl: first.url });
  });
  after(async () => {
    await second?.close();
    await first?.close();
  });

  test('two instances racing on one correlation id → one 200, one 409; executed once', async () => {
    const [a, b] = servers();
    const token = await demoToken(a);
    const balanceBefore = (await findAccount(coreTablesOf(a.coregate.store.db), '1000000001'))?.balanceMinor ?? 0n;
    for (let round = 0; round < 5; round += 1) {
      const correlationId = randomUUID();
      const body = JSON.stringify(depositBody(1000 + round, '1000000001'));
      const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'x-correlation-id': correlationId };
      const answers = await Promise.all([a, b].map((server) => send(`${server.url}${initiatePath}`, { method: 'POST', headers, body })));
      assert.deepEqual(answers.map((answer) => answer.status).sort(), [200, 409], JSON.stringify(answers.map((answer) => answer.body)));
    }
    const balanceAfter = (await findAccount(coreTablesOf(a.coregate.store.db), '1000000001'))?.balanceMinor ?? 0n;
    assert.equal(balanceBefore - balanceAfter, (100_000n + 100_100n + 100_200n + 100_300n + 100_400n), 'each round debited once');
  });

  test('a token issued by one instance is accepted by the other', async () => {
    const [a, b] = servers();
    const token = await demoToken(a);
    const response = await send(`${b.url}${initiatePath}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'x-correlation-id': randomUUID() },
      body: JSON.stringify(depositBody(1500, '1000000001')),
    });
    assert.equal(response.status, 200, JSON.stringify(response.body));
  });
});

describeEachStoreUrl('split roles: an auth-only and an API-only instance on one store', ({ dbUrl }) => {
  let auth: TestServer | undefined;
  let api: TestServer | undefined;
  before(async () => {
    auth = await startTestServer({ db: dbUrl(), flags: { role: 'auth' } });
    // The API instance knows the auth instance's public URL: its realms' tokens are verified with
    // the keys both read from the shared store, and the realm's not-before applies.
    api = await startTestServer({ db: dbUrl(), data: null, flags: { role: 'api' }, publicUrl: auth.url });
  });
  after(async () => {
    await api?.close();
    await auth?.close();
  });

  test('a token from the auth-only instance is accepted by the API-only instance, by its issuer URL', async () => {
    if (!auth || !api) throw new Error('servers not started');
    const token = await demoToken(auth);
    const response = await send(`${api.url}${initiatePath}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'x-correlation-id': randomUUID() },
      body: JSON.stringify(depositBody(1200, '1000000001')),
    });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    // Neither serves the other's role.
    assert.equal((await send(`${auth.url}${initiatePath}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status, 404);
    assert.equal((await send(`${api.url}/realms/sandbox/protocol/openid-connect/certs`, {})).status, 404);
  });

  test('a token issued by another issuer URL is refused by the API-only instance (401)', async () => {
    if (!auth || !api) throw new Error('servers not started');
    const foreign = await startTestServer({ db: dbUrl(), data: null, flags: { role: 'auth' }, publicUrl: 'http://127.0.0.1:1' });
    try {
      const token = await demoToken(foreign);
      const response = await send(`${api.url}${initiatePath}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'x-correlation-id': randomUUID() },
        body: JSON.stringify(depositBody(1200, '1000000001')),
      });
      assert.equal(response.status, 401);
    } finally {
      await foreign.close();
    }
  });
});
