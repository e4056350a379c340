/**
 * Webhooks are not a way into the machine or its network (issue 24, SSRF; docs/security.md):
 * a URL naming a loopback, private, link-local, ... address is refused where it is registered
 * (operator API, CLI, data file), and at every delivery the host is resolved once, every address
 * it has is checked, and the socket connects to a checked one. What the client and the operator
 * views show is a failure class, never a socket's error text.
 *
 * Names are resolved by a stub here, and the only sockets opened go to 127.0.0.1: no test sends
 * a packet to a link-local or private address.
 */
// @starts-early: among the slowest files of a quiet run
import { systemClock } from '../../src/clock/system-clock.js';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { LookupAddress } from 'node:dns';
import { Writable } from 'node:stream';
import { describe, test } from 'node:test';
import Fastify from 'fastify';
import { Vault } from '../../src/auth/vault.js';
import { createLogger } from '../../src/log.js';
import { webhookRoutes } from '../../src/operator/routes/webhooks.js';
import { readSandboxFile } from '../../src/sandbox/data-file.js';
import { loadSandboxData } from '../../src/sandbox/load.js';
import { openStore, type Store } from '../../src/store/connect.js';
import { migrateEmbedded } from '../helpers/migrate-embedded.js';
import { insertEndpoint, insertEvent, listDeliveries, listEndpoints, type WebhookDelivery } from '../../src/store/webhooks.js';
import type { ResolveHost } from '../../src/webhooks/checked-lookup.js';
import { Deliverer } from '../../src/webhooks/deliverer.js';
import { dispatchEvents } from '../../src/webhooks/dispatcher.js';
import { registerEndpoint } from '../../src/webhooks/endpoints.js';
import type { TargetPolicy } from '../../src/webhooks/target-address.js';
import { runCli } from '../helpers/cli.js';
import { readDemoData, writeTempDataFile } from '../helpers/data-files.js';
import { depositBody } from '../helpers/bodies.js';
import { initiatePath, send } from '../helpers/http.js';
import { freePort } from '../helpers/processes.js';
import { demo, demoDataFile, demoToken } from '../helpers/server.js';
import { storeTargets } from '../helpers/stores.js';
import { describeEachStore } from '../helpers/suite.js';
import { FakeClock } from '../helpers/fake-clock.js';
import { drainWebhooks, loopbackEnv, loopbackTargets, Receiver } from './receiver.js';

const publicOnly: TargetPolicy = { allowPrivate: false };
const secret = `whsec_${Buffer.alloc(32, 5).toString('base64')}`;
const vault = new Vault(process.env.COREGATE_MASTER_KEY);

