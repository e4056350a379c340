/** Readiness probes (src/health.ts): a probe that fails or hangs makes the service not ready, naming the probe. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NotReady, probe } from '../../src/health.js';

test('a probe that never answers is not ready after its time-out, named, instead of holding the health check', async () => {
  const hung = new Promise<void>(() => {});
  const failure = await probe('store', () => hung, {}, 50).then(
    () => undefined,
    (error: unknown) => error,
  );
  assert.ok(failure instanceof NotReady);
  assert.equal(failure.check, 'store');
  assert.match(String((failure.cause as Error).message), /no answer within 50 ms/);
});

test('a probe that fails is not ready with its cause; one that answers reports its latency', async () => {
  const failure = await probe('core', async () => {
    throw new Error('refused');
  }).catch((error: unknown) => error);
  assert.ok(failure instanceof NotReady);
  assert.equal((failure.cause as Error).message, 'refused');
  const report = await probe('store', async () => {}, { database: 'PostgreSQL' });
  assert.equal(report.status, 'ok');
  assert.equal(report.database, 'PostgreSQL');
  assert.equal(typeof report.latencyMs, 'number');
});
