/**
 * Signed events (docs/webhooks.md) against a started server and a real HTTP receiver: an event per
 * final state, written with it, signed as Standard Webhooks says, redelivered after a failure
 * with the same webhook-id, and a failure visible once the retry period is over.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import Fastify from 'fastify';
import { Webhook } from 'standardwebhooks';
import { webhookRoutes } from '../../src/operator/routes/webhooks.js';
import { Vault } from '../../src/auth/vault.js';
import { verifyWebhook, WebhookSignatureError } from '../../src/sdk/index.js';
import { listDeliveries, listEventsOf } from '../../src/store/webhooks.js';
import { registerEndpoint } from '../../src/webhooks/endpoints.js';
import { depositBody, depositBodyWithTerms } from '../helpers/bodies.js';
import { initiatePath, send, type HttpResult } from '../helpers/http.js';
import { demo, demoToken, type TestServer } from '../helpers/server.js';
import { describeEachStore } from '../helpers/suite.js';
import { FakeClock } from '../helpers/fake-clock.js';
import { drainWebhooks, loopbackEnv, loopbackTargets, Receiver } from './receiver.js';

/** Short schedule for the tests: first retry after 100-200 ms, failed after 3 s. */
const firstRetryMs = 200;
const retryPeriodMs = 3_000;
/**
 * The instance's clock: deliveries fall due when the test moves it, and the test drains the
 * webhooks instead of waiting for their loop. It starts at the real time (the tokens' times).
 */
const clock = new FakeClock(Date.now());
const masterKey = 'webhooks-test-master-key-0123456789abcdef';
const env = { COREGATE_WEBHOOK_FIRST_RETRY_MS: String(firstRetryMs), COREGATE_WEBHOOK_RETRY_SECONDS: String(retryPeriodMs / 1000), COREGATE_MASTER_KEY: masterKey, ...loopbackEnv };