/** The names the stub resolver knows; any other name is not found (a test never resolves a real one). */
function stubResolver(answers: Record<string, string[]>): ResolveHost & { calls: string[] } {
  const calls: string[] = [];
  const resolve = async (hostname: string): Promise<LookupAddress[]> => {
    calls.push(hostname);
    const addresses = answers[hostname];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return Object.assign(resolve, { calls });
}

interface Bench {
  store: Store;
  logLines: string[];
  /** Stores an endpoint as it is (the registration's check is bypassed: an endpoint stored before the rule, or a name). */
  endpointAt(url: string): Promise<string>;
  /** Writes an event for the treasury client, fans it out and sends it; answers its delivery once the attempt is recorded. */
  deliverOnce(endpointId: string, targets: TargetPolicy, resolveHost: ResolveHost): Promise<WebhookDelivery>;
}

async function withBench(target: (typeof storeTargets)[number], work: (bench: Bench) => Promise<void>): Promise<void> {
  const { url, drop } = await target.create();
  const store = await openStore(url);
  const logLines: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, callback) {
      logLines.push(String(chunk));
      callback();
    },
  });
  const logger = createLogger({ destination, level: 'debug' });
  try {
    await migrateEmbedded(store);
    await loadSandboxData(store, vault, readSandboxFile(demoDataFile), { webhookTargets: publicOnly });
    const registeredAtMs = Date.now() - 60_000;
    await work({
      store,
      logLines,
      async endpointAt(endpointUrl) {
        const id = randomUUID();
        const endpoint = { id, realm: demo.realm, clientId: demo.treasury.clientId, url: endpointUrl, enabled: true, eventTypes: [], createdAt: new Date(registeredAtMs).toISOString() };
        await insertEndpoint(store.db, endpoint, vault.seal(secret));
        return id;
      },
      async deliverOnce(endpointId, targets, resolveHost) {
        const eventId = randomUUID();
        const payload = JSON.stringify({ type: 'operation.executed', timestamp: new Date().toISOString(), data: { correlationId: eventId } });
        await insertEvent(store.db, { id: eventId, type: 'operation.executed', realm: demo.realm, clientId: demo.treasury.clientId, reference: null, payload, createdAtMs: Date.now() });
        await dispatchEvents(store, Date.now());
        const deliverer = new Deliverer({
          store,
          clock: systemClock,
          vault,
          logger,
          instanceId: randomUUID(),
          requestTimeoutMs: 10_000,
          schedule: { firstRetryMs: 3_600_000, retryPeriodMs: 86_400_000 },
          targets,
          resolveHost,
        });
        try {
          await deliverer.deliverDue();
          await deliverer.idle();
        } finally {
          await deliverer.stop();
        }
        const deliveries = (await listDeliveries(store.db, { eventId, limit: 10 })).filter((delivery) => delivery.endpointId === endpointId);
        assert.equal(deliveries.length, 1, 'one delivery to the endpoint');
        return deliveries[0] as WebhookDelivery;
      },
    });
  } finally {
    await store.close();
    await drop();
  }
}

