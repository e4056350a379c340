/**
 * Registering endpoints and seeing deliveries (docs/webhooks.md, "Registering endpoints" and
 * "Deliveries seen by the client"): the operator route module on a bare
 * fastify instance (the operator plugin that authenticates it is another module's), the client's
 * GET /v1/webhooks/deliveries, the CLI, and the data file's `webhooks` section.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { Vault } from '../../src/auth/vault.js';
import { webhookRoutes } from '../../src/operator/routes/webhooks.js';
import { listEndpoints } from '../../src/store/webhooks.js';
import { depositBody } from '../helpers/bodies.js';
import { runCli } from '../helpers/cli.js';
import { readDemoData, writeTempDataFile } from '../helpers/data-files.js';
import { initiatePath, send } from '../helpers/http.js';
import { demo, demoToken, startTestServer } from '../helpers/server.js';
import { describeEachStore, describeEachStoreUrl } from '../helpers/suite.js';
import { FakeClock } from '../helpers/fake-clock.js';
import { drainWebhooks, loopbackEnv, loopbackTargets, Receiver } from './receiver.js';

/** The instance's clock (and the operator routes'): the test drains the webhooks instead of waiting for their loop. */
const clock = new FakeClock(Date.now());

const givenSecret = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;

describeEachStore('webhook endpoints and deliveries: operator routes and the client\'s view', ({ server }) => {
  let operator: FastifyInstance;
  let receiver: Receiver;
  before(async () => {
    receiver = await Receiver.start();
    operator = Fastify();
    await operator.register(webhookRoutes({ clock, store: server().coregate.store, vault: new Vault(process.env.COREGATE_MASTER_KEY), targets: loopbackTargets }), { prefix: '/operator/v1' });
    await operator.ready();
  });
  after(async () => {
    await operator.close();
    await receiver.close();
  });

  test('POST /webhooks/endpoints answers 201 with the secret once; GET lists endpoints without it; DELETE removes it (204, then 404)', async () => {
    const created = await operator.inject({ method: 'POST', url: '/operator/v1/webhooks/endpoints', payload: { realm: demo.realm, clientId: demo.branch.clientId, url: 'https://example.com/hooks', eventTypes: ['operation.rejected'] } });
    assert.equal(created.statusCode, 201, created.body);
    const endpoint = created.json() as Record<string, unknown>;
    assert.match(String(endpoint.secret), /^whsec_[A-Za-z0-9+/]+=*$/);
    assert.deepEqual(endpoint.eventTypes, ['operation.rejected']);
    const listed = await operator.inject({ method: 'GET', url: '/operator/v1/webhooks/endpoints' });
    assert.equal(listed.statusCode, 200);
    const found = (listed.json() as { endpoints: Array<Record<string, unknown>> }).endpoints.find((e) => e.id === endpoint.id);
    assert.ok(found);
    assert.deepEqual(Object.keys(found).sort(), ['clientId', 'createdAt', 'enabled', 'eventTypes', 'id', 'realm', 'url']);
    assert.ok(!listed.body.includes(String(endpoint.secret)), 'the secret is never listed');
    // Stored sealed when a master key is set, and never in clear in the listing.
    const removed = await operator.inject({ method: 'DELETE', url: `/operator/v1/webhooks/endpoints/${String(endpoint.id)}` });
    assert.equal(removed.statusCode, 204);
    const again = await operator.inject({ method: 'DELETE', url: `/operator/v1/webhooks/endpoints/${String(endpoint.id)}` });
    assert.equal(again.statusCode, 404);
    assert.deepEqual(Object.keys(again.json()).sort(), ['message', 'reason', 'status']);
  });

  test('invalid registrations are 400 with a message that says what to do', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ realm: demo.realm, clientId: demo.branch.clientId, url: 'ftp://example.com' }, /https/],
      [{ realm: demo.realm, clientId: demo.branch.clientId, url: 'not a url' }, /not a URL/],
      [{ realm: demo.realm, clientId: demo.branch.clientId, url: 'https://user:pw@example.com/' }, /user name or password/],
      [{ realm: demo.realm, clientId: 'nobody', url: 'https://example.com/' }, /does not exist/],
      [{ realm: demo.realm, clientId: demo.branch.clientId, url: 'https://example.com/', eventTypes: ['operation.done'] }, /unknown event type "operation.done"/],
      [{ realm: demo.realm, clientId: demo.branch.clientId, url: 'https://example.com/', secret: givenSecret }, /Unknown field secret/],
      [{ realm: demo.realm, url: 'https://example.com/' }, /required/],
      [[], /JSON object/],
    ];
    for (const [payload, message] of cases) {
      const response = await operator.inject({ method: 'POST', url: '/operator/v1/webhooks/endpoints', payload: payload as object });
      assert.equal(response.statusCode, 400, `${JSON.stringify(payload)}: ${response.body}`);
      const body = response.json() as { status: number; reason: string; message: string };
      assert.equal(body.status, 400);
      assert.equal(body.reason, 'VALIDATION_ERROR');
      assert.match(body.message, message);
    }
    const badQuery = await operator.inject({ method: 'GET', url: '/operator/v1/webhooks/deliveries?status=lost' });
    assert.equal(badQuery.statusCode, 400);
    assert.match(badQuery.json().message, /pending, delivered, failed/);
    const badLimit = await operator.inject({ method: 'GET', url: '/operator/v1/webhooks/deliveries?limit=0' });
    assert.equal(badLimit.statusCode, 400);
    const unknownRetry = await operator.inject({ method: 'POST', url: `/operator/v1/webhooks/deliveries/${randomUUID()}/retry`, payload: {} });
    assert.equal(unknownRetry.statusCode, 404);
  });

  test('deliveries are visible to the operator (GET /webhooks/deliveries) and to the client (GET /v1/webhooks/deliveries, its own only)', async () => {
    const created = await operator.inject({ method: 'POST', url: '/operator/v1/webhooks/endpoints', payload: { realm: demo.realm, clientId: demo.treasury.clientId, url: receiver.url } });
    assert.equal(created.statusCode, 201);
    const token = await demoToken(server());
    const correlationId = randomUUID();
    const response = await send(`${server().url}${initiatePath}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'x-correlation-id': correlationId },
      body: JSON.stringify(depositBody()),
    });
    assert.equal(response.status, 200);
    await drainWebhooks(server());
    const [request] = receiver.arrived(correlationId);
    const eventId = String(request?.headers['webhook-id']);
    const listed = await operator.inject({ method: 'GET', url: '/operator/v1/webhooks/deliveries?limit=50&status=delivered' });
    const delivery = (listed.json() as { deliveries: Array<Record<string, unknown>> }).deliveries.find((d) => d.eventId === eventId);
    assert.ok(delivery, 'the delivery recorded as delivered');
    assert.equal(delivery.eventType, 'operation.executed');
    assert.equal(delivery.url, receiver.url);
    assert.equal(delivery.attempts, 1);
    assert.equal(delivery.lastStatusCode, 200);
    assert.equal(typeof delivery.deliveredAt, 'string');

    const mine = await send(`${server().url}/v1/webhooks/deliveries?limit=10`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(mine.status, 200, JSON.stringify(mine.body));
    assert.ok((mine.body.deliveries as Array<{ eventId: string }>).some((d) => d.eventId === eventId), 'the client sees its delivery');
    const other = await send(`${server().url}/v1/webhooks/deliveries`, { headers: { authorization: `Bearer ${await demoToken(server(), demo.reporting)}` } });
    assert.equal(other.status, 200);
    assert.deepEqual(other.body.deliveries, [], 'another client sees none of them');
    const anonymous = await send(`${server().url}/v1/webhooks/deliveries`, {});
    assert.equal(anonymous.status, 401);
    const invalid = await send(`${server().url}/v1/webhooks/deliveries?status=lost`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(invalid.status, 400);
    assert.equal(invalid.body.reason, 'VALIDATION_ERROR');

    // A delivered delivery is not retried (the retry of a failed one: events.test.ts).
    const retried = await operator.inject({ method: 'POST', url: `/operator/v1/webhooks/deliveries/${String(delivery.id)}/retry`, payload: {} });
    assert.equal(retried.statusCode, 404);
  });
}, { env: loopbackEnv, clock });

// About loading and the CLI, not deployments: one embedded instance, whatever COREGATE_TEST_DEPLOYMENT says.
describeEachStoreUrl('webhook endpoints from the CLI and the data file', ({ dbUrl }) => {
  test('coregate webhooks add prints the secret once; list, deliveries and remove; --json', async () => {
    const dataFile = writeTempDataFile(readDemoData());
    const server = await startTestServer({ deployment: 'embedded', db: dbUrl(), data: dataFile });
    await server.close();
    const added = await runCli(['webhooks', 'add', '--realm', demo.realm, '--client-id', demo.treasury.clientId, '--url', 'https://example.com/cli', '--event-types', 'operation.executed,termDeposit.matured', '--db', dbUrl(), '--json']);
    assert.equal(added.code, 0, added.stderr);
    const endpoint = JSON.parse(added.stdout) as { id: string; secret: string; eventTypes: string[] };
    assert.match(endpoint.secret, /^whsec_/);
    assert.deepEqual(endpoint.eventTypes, ['operation.executed', 'termDeposit.matured']);
    const listed = await runCli(['webhooks', 'list', '--db', dbUrl()]);
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /https:\/\/example\.com\/cli/);
    assert.ok(!listed.stdout.includes(endpoint.secret), 'list never prints a secret');
    const listedJson = await runCli(['webhooks', 'list', '--realm', demo.realm, '--client-id', demo.treasury.clientId, '--db', dbUrl(), '--json']);
    assert.deepEqual((JSON.parse(listedJson.stdout) as Array<{ id: string }>).map((e) => e.id), [endpoint.id]);
    const deliveries = await runCli(['webhooks', 'deliveries', '--db', dbUrl(), '--json']);
    assert.equal(deliveries.code, 0, deliveries.stderr);
    assert.deepEqual(JSON.parse(deliveries.stdout), []);
    const badStatus = await runCli(['webhooks', 'deliveries', '--status', 'lost', '--db', dbUrl()]);
    assert.equal(badStatus.code, 2);
    assert.match(badStatus.stderr, /status must be one of pending, delivered, failed/);
    const refused = await runCli(['webhooks', 'add', '--realm', demo.realm, '--client-id', 'nobody', '--url', 'https://example.com/x', '--db', dbUrl()]);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /client "nobody" of realm "sandbox" does not exist/);
    const removed = await runCli(['webhooks', 'remove', endpoint.id, '--db', dbUrl()]);
    assert.equal(removed.code, 0, removed.stderr);
    const removedAgain = await runCli(['webhooks', 'remove', endpoint.id, '--db', dbUrl()]);
    assert.equal(removedAgain.code, 2);
  });

  test('the data file\'s webhooks are loaded once and never overwritten; a wrong one is refused naming the field', async () => {
    const url = 'https://example.com/from-file';
    const data = { ...readDemoData(), webhooks: [{ realm: demo.realm, clientId: demo.treasury.clientId, url, secret: givenSecret, eventTypes: ['operation.rejected'] }] };
    const first = await startTestServer({ deployment: 'embedded', db: dbUrl(), data: writeTempDataFile(data) });
    const [loaded] = (await listEndpoints(first.coregate.store.db)).filter((e) => e.url === url);
    assert.ok(loaded);
    assert.deepEqual(loaded.eventTypes, ['operation.rejected']);
    await first.close();
    // The file changes: the stored endpoint stays as it was.
    const changed = { ...data, webhooks: [{ ...data.webhooks[0], eventTypes: ['operation.executed'] }] };
    const second = await startTestServer({ deployment: 'embedded', db: dbUrl(), data: writeTempDataFile(changed) });
    const now = (await listEndpoints(second.coregate.store.db)).filter((e) => e.url === url);
    assert.deepEqual(now.map((e) => [e.id, e.eventTypes]), [[loaded.id, ['operation.rejected']]]);
    await second.close();
    const wrong = { ...data, webhooks: [{ realm: demo.realm, clientId: 'nobody', url: 'https://example.com/x' }] };
    await assert.rejects(startTestServer({ deployment: 'embedded', db: dbUrl(), data: writeTempDataFile(wrong) }), /webhooks\[0\]: client "nobody" of realm "sandbox" does not exist/);
    const badSecret = { ...data, webhooks: [{ realm: demo.realm, clientId: demo.treasury.clientId, url: 'https://example.com/y', secret: 'whsec_short' }] };
    await assert.rejects(startTestServer({ deployment: 'embedded', db: dbUrl(), data: writeTempDataFile(badSecret) }), /webhooks\[0\]: a webhook secret holds 24 to 64 bytes/);
  });
});
