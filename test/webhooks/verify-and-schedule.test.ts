/**
 * The SDK's verifyWebhook against the Standard Webhooks reference implementation, and the delivery
 * schedule's bounds (docs/webhooks.md, "Delivery, retries and failure"): back-off with jitter
 * inside the retry period.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { verifyWebhook, WebhookSignatureError } from '../../src/sdk/index.js';
import { deliveryAttemptsMax, deliveryIntervalMaxMs, nextDeliveryAttemptAt } from '../../src/webhooks/delivery-schedule.js';
import { signDelivery } from '../../src/webhooks/signing.js';
import { newEndpointSecret, secretProblem } from '../../src/webhooks/secret.js';

const payload = JSON.stringify({ type: 'operation.executed', timestamp: '2026-03-02T10:00:00.000Z', data: { reference: 'r-1', status: 'Executed' } });

test('a delivery signed by coregate verifies with the SDK and with the standardwebhooks package; a signature by the package verifies with the SDK', () => {
  const secret = newEndpointSecret();
  assert.equal(secretProblem(secret), undefined);
  const headers = signDelivery(secret, 'evt-1', payload, new Date());
  assert.deepEqual(new Webhook(secret).verify(payload, { ...headers }), JSON.parse(payload));
  const event = verifyWebhook(Buffer.from(payload), { ...headers }, secret);
  assert.deepEqual(event, { id: 'evt-1', type: 'operation.executed', timestamp: '2026-03-02T10:00:00.000Z', data: { reference: 'r-1', status: 'Executed' } });

  const now = new Date();
  const byPackage = new Webhook(secret).sign('evt-2', now, payload);
  const fetchHeaders = new Headers({ 'Webhook-Id': 'evt-2', 'Webhook-Timestamp': String(Math.floor(now.getTime() / 1000)), 'Webhook-Signature': byPackage });
  assert.equal(verifyWebhook(payload, fetchHeaders, secret).id, 'evt-2', 'fetch Headers, any case');
});

test('verifyWebhook refuses a wrong secret, a changed body, another id, a stale timestamp and missing headers, saying why', () => {
  const secret = newEndpointSecret();
  const headers = { ...signDelivery(secret, 'evt-1', payload, new Date()) };
  assert.throws(() => verifyWebhook(payload, headers, newEndpointSecret()), /No matching signature/);
  assert.throws(() => verifyWebhook(payload.replace('r-1', 'r-2'), headers, secret), WebhookSignatureError);
  assert.throws(() => verifyWebhook(payload, { ...headers, 'webhook-id': 'evt-9' }, secret), WebhookSignatureError);
  const stale = { ...signDelivery(secret, 'evt-1', payload, new Date(Date.now() - 10 * 60_000)) };
  assert.throws(() => verifyWebhook(payload, stale, secret), /too old/);
  assert.throws(() => verifyWebhook(payload, { 'webhook-id': 'evt-1' }, secret), /Missing required headers/);
  const notAnEvent = JSON.stringify({ hello: 'world' });
  assert.throws(() => verifyWebhook(notAnEvent, { ...signDelivery(secret, 'evt-3', notAnEvent, new Date()) }, secret), /not a coregate event/);
});

test('endpoint secrets are whsec_ and base64 of 24 to 64 bytes', () => {
  assert.match(newEndpointSecret(), /^whsec_[A-Za-z0-9+/]{43}=$/);
  assert.match(secretProblem('abc') ?? '', /starts with whsec_/);
  assert.match(secretProblem('whsec_***') ?? '', /followed by base64/);
  assert.match(secretProblem('whsec_c2hvcnQ=') ?? '', /24 to 64 bytes/);
});

test('retries back off exponentially with jitter, capped, and end with the retry period or the attempt limit', () => {
  const schedule = { firstRetryMs: 5_000, retryPeriodMs: 24 * 3_600_000 };
  const created = 1_000_000;
  // Jitter on the upper half: the lowest and highest random draws bound each interval.
  for (const [attempts, intervalMs] of [[1, 5_000], [2, 10_000], [3, 20_000], [12, deliveryIntervalMaxMs], [40, deliveryIntervalMaxMs]] as const) {
    assert.equal(nextDeliveryAttemptAt(schedule, attempts, created, created, () => 0), created + intervalMs / 2);
    assert.equal(nextDeliveryAttemptAt(schedule, attempts, created, created, () => 1), created + intervalMs);
  }
  // Past the period: no next attempt (the delivery is failed).
  assert.equal(nextDeliveryAttemptAt(schedule, 5, created, created + schedule.retryPeriodMs - 10_000, () => 1), undefined);
  assert.equal(nextDeliveryAttemptAt({ ...schedule, retryPeriodMs: Number.MAX_SAFE_INTEGER }, deliveryAttemptsMax, created, created), undefined);
  // The default schedule: the period, not the attempt limit, ends a day of failures, whatever the jitter draws.
  for (const draw of [0, 1]) {
    let now = created;
    let attempts = 1;
    for (let next = nextDeliveryAttemptAt(schedule, attempts, created, now, () => draw); next !== undefined; next = nextDeliveryAttemptAt(schedule, attempts, created, now, () => draw)) {
      now = next;
      attempts += 1;
    }
    assert.ok(attempts < deliveryAttemptsMax, `${attempts} attempts in a day`);
    assert.ok(now - created > schedule.retryPeriodMs - deliveryIntervalMaxMs, 'retried until the period is nearly over');
  }
});