for (const target of storeTargets) {
  describe(`webhook targets at delivery [${target.name}]`, { skip: target.skip }, () => {
    test('SSRF: an endpoint stored with a loopback address (2130706433, 0x7f.1, 127.0.0.1) is refused at delivery: forbidden_target, not one connection', async () => {
      const receiver = await Receiver.start();
      try {
        await withBench(target, async (bench) => {
          for (const host of ['2130706433', '0x7f.1', '127.0.0.1', '[::ffff:127.0.0.1]']) {
            const endpointId = await bench.endpointAt(`http://${host}:${receiver.port}/hooks`);
            const delivery = await bench.deliverOnce(endpointId, publicOnly, stubResolver({}));
            assert.equal(delivery.lastError, 'forbidden_target', host);
            assert.equal(delivery.lastStatusCode, null);
            assert.equal(delivery.attempts, 1);
            assert.equal(delivery.status, 'pending', 'retried on the schedule, like any failure');
          }
          assert.equal(receiver.connections, 0, 'the receiver on 127.0.0.1 was never connected to');
        });
      } finally {
        await receiver.close();
      }
    });

    test('SSRF: a name is resolved at delivery and refused when it resolves to a loopback address; the log says which, the views say forbidden_target', async () => {
      const receiver = await Receiver.start();
      try {
        await withBench(target, async (bench) => {
          const resolver = stubResolver({ 'hooks.example.test': ['127.0.0.1'] });
          const endpointId = await bench.endpointAt(`http://hooks.example.test:${receiver.port}/hooks`);
          const delivery = await bench.deliverOnce(endpointId, publicOnly, resolver);
          assert.equal(delivery.lastError, 'forbidden_target');
          assert.deepEqual(resolver.calls, ['hooks.example.test']);
          assert.equal(receiver.connections, 0);
          assert.ok(bench.logLines.some((line) => line.includes('hooks.example.test resolves to 127.0.0.1, a loopback address')), 'the operator\'s log has the detail');
        });
      } finally {
        await receiver.close();
      }
    });

    test('SSRF: every address of a name is checked: one link-local address among allowed ones refuses the name, even with --webhook-allow-private', async () => {
      const receiver = await Receiver.start();
      try {
        await withBench(target, async (bench) => {
          // The allowed address comes first: a check of the first address only would connect to it.
          const resolver = stubResolver({ 'mixed.example.test': ['127.0.0.1', '169.254.169.254'] });
          const endpointId = await bench.endpointAt(`http://mixed.example.test:${receiver.port}/hooks`);
          const delivery = await bench.deliverOnce(endpointId, loopbackTargets, resolver);
          assert.equal(delivery.lastError, 'forbidden_target');
          assert.equal(receiver.connections, 0);
        });
      } finally {
        await receiver.close();
      }
    });

    test('SSRF: the socket connects to the address that was checked, resolved once (no second resolution to rebind), with the URL\'s name as Host', async () => {
      const receiver = await Receiver.start();
      try {
        await withBench(target, async (bench) => {
          const resolver = stubResolver({ 'sandbox-receiver.example.test': ['127.0.0.1'] });
          const endpointId = await bench.endpointAt(`http://sandbox-receiver.example.test:${receiver.port}/hooks`);
          const delivery = await bench.deliverOnce(endpointId, loopbackTargets, resolver);
          assert.equal(delivery.status, 'delivered', JSON.stringify(delivery));
          assert.deepEqual(resolver.calls, ['sandbox-receiver.example.test'], 'one resolution: the checked answer is the one connected to');
          assert.equal(receiver.received.length, 1);
          assert.equal(receiver.received[0]?.headers.host, `sandbox-receiver.example.test:${receiver.port}`);
        });
      } finally {
        await receiver.close();
      }
    });

    test('SSRF: a refused connection is connection_failed in the views; the socket\'s error code is in the log only, and older rows holding one are shown as their class', async () => {
      await withBench(target, async (bench) => {
        const closedPort = await freePort();
        const endpointId = await bench.endpointAt(`http://127.0.0.1:${closedPort}/hooks`);
        const delivery = await bench.deliverOnce(endpointId, loopbackTargets, stubResolver({}));
        assert.equal(delivery.lastError, 'connection_failed');
        assert.ok(bench.logLines.some((line) => line.includes('ECONNREFUSED')), 'the operator\'s log has the code');
        // A row written before the classes: its words and code are not shown.
        await bench.store.db.updateTable('webhook_deliveries').set({ last_error: 'the request failed: ECONNREFUSED' }).where('id', '=', delivery.id).execute();
        await bench.store.db
          .updateTable('webhook_deliveries')
          .set({ last_error: 'no answer within 10000 ms' })
          .where('id', '=', (await bench.deliverOnce(endpointId, loopbackTargets, stubResolver({}))).id)
          .execute();
        const listed = await listDeliveries(bench.store.db, { client: { realm: demo.realm, clientId: demo.treasury.clientId }, limit: 10 });
        assert.deepEqual(listed.map((d) => d.lastError).sort(), ['connection_failed', 'timeout']);
        assert.doesNotMatch(JSON.stringify(listed), /ECONN|UND_ERR|socket|refused|no answer/i);
      });
    });

    test('SSRF: the operator API and the data file refuse a forbidden address at registration, with a message naming the rule', async () => {
      await withBench(target, async (bench) => {
        const operator = Fastify();
        await operator.register(webhookRoutes({ clock: systemClock, store: bench.store, vault, targets: publicOnly }), { prefix: '/operator/v1' });
        try {
          for (const url of ['http://127.0.0.1:6379/', 'http://2130706433:8080/operator/v1', 'http://0x7f.1:9464/metrics', 'http://127.1/', 'http://localhost:8080/', 'http://[::1]/', 'http://[::ffff:127.0.0.1]/', 'http://10.0.0.8/', 'http://192.168.1.1/', 'http://[fd00::1]/', 'http://100.64.0.1/']) {
            const response = await operator.inject({ method: 'POST', url: '/operator/v1/webhooks/endpoints', payload: { realm: demo.realm, clientId: demo.treasury.clientId, url } });
            assert.equal(response.statusCode, 400, `${url}: ${response.body}`);
            assert.match(response.json().message, /is a (loopback|private|carrier-grade NAT) address: webhooks go to public addresses only, unless coregate runs with --webhook-allow-private/, url);
          }
          for (const url of ['http://169.254.169.254/latest/meta-data/', 'http://[fe80::1]/', 'http://0.0.0.0:8080/', 'http://224.0.0.1/']) {
            const response = await operator.inject({ method: 'POST', url: '/operator/v1/webhooks/endpoints', payload: { realm: demo.realm, clientId: demo.treasury.clientId, url } });
            assert.equal(response.statusCode, 400, url);
            assert.match(response.json().message, /never a webhook target/, url);
          }
          const accepted = await operator.inject({ method: 'POST', url: '/operator/v1/webhooks/endpoints', payload: { realm: demo.realm, clientId: demo.treasury.clientId, url: 'https://hooks.example.com/coregate' } });
          assert.equal(accepted.statusCode, 201, accepted.body);
        } finally {
          await operator.close();
        }
        const data = { ...readDemoData(), webhooks: [{ realm: demo.realm, clientId: demo.treasury.clientId, url: 'http://0x7f.1:6379/', secret }] };
        await assert.rejects(loadSandboxData(bench.store, vault, data, { webhookTargets: publicOnly }), /data file: webhooks\[0\]: the URL's host 127\.0\.0\.1 is a loopback address/);
        assert.deepEqual((await listEndpoints(bench.store.db)).map((endpoint) => endpoint.url), ['https://hooks.example.com/coregate'], 'nothing of the refused file was stored');
        await loadSandboxData(bench.store, vault, data, { webhookTargets: loopbackTargets });
        assert.ok((await listEndpoints(bench.store.db)).some((endpoint) => endpoint.url === 'http://0x7f.1:6379/'), 'accepted with --webhook-allow-private');
      });
    });

    test('SSRF: coregate webhooks add refuses a forbidden address (exit 2, the rule in words); --webhook-allow-private accepts a loopback one', async () => {
      const { url, drop } = await target.create();
      try {
        const store = await openStore(url);
        try {
          await migrateEmbedded(store);
          await loadSandboxData(store, vault, readSandboxFile(demoDataFile), { webhookTargets: publicOnly });
        } finally {
          await store.close();
        }
        const env = { ...process.env, COREGATE_WEBHOOK_ALLOW_PRIVATE: '' };
        const refused = await runCli(['webhooks', 'add', '--realm', demo.realm, '--client-id', demo.treasury.clientId, '--url', 'http://2130706433:6379/', '--db', url], { env });
        assert.equal(refused.code, 2, refused.stderr);
        assert.match(refused.stderr, /the URL's host 127\.0\.0\.1 is a loopback address: webhooks go to public addresses only/);
        const metadata = await runCli(['webhooks', 'add', '--realm', demo.realm, '--client-id', demo.treasury.clientId, '--url', 'http://169.254.169.254/', '--webhook-allow-private', '--db', url], { env });
        assert.equal(metadata.code, 2);
        assert.match(metadata.stderr, /link-local address, never a webhook target/);
        const accepted = await runCli(['webhooks', 'add', '--realm', demo.realm, '--client-id', demo.treasury.clientId, '--url', 'http://127.0.0.1:9000/hooks', '--webhook-allow-private', '--db', url, '--json'], { env });
        assert.equal(accepted.code, 0, accepted.stderr);
        const byVariable = await runCli(['webhooks', 'add', '--realm', demo.realm, '--client-id', demo.treasury.clientId, '--url', 'http://localhost:9001/hooks', '--db', url, '--json'], { env: { ...env, COREGATE_WEBHOOK_ALLOW_PRIVATE: 'true' } });
        assert.equal(byVariable.code, 0, byVariable.stderr);
      } finally {
        await drop();
      }
    });
  });
}

const serverMasterKey = 'webhooks-targets-master-key-0123456789abcdef';
/** The server's clock: the test drains its webhooks instead of waiting for their loop. */
const serverClock = new FakeClock(Date.now());

describeEachStore(
  'webhook failures as the client and the operator see them',
  ({ server }) => {
    test('SSRF: GET /v1/webhooks/deliveries and the operator\'s list show a failure class (http_error with its status, connection_failed, forbidden_target), never a socket\'s error text', async () => {
      const serverVault = new Vault(serverMasterKey);
      const db = server().coregate.store.db;
      const refusing = await Receiver.start();
      refusing.respond = () => 503;
      const closedUrl = `http://127.0.0.1:${await freePort()}/hooks`;
      const metadataUrl = 'http://169.254.169.254/latest/meta-data/';
      try {
        const client = { realm: demo.realm, clientId: demo.treasury.clientId };
        await registerEndpoint(db, serverVault, { ...client, url: refusing.url }, loopbackTargets, serverClock.now());
        await registerEndpoint(db, serverVault, { ...client, url: closedUrl }, loopbackTargets, serverClock.now());
        // Stored before the rule (registration refuses it now, --webhook-allow-private or not): refused at delivery, never connected to.
        const stored = { id: randomUUID(), ...client, url: metadataUrl, enabled: true, eventTypes: [], createdAt: new Date(serverClock.now()).toISOString() };
        await insertEndpoint(db, stored, serverVault.seal(secret));

        const token = await demoToken(server());
        const response = await send(`${server().url}${initiatePath}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'x-correlation-id': randomUUID() },
          body: JSON.stringify(depositBody()),
        });
        assert.equal(response.status, 200, JSON.stringify(response.body));
        await drainWebhooks(server());
        const deliveries = await listDeliveries(db, { client, limit: 10 });
        assert.equal(deliveries.length, 3, 'a delivery to each endpoint');
        assert.ok(deliveries.every((delivery) => delivery.attempts >= 1), 'an attempt to each endpoint');

        const mine = await send(`${server().url}/v1/webhooks/deliveries?limit=10`, { headers: { authorization: `Bearer ${token}` } });
        assert.equal(mine.status, 200, JSON.stringify(mine.body));
        const seen = new Map((mine.body.deliveries as Array<{ url: string; lastError: string; lastStatusCode: number | null }>).map((d) => [d.url, [d.lastError, d.lastStatusCode]]));
        assert.deepEqual(seen.get(refusing.url), ['http_error', 503]);
        assert.deepEqual(seen.get(closedUrl), ['connection_failed', null]);
        assert.deepEqual(seen.get(metadataUrl), ['forbidden_target', null]);
        assert.doesNotMatch(JSON.stringify(mine.body), /ECONN|UND_ERR|socket|refused|fetch failed/i);

        const operator = Fastify();
        await operator.register(webhookRoutes({ clock: serverClock, store: server().coregate.store, vault: serverVault, targets: loopbackTargets }), { prefix: '/operator/v1' });
        try {
          const listed = await operator.inject({ method: 'GET', url: '/operator/v1/webhooks/deliveries?limit=10' });
          assert.equal(listed.statusCode, 200);
          assert.deepEqual((listed.json() as { deliveries: Array<{ lastError: string }> }).deliveries.map((d) => d.lastError).sort(), ['connection_failed', 'forbidden_target', 'http_error']);
          assert.doesNotMatch(listed.body, /ECONN|UND_ERR|socket|refused|fetch failed/i);
        } finally {
          await operator.close();
        }
        assert.equal(refusing.connections > 0, true);
      } finally {
        await refusing.close();
      }
    });
  },
  // One attempt each is enough: the first retry would come after the test.
  { env: { ...loopbackEnv, COREGATE_MASTER_KEY: serverMasterKey, COREGATE_WEBHOOK_FIRST_RETRY_MS: '600000' }, clock: serverClock },
);
