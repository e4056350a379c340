/**
 * One endpoint never holds up another's deliveries (issue 24): an endpoint that accepts
 * connections and never answers keeps its own deliveries waiting until their time-out, and no one
 * else's. The webhook service's passes are driven by hand (kick) on a fake clock that the test
 * never moves: neither its timer nor the hung deliveries' time-out fires during the test.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, test } from 'node:test';
import { Vault } from '../../src/auth/vault.js';
import { createLogger } from '../../src/log.js';
import { readSandboxFile } from '../../src/sandbox/data-file.js';
import { loadSandboxData } from '../../src/sandbox/load.js';
import { openStore } from '../../src/store/connect.js';
import { migrateEmbedded } from '../helpers/migrate-embedded.js';
import { insertEvent, listDeliveries, listDueDeliveries } from '../../src/store/webhooks.js';
import { deliveriesPerEndpointMax } from '../../src/webhooks/deliverer.js';
import { registerEndpoint } from '../../src/webhooks/endpoints.js';
import { WebhookService } from '../../src/webhooks/webhook-service.js';
import { demo, demoDataFile } from '../helpers/server.js';
import { storeTargets } from '../helpers/stores.js';
import { FakeClock } from '../helpers/fake-clock.js';
import { loopbackTargets, Receiver } from './receiver.js';

/** On the fake clock it never fires: the hung attempts are abandoned by stop(). */
const hungTimeoutMs = 30_000;
/** More deliveries for the hung endpoint than one query of due deliveries reads (20). */
const hungBacklog = 30;

/** An endpoint that accepts every request and never answers. */
async function startHungEndpoint(): Promise<{ url: string; requests: IncomingMessage[]; received(count: number): Promise<void>; close(): Promise<void> }> {
  const requests: IncomingMessage[] = [];
  const waiting: Array<{ count: number; resolve: () => void }> = [];
  const server: Server = createServer((request) => {
    requests.push(request);
    for (const waiter of waiting.filter((w) => requests.length >= w.count)) {
      waiting.splice(waiting.indexOf(waiter), 1);
      waiter.resolve();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    requests,
    /** Resolves once `count` requests have arrived (an attempt started is a request on its way over loopback). */
    received: (count) => (requests.length >= count ? Promise.resolve() : new Promise((resolve) => waiting.push({ count, resolve }))),
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

function eventOf(clientId: string, correlationId: string, createdAtMs: number) {
  const payload = JSON.stringify({ type: 'operation.executed', timestamp: new Date(createdAtMs).toISOString(), data: { correlationId } });
  return { id: randomUUID(), type: 'operation.executed', realm: demo.realm, clientId, reference: null, payload, createdAtMs };
}

for (const target of storeTargets) {
  describe(`webhook endpoint lanes [${target.name}]`, { skip: target.skip }, () => {
    test('one endpoint never holds up another\'s deliveries: a hung endpoint with a backlog holds its own lane, another client\'s later event arrives while the hung ones wait', { timeout: 120_000 }, async () => {
      const { url, drop } = await target.create();
      const store = await openStore(url);
      const vault = new Vault(process.env.COREGATE_MASTER_KEY);
      const hung = await startHungEndpoint();
      const receiver = await Receiver.start();
      const clock = new FakeClock(Date.now());
      // Resolves when an attempt is recorded delivered: the hung ones never end, so the first is the other client's.
      let onDelivered: () => void = () => {};
      const delivered = new Promise<void>((resolve) => {
        onDelivered = resolve;
      });
      const service = new WebhookService({
        store,
        clock,
        vault,
        core: { eventsAfter: async () => [] },
        logger: createLogger({ level: 'silent' }),
        schedule: { firstRetryMs: 3_600_000, retryPeriodMs: 86_400_000 },
        requestTimeoutMs: hungTimeoutMs,
        // The timer never fires during the test: every pass is a kick.
        intervalMs: 3_600_000,
        targets: loopbackTargets,
        onAttempt: (outcome) => {
          if (outcome === 'delivered') onDelivered();
        },
      });
      try {
        await migrateEmbedded(store);
        await loadSandboxData(store, vault, readSandboxFile(demoDataFile), { webhookTargets: loopbackTargets });
        const registeredAtMs = clock.now() - 60_000;
        const hungEndpoint = await registerEndpoint(store.db, vault, { realm: demo.realm, clientId: demo.reporting.clientId, url: hung.url }, loopbackTargets, registeredAtMs);
        await registerEndpoint(store.db, vault, { realm: demo.realm, clientId: demo.treasury.clientId, url: receiver.url }, loopbackTargets, registeredAtMs);
        for (let index = 0; index < hungBacklog; index++) await insertEvent(store.db, eventOf(demo.reporting.clientId, `hung-${index}`, clock.now() - 1_000));

        // The first pass (start's own) fans the backlog out and starts the hung endpoint's attempts;
        // it ends without waiting for them.
        service.start();
        await service.kick();
        // The attempts are started: their requests are on their way to the hung endpoint over loopback.
        await hung.received(deliveriesPerEndpointMax);

        // Another client's event, written after the whole backlog, goes out in the next pass.
        await insertEvent(store.db, eventOf(demo.treasury.clientId, 'prompt', clock.now()));
        await service.kick();
        await delivered;
        receiver.arrived('prompt');

        const hungDeliveries = (await listDeliveries(store.db, { limit: 100 })).filter((delivery) => delivery.endpointId === hungEndpoint.id);
        assert.equal(hungDeliveries.length, hungBacklog);
        assert.ok(hungDeliveries.every((delivery) => delivery.attempts === 0 && delivery.status === 'pending'), 'no hung attempt has ended: their time-out has not fired');
        assert.equal(hung.requests.length, deliveriesPerEndpointMax, 'the hung endpoint holds its own lane, no more');

        // Stopping abandons the hung attempts and gives their leases back: due again at once, not after the lease.
        await service.stop();
        const due = await listDueDeliveries(store.db, clock.now(), 100, []);
        assert.equal(due.filter((delivery) => delivery.endpointId === hungEndpoint.id).length, hungBacklog);
      } finally {
        await service.stop();
        await hung.close();
        await receiver.close();
        await store.close();
        await drop();
      }
    });
  });
}
