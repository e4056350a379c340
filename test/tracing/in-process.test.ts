/**
 * Issue 24 item 3, the rules a single instance keeps (in this process, the SDK started as
 * `coregate serve` starts it): OTLP protobuf is the default export; a probe or a scrape is not
 * traced, and neither is the background work; a request without a `traceparent` starts a trace
 * of its own, its transactions (the embedded core's postings among them) its children; a route
 * with identifiers is named by its template, never its path.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, test } from 'node:test';
import { resolveConfig } from '../../src/config.js';
import { startCoregate, type Coregate } from '../../src/main.js';
import { startTracing, type Tracing } from '../../src/tracing/start-tracing.js';
import { depositBody } from '../helpers/bodies.js';
import { tempDirectory } from '../helpers/data-files.js';
import { initiatePath, send } from '../helpers/http.js';
import { OtlpReceiver, spanKind } from '../helpers/otlp-receiver.js';
import { demo, demoDataFile, postForm } from '../helpers/server.js';

let receiver: OtlpReceiver;
let protobufReceiver: OtlpReceiver;
let coregate: Coregate;
const logLines: string[] = [];

before(async () => {
  receiver = await OtlpReceiver.start();
  protobufReceiver = await OtlpReceiver.start();
  for (const name of Object.keys(process.env).filter((each) => each.startsWith('OTEL_'))) delete process.env[name];
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.url;
  process.env.OTEL_EXPORTER_OTLP_PROTOCOL = 'http/json';
  process.env.OTEL_BSP_SCHEDULE_DELAY = '600000';
  const tracing = await startTracing({ name: 'coregate', version: 'test' });
  assert.ok(tracing, 'the endpoint turned tracing on');
  const destination = new Writable({
    write(chunk, _encoding, callback) {
      logLines.push(...String(chunk).split('\n').filter((line) => line !== ''));
      callback();
    },
  });
  const dir = tempDirectory('coregate-tracing-in-process-');
  const flags = { port: '0', host: '127.0.0.1', db: `sqlite:${join(dir, 'traced.db')}`, data: demoDataFile };
  coregate = await startCoregate(resolveConfig(flags, {}), { log: { destination, level: 'info' }, tracing });
});

after(async () => {
  await coregate?.close();
  await receiver?.close();
  await protobufReceiver?.close();
});

test('tracing exports OTLP protobuf over HTTP unless told http/json', async () => {
  const saved = { ...process.env };
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = protobufReceiver.url;
  delete process.env.OTEL_EXPORTER_OTLP_PROTOCOL;
  let tracing: Tracing | undefined;
  try {
    // A second provider in the same process: its tracer works; only the global registration is the first one's.
    tracing = await startTracing({ name: 'coregate', version: 'test' });
    tracing?.tracer.startSpan('probe').end();
  } finally {
    process.env = saved;
    await tracing?.shutdown();
  }
  assert.deepEqual(protobufReceiver.requests, [{ path: '/v1/traces', contentType: 'application/x-protobuf' }]);
});

test('a request without traceparent starts its own trace; the embedded core\'s transaction is its child; probes, scrapes and background loops are not traced', async () => {
  const token = await postForm(`${coregate.url}/realms/sandbox/protocol/openid-connect/token`, {
    grant_type: 'client_credentials',
    client_id: demo.treasury.clientId,
    client_secret: demo.treasury.secret,
  });
  assert.equal(token.status, 200);
  const correlationId = `in-process-${randomUUID()}`;
  const deposit = await send(`${coregate.url}${initiatePath}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token.body.access_token}`, 'content-type': 'application/json', 'x-correlation-id': correlationId },
    body: JSON.stringify(depositBody()),
  });
  assert.equal(deposit.status, 200, JSON.stringify(deposit.body));
  const retrieve = await send(`${coregate.url}/v1/term-deposits/${deposit.body.termDepositAccount}/retrieve`, { headers: { authorization: `Bearer ${token.body.access_token}` } });
  assert.equal(retrieve.status, 200);
  assert.equal((await fetch(`${coregate.url}/health/ready`)).status, 200);
  assert.equal((await fetch(`${coregate.url}/health/live`)).status, 200);
  assert.equal((await fetch(`${coregate.url}/metrics`)).status, 200);
  // The background loops work outside any request: each runs a pass here (driven, not waited
  // for), so that any span they made would be exported with the rest and caught below.
  const { reconciler, pendingWorker, webhooks, auditChainer, execution } = coregate.background;
  await reconciler.runOnce();
  await pendingWorker.runOnce();
  await webhooks.drain();
  await auditChainer.runOnce();
  await execution.idle();
  await coregate.close();

  const spans = receiver.spans;
  const servers = spans.filter((span) => span.kind === spanKind.server);
  assert.deepEqual(servers.map((span) => span.name).sort(), ['GET /v1/term-deposits/:termDepositId/retrieve', `POST ${initiatePath}`, 'POST /realms/:realm/protocol/openid-connect/token'].sort());
  const initiation = servers.find((span) => span.name === `POST ${initiatePath}`);
  assert.equal(initiation?.parentSpanId, '', 'a root span: no caller\'s trace to join');
  for (const span of spans.filter((each) => each.kind !== spanKind.server)) {
    assert.ok(servers.some((server) => server.spanId === span.parentSpanId), `${span.name} belongs to a request (no background span)`);
  }
  const transactions = spans.filter((span) => span.parentSpanId === initiation?.spanId);
  assert.ok(transactions.length >= 1);
  assert.ok(transactions.every((span) => span.name === 'transaction sqlite' && span.kind === spanKind.client && span.attributes['db.system'] === 'sqlite'));
  const contract = String(deposit.body.termDepositAccount);
  assert.ok(!receiver.bodies.join('\n').includes(contract), 'the contract number in the retrieve\'s path is not exported');
  const line = logLines.map((text) => JSON.parse(text) as Record<string, unknown>).find((entry) => entry.msg === 'request completed' && entry.correlationId === correlationId);
  assert.equal(line?.traceId, initiation?.traceId);
});
