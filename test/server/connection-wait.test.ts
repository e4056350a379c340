/**
 * With the embedded core, waiting for a database connection is the database's time, not the
 * core's: the core time-out (504, an outcome unknown) counts from when the operation's unit of
 * work holds its connection (src/operations/execution.ts), and no connection within the store's
 * connect time-out is a 503. Before, both time-outs were 5 s and raced: under load a connection
 * that came late was answered 504 (a failover test of a pair of runs). A proxy between coregate and
 * PostgreSQL holds the new connection while the instance's clock passes the core time-out.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { depositBody } from '../helpers/bodies.js';
import { FakeClock } from '../helpers/fake-clock.js';
import { initiatePath, send } from '../helpers/http.js';
import { demoToken, startTestServer } from '../helpers/server.js';
import { storeTargets } from '../helpers/stores.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';
import { waitFor } from '../helpers/wait.js';

const postgres = storeTargets.find((target) => target.name === 'postgres');
const coreTimeoutMs = 5_000;

test('a connection that comes after the core time-out has passed still executes the operation (200, not 504): the core\'s time starts with the connection', { skip: postgres?.skip }, async () => {
  const created = await postgres!.create();
  const url = new URL(created.url);
  const proxy = await TcpProxy.start(Number(url.port));
  url.port = String(proxy.port);
  const clock = new FakeClock(Date.now());
  const server = await startTestServer({ db: url.toString(), clock, deployment: 'embedded', flags: { coreTimeoutMs: String(coreTimeoutMs) } });
  try {
    const token = await demoToken(server);
    const deposit = (correlationId: string) =>
      send(`${server.url}${initiatePath}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'x-correlation-id': correlationId },
        body: JSON.stringify(depositBody()),
      });
    assert.equal((await deposit(randomUUID())).status, 200, 'a first deposit, every connection working');
    // The pool's connections are cut: the next operation needs a new one, which the proxy holds.
    // Once the pool has let the cut ones go: a statement sent on one before that fails at once (a
    // lost connection, 503), which is not what this test is about.
    proxy.cutAll('reset');
    proxy.pause('hold');
    await waitFor('the cut connections gone from the pool', async () => (server.coregate.store.poolStats()?.total === 0 ? true : undefined), 10_000);
    const answer = deposit(randomUUID());
    await waitFor('a new connection held at the proxy', async () => (proxy.counts.held > 0 ? true : undefined), 10_000);
    clock.advance(coreTimeoutMs * 2);
    proxy.resume();
    const response = await answer;
    assert.equal(response.status, 200, JSON.stringify(response.body));
  } finally {
    await server.close();
    await proxy.close();
    await created.drop();
  }
});
