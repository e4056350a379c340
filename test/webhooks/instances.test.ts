/**
 * Several instances on one PostgreSQL database (docs/webhooks.md, "Several instances"): every
 * instance runs the dispatcher and the deliverer, and each event is delivered by one of them, once
 * (the receiver always answers 200, so no redelivery is allowed).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Vault } from '../../src/auth/vault.js';
import { listDeliveries, listEventsOf } from '../../src/store/webhooks.js';
import { registerEndpoint } from '../../src/webhooks/endpoints.js';
import { depositBody } from '../helpers/bodies.js';
import { initiatePath, send } from '../helpers/http.js';
import { demo, demoToken, startTestServer, type TestServer } from '../helpers/server.js';
import { storeTargets } from '../helpers/stores.js';
import { FakeClock } from '../helpers/fake-clock.js';
import { drainWebhooks, loopbackEnv, loopbackTargets, Receiver } from './receiver.js';

/** Both instances' clock: the test drains the webhooks of each instead of waiting for their loops. */
const clock = new FakeClock(Date.now());
const postgres = storeTargets.find((target) => target.name === 'postgres');

describe('two instances on one PostgreSQL database', { skip: postgres?.skip }, () => {
  let server: TestServer | undefined;
  let drop: (() => Promise<void>) | undefined;
  let receiver: Receiver;
  before(async () => {
    if (!postgres) throw new Error('no PostgreSQL target');
    const created = await postgres.create();
    drop = created.drop;
    receiver = await Receiver.start();
    // 24 deposits at once debit one account on two instances: on a loaded machine the last waits
    // for the others' row lock longer than the default 5 s core time-out. Delivery is the subject here.
    server = await startTestServer({ db: created.url, deployment: 'two-instances', env: { COREGATE_WEBHOOK_FIRST_RETRY_MS: '200', ...loopbackEnv }, flags: { coreTimeoutMs: '60000' }, clock });
    await registerEndpoint(server.coregate.store.db, new Vault(process.env.COREGATE_MASTER_KEY), { realm: demo.realm, clientId: demo.treasury.clientId, url: receiver.url }, loopbackTargets, clock.now());
  });
  after(async () => {
    await server?.close();
    await receiver?.close();
    await drop?.();
  });

  test('two instances on one PostgreSQL database deliver each event once', async () => {
    if (!server) throw new Error('server not started');
    const token = await demoToken(server);
    const correlationIds = Array.from({ length: 24 }, () => randomUUID());
    // Requests alternate between the instances (round robin), several at a time.
    await Promise.all(
      correlationIds.map(async (correlationId) => {
        const response = await send(`${server?.url ?? ''}${initiatePath}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'x-correlation-id': correlationId },
          body: JSON.stringify(depositBody()),
        });
        assert.equal(response.status, 200, JSON.stringify(response.body));
      }),
    );
    const events = await listEventsOf(server.coregate.store.db, { type: 'operation.executed' });
    assert.equal(events.length, correlationIds.length);
    // Both instances pass (fan-out and delivery) until nothing is due; the second round finds nothing left.
    await drainWebhooks(server);
    await drainWebhooks(server);
    const ids = new Set(receiver.received.map((r) => String(r.headers['webhook-id'])));
    assert.deepEqual(events.filter((event) => !ids.has(event.id)).map((event) => event.id), [], 'every event arrived');
    // Recorded once each: an instance that sent a delivery another had leased would show here or at the receiver.
    const deliveries = await listDeliveries(server.coregate.store.db, { limit: 100 });
    assert.equal(deliveries.length, events.length, 'every delivery recorded');
    assert.ok(deliveries.every((d) => d.status === 'delivered'), 'every delivery delivered');
    const perId = new Map<string, number>();
    for (const request of receiver.received) perId.set(String(request.headers['webhook-id']), (perId.get(String(request.headers['webhook-id'])) ?? 0) + 1);
    assert.deepEqual([...perId.values()].filter((count) => count !== 1), [], 'each webhook-id arrived once');
    assert.equal(perId.size, events.length);
    assert.ok(deliveries.every((d) => d.attempts === 1), 'one attempt per delivery');
  });
});