async function initiate(server: TestServer, body: unknown, correlationId: string): Promise<HttpResult> {
  const token = await demoToken(server);
  return send(`${server.url}${initiatePath}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'x-correlation-id': correlationId },
    body: JSON.stringify(body),
  });
}

async function referenceOf(server: TestServer, correlationId: string): Promise<string> {
  const row = await server.coregate.store.db.selectFrom('operations').select('reference').where('correlation_id', '=', correlationId).executeTakeFirstOrThrow();
  return row.reference;
}

describeEachStore(
  'signed events',
  ({ server }) => {
    let receiver: Receiver;
    let secret: string;
    const vault = new Vault(masterKey);
    before(async () => {
      receiver = await Receiver.start();
      const endpoint = await registerEndpoint(server().coregate.store.db, vault, { realm: demo.realm, clientId: demo.treasury.clientId, url: receiver.url }, loopbackTargets, clock.now());
      secret = endpoint.secret;
      const stored = await server().coregate.store.db.selectFrom('webhook_endpoints').select('secret').where('id', '=', endpoint.id).executeTakeFirstOrThrow();
      assert.match(stored.secret, /^enc:v1:/, 'the secret is sealed with the master key');
      assert.ok(!stored.secret.includes(secret.slice('whsec_'.length)));
    });
    after(() => receiver.close());

    test('an Executed operation produces one operation.executed event, signed (verified by the SDK and by the standardwebhooks package)', async () => {
      const correlationId = randomUUID();
      const response = await initiate(server(), depositBody(), correlationId);
      assert.equal(response.status, 200, JSON.stringify(response.body));
      const reference = await referenceOf(server(), correlationId);
      const events = await listEventsOf(server().coregate.store.db, { reference });
      assert.equal(events.length, 1, 'one event per final state');
      assert.equal(events[0]?.type, 'operation.executed');

      await drainWebhooks(server());
      const [request] = receiver.arrived(correlationId);
      assert.ok(request);
      assert.equal(request.headers['webhook-id'], events[0]?.id, 'webhook-id is the event\'s stable id');
      assert.match(String(request.headers['webhook-timestamp']), /^\d{10}$/);
      assert.match(String(request.headers['webhook-signature']), /^v1,[A-Za-z0-9+/=]+$/);
      const headers = request.headers as Record<string, string>;
      const byPackage = new Webhook(secret).verify(request.body, headers) as { type: string; data: Record<string, unknown> };
      assert.equal(byPackage.type, 'operation.executed');
      const bySdk = verifyWebhook(request.body, headers, secret);
      assert.equal(bySdk.id, events[0]?.id);
      assert.equal(bySdk.type, 'operation.executed');
      assert.equal(bySdk.data.reference, reference);
      assert.equal(bySdk.data.operation, 'initiateTermDeposit');
      assert.equal(bySdk.data.realm, demo.realm);
      assert.equal(bySdk.data.clientId, demo.treasury.clientId);
      assert.equal(bySdk.data.correlationId, correlationId);
      assert.equal(bySdk.data.status, 'Executed');
      assert.deepEqual(bySdk.data.result, response.body, 'the result is the 200 body');
      assert.ok(!Number.isNaN(Date.parse(bySdk.timestamp)));

      // A tampered body or a wrong secret does not verify.
      assert.throws(() => verifyWebhook(request.body.replace('Executed', 'Rejected'), headers, secret), WebhookSignatureError);
      assert.throws(() => verifyWebhook(request.body, headers, `whsec_${Buffer.alloc(32, 7).toString('base64')}`), WebhookSignatureError);
      assert.throws(() => verifyWebhook(request.body, { ...headers, 'webhook-signature': '' }, secret), WebhookSignatureError);

      const deliveries = await listDeliveries(server().coregate.store.db, { eventId: events[0]?.id ?? '', limit: 10 });
      assert.equal(deliveries.length, 1);
      assert.equal(deliveries[0]?.status, 'delivered', 'the delivery recorded as delivered');
      assert.equal(deliveries[0]?.attempts, 1);
      assert.equal(deliveries[0]?.lastStatusCode, 200);
      assert.equal(deliveries[0]?.lastError, null);
    });

    test('a Rejected operation produces one operation.rejected event with its error record, signed', async () => {
      const correlationId = randomUUID();
      const response = await initiate(server(), depositBodyWithTerms({ amount: 1500.01, source: '1000000002' }), correlationId);
      assert.equal(response.status, 422, JSON.stringify(response.body));
      const reference = await referenceOf(server(), correlationId);
      const events = await listEventsOf(server().coregate.store.db, { reference });
      assert.deepEqual(events.map((event) => event.type), ['operation.rejected']);

      await drainWebhooks(server());
      const [request] = receiver.arrived(correlationId);
      assert.ok(request);
      const event = verifyWebhook(request.body, request.headers as Record<string, string>, secret);
      assert.equal(event.type, 'operation.rejected');
      assert.equal(event.data.status, 'Rejected');
      assert.equal(event.data.reference, reference);
      const error = event.data.error as { status: number; errordetail: Array<{ code: string }> };
      assert.equal(error.status, 422);
      assert.equal(error.errordetail[0]?.code, 'TD-422-002');
      assert.equal(event.data.result, undefined);
    });

    test('redelivered after the receiver fails (503 then 200), with the same webhook-id and a valid signature each time', async () => {
      const correlationId = randomUUID();
      let failures = 0;
      receiver.respond = (event) => (event.data.correlationId === correlationId && failures++ < 2 ? 503 : 200);
      try {
        const response = await initiate(server(), depositBody(), correlationId);
        assert.equal(response.status, 200);
        // The first attempt fails; the retries fall due 100-200 ms, then 200-400 ms, after each failure.
        await drainWebhooks(server());
        clock.advance(firstRetryMs);
        await drainWebhooks(server());
        clock.advance(2 * firstRetryMs);
        await drainWebhooks(server());
        const requests = receiver.arrived(correlationId, 3);
        assert.deepEqual(requests.map((r) => r.status), [503, 503, 200]);
        assert.equal(new Set(requests.map((r) => r.headers['webhook-id'])).size, 1, 'one webhook-id for every attempt');
        for (const request of requests) verifyWebhook(request.body, request.headers as Record<string, string>, secret);
        const eventId = String(requests[0]?.headers['webhook-id']);
        const [delivery] = await listDeliveries(server().coregate.store.db, { eventId, limit: 1 });
        assert.ok(delivery);
        assert.equal(delivery.status, 'delivered', 'the redelivery recorded');
        assert.equal(delivery.attempts, 3);
        assert.equal(delivery.lastStatusCode, 200);
      } finally {
        receiver.respond = () => 200;
      }
    });

    test('a delivery still refused after the retry period is failed, with its last status and error visible; an operator\'s retry sends it again', async () => {
      const correlationId = randomUUID();
      receiver.respond = (event) => (event.data.correlationId === correlationId ? 500 : 200);
      try {
        const response = await initiate(server(), depositBody(), correlationId);
        assert.equal(response.status, 200);
        const reference = await referenceOf(server(), correlationId);
        const [event] = await listEventsOf(server().coregate.store.db, { reference });
        // Attempts until the next would fall past the retry period: each retry falls due within
        // twice the previous interval, so moving the clock by the doubling interval makes each due.
        await drainWebhooks(server());
        for (let intervalMs = firstRetryMs; intervalMs <= 2 * retryPeriodMs; intervalMs *= 2) {
          clock.advance(intervalMs);
          await drainWebhooks(server());
        }
        const [delivery] = await listDeliveries(server().coregate.store.db, { eventId: event?.id ?? '', limit: 1 });
        assert.ok(delivery);
        assert.equal(delivery.status, 'failed', 'the delivery failed after the retry period');
        assert.ok(delivery.attempts >= 2, `retried before failing (${delivery.attempts} attempts)`);
        assert.equal(delivery.lastStatusCode, 500);
        assert.equal(delivery.lastError, 'http_error', 'the failure class; the status is lastStatusCode');
        assert.equal(delivery.nextAttemptAt, null);
        assert.equal(receiver.about(correlationId).length, delivery.attempts, 'every attempt reached the receiver');

        // The operator retries it (POST /operator/v1/webhooks/deliveries/{id}/retry) once the receiver is fixed.
        receiver.respond = () => 200;
        const operator = Fastify();
        await operator.register(webhookRoutes({ clock, store: server().coregate.store, vault, targets: loopbackTargets, kick: () => void server().coregate.webhooks.kick() }), { prefix: '/operator/v1' });
        try {
          const retried = await operator.inject({ method: 'POST', url: `/operator/v1/webhooks/deliveries/${delivery.id}/retry`, payload: {} });
          assert.equal(retried.statusCode, 202, retried.body);
        } finally {
          await operator.close();
        }
        await drainWebhooks(server());
        const [redelivered] = await listDeliveries(server().coregate.store.db, { eventId: event?.id ?? '', limit: 1 });
        assert.ok(redelivered);
        assert.equal(redelivered.status, 'delivered', 'the retried delivery delivered');
        assert.equal(redelivered.attempts, delivery.attempts + 1);
        assert.equal(receiver.about(correlationId).at(-1)?.status, 200);
      } finally {
        receiver.respond = () => 200;
      }
    });

    test('an endpoint receives its own client\'s events only, and only the types of its filter', async () => {
      const reporting = await Receiver.start();
      const rejectedOnly = await Receiver.start();
      try {
        await registerEndpoint(server().coregate.store.db, vault, { realm: demo.realm, clientId: demo.reporting.clientId, url: reporting.url }, loopbackTargets, clock.now());
        await registerEndpoint(server().coregate.store.db, vault, { realm: demo.realm, clientId: demo.treasury.clientId, url: rejectedOnly.url, eventTypes: ['operation.rejected'] }, loopbackTargets, clock.now());
        const executedId = randomUUID();
        const rejectedId = randomUUID();
        assert.equal((await initiate(server(), depositBody(), executedId)).status, 200);
        assert.equal((await initiate(server(), depositBodyWithTerms({ amount: 1500.01, source: '1000000002' }), rejectedId)).status, 422);
        await drainWebhooks(server());
        receiver.arrived(executedId);
        receiver.arrived(rejectedId);
        rejectedOnly.arrived(rejectedId);
        // Both events were fanned out (the treasury endpoint has them): the others had their chance.
        assert.equal(rejectedOnly.about(executedId).length, 0, 'the filter leaves operation.executed out');
        assert.equal(reporting.received.length, 0, 'another client\'s endpoint receives nothing');
      } finally {
        await reporting.close();
        await rejectedOnly.close();
      }
    });
  },
  { env, clock },
);
