/**
 * Issue 24 item 3: traces with OpenTelemetry, as an operator runs them. `coregate core serve` and
 * `coregate serve --core-url` run as processes exporting OTLP/HTTP (JSON) to a receiver in this
 * process; a request that arrives with a load balancer's `traceparent` is one trace across the
 * API's server span, its core call, the core's server span and the store transactions of both,
 * each the child of the one before. No exported byte holds the token, the client secret or the
 * request body's account numbers, customer or amount; the request's log line names its trace.
 * Without OTEL_* configuration nothing is exported and the log line names no trace.
 */
// @lane process: starts coregate processes (docs/testing.md, "Lanes")
// @starts-early: among the slowest files of a quiet run
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { depositBody } from '../helpers/bodies.js';
import { tempDirectory } from '../helpers/data-files.js';
import { initiatePath, send } from '../helpers/http.js';
import { OtlpReceiver, spanKind, type ReceivedSpan } from '../helpers/otlp-receiver.js';
import { spawnCoregate, type CoregateProcess } from '../helpers/processes.js';
import { demo, postForm } from '../helpers/server.js';
import { storeTargets, withCreatedStore } from '../helpers/stores.js';
import { waitFor } from '../helpers/wait.js';

/** Amount, customer and accounts of the request body: none of them may reach a span. */
const amountValue = 4321.98;
const customerData = ['4321.98', 'C0001', '1000000001', '1000000002'];
const tokenPath = '/realms/sandbox/protocol/openid-connect/token';
const constitutionRoute = '/core/v1/term-deposit-constitutions/:reference';

/** Every OTEL_* variable of this test's own environment blanked, so that only what a test sets applies. */
function withoutOtelVariables(): Record<string, string> {
  return Object.fromEntries(Object.keys(process.env).filter((name) => name.startsWith('OTEL_')).map((name) => [name, '']));
}

function logLines(instance: CoregateProcess): Array<Record<string, any>> {
  return instance
    .output()
    .stdout.split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, any>);
}

async function tokenFor(api: CoregateProcess): Promise<string> {
  const response = await postForm(`${api.url}${tokenPath}`, { grant_type: 'client_credentials', client_id: demo.treasury.clientId, client_secret: demo.treasury.secret });
  assert.equal(response.status, 200, JSON.stringify(response.body));
  return response.body.access_token as string;
}

async function initiate(api: CoregateProcess, token: string, correlationId: string, headers: Record<string, string> = {}): Promise<void> {
  const response = await send(`${api.url}${initiatePath}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'x-correlation-id': correlationId, ...headers },
    body: JSON.stringify(depositBody(amountValue)),
  });
  assert.equal(response.status, 200, JSON.stringify(response.body));
}

async function stopped(instance: CoregateProcess): Promise<void> {
  const { code, signal } = await instance.stop('SIGTERM');
  assert.deepEqual({ code, signal }, { code: 0, signal: null }, instance.output().stderr);
}

function only(spans: ReceivedSpan[], what: string, predicate: (span: ReceivedSpan) => boolean): ReceivedSpan {
  const found = spans.filter(predicate);
  assert.equal(found.length, 1, `one ${what}, got ${found.length}: ${JSON.stringify(spans.map((span) => `${span.service} ${span.name}`))}`);
  return found[0] as ReceivedSpan;
}

for (const target of storeTargets) {
  describe(`traces on ${target.name}`, { skip: target.skip }, () => {
    test('one trace from the load balancer through the API, the core call and the core to both databases; nothing secret or customer-owned in it; the log line names it', { timeout: 120_000 }, async () => {
      const receiver = await OtlpReceiver.start();
      const running: CoregateProcess[] = [];
      try {
        await withCreatedStore(target, (coreDb) =>
          withCreatedStore(target, async (apiDb) => {
            const env = {
              ...withoutOtelVariables(),
              OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
              OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
              // Nothing is exported before shutdown: the spans arrive only if SIGTERM flushes them.
              OTEL_BSP_SCHEDULE_DELAY: '600000',
              COREGATE_LOG_LEVEL: 'info',
            };
            const core = await spawnCoregate(['core', 'serve', '--db', coreDb, '--data', 'demo/sandbox.json'], { env, readyLog: 'coregate core is ready' });
            running.push(core);
            const api = await spawnCoregate(['serve', '--db', apiDb, '--data', 'demo/sandbox.json', '--core-url', core.url], { env });
            running.push(api);

            const token = await tokenFor(api);
            // What a load balancer that traces sends: its trace, and its span as the parent.
            const balancerTrace = randomBytes(16).toString('hex');
            const balancerSpan = randomBytes(8).toString('hex');
            const correlationId = `trace-${randomUUID()}`;
            await initiate(api, token, correlationId, { traceparent: `00-${balancerTrace}-${balancerSpan}-01` });
            const requestLine = await waitFor('the API\'s request log line', async () => logLines(api).find((line) => line.msg === 'request completed' && line.correlationId === correlationId));
            await stopped(api);
            await stopped(core);
            assert.equal(receiver.spans.length > 0, true, 'the spans were flushed at shutdown');

            const trace = receiver.spans.filter((span) => span.traceId === balancerTrace);
            const apiServer = only(trace, 'API server span', (span) => span.service === 'coregate' && span.kind === spanKind.server);
            assert.equal(apiServer.name, `POST ${initiatePath}`);
            assert.equal(apiServer.parentSpanId, balancerSpan, 'the API joins the load balancer\'s trace');
            assert.deepEqual(
              { ...apiServer.attributes },
              {
                'http.request.method': 'POST',
                'http.route': initiatePath,
                'http.response.status_code': 200,
                'url.scheme': 'http',
                'coregate.client_id': demo.treasury.clientId,
                'coregate.correlation_id': correlationId,
              },
            );
            // The directory checks (the token's user and workstation) are core calls of the same trace too.
            const coreClient = only(trace, 'core client span', (span) => span.service === 'coregate' && span.kind === spanKind.client && span.name === `POST ${constitutionRoute}`);
            assert.equal(coreClient.parentSpanId, apiServer.spanId);
            assert.equal(coreClient.attributes['url.template'], constitutionRoute);
            assert.equal(coreClient.attributes['http.response.status_code'], 200);
            const coreServer = only(trace, 'core server span', (span) => span.service === 'coregate-core' && span.kind === spanKind.server && span.attributes['http.route'] === constitutionRoute);
            assert.equal(coreServer.parentSpanId, coreClient.spanId, 'the core joins the API\'s trace through traceparent');
            for (const span of trace.filter((each) => each.service === 'coregate-core' && each.kind === spanKind.server)) {
              assert.ok(
                trace.some((client) => client.spanId === span.parentSpanId && client.service === 'coregate' && client.kind === spanKind.client),
                `${span.name}: every core server span is the child of an API core call`,
              );
            }
            const system = target.name === 'postgres' ? 'postgresql' : 'sqlite';
            const coreTransactions = trace.filter((span) => span.service === 'coregate-core' && span.name.startsWith('transaction') && span.parentSpanId === coreServer.spanId);
            assert.ok(coreTransactions.length >= 1, 'the core\'s transaction is traced');
            for (const span of coreTransactions) {
              assert.equal(span.parentSpanId, coreServer.spanId);
              assert.equal(span.attributes['db.system'], system);
              assert.equal(span.attributes['db.system.name'], system);
            }
            const apiTransactions = trace.filter((span) => span.service === 'coregate' && span.name.startsWith('transaction'));
            // The claim before the core call, the settlement after it.
            assert.ok(apiTransactions.length >= 2, `the API's transactions are traced: ${apiTransactions.length}`);
            for (const span of apiTransactions) {
              assert.equal(span.parentSpanId, apiServer.spanId);
              assert.equal(span.attributes['db.system'], system);
            }
            const tokenServer = only(receiver.spans, 'token request span', (span) => span.attributes['http.route'] === '/realms/:realm/protocol/openid-connect/token');
            assert.notEqual(tokenServer.traceId, balancerTrace);

            const exported = receiver.bodies.join('\n');
            for (const secret of [token, demo.treasury.secret, ...customerData]) {
              assert.ok(!exported.includes(secret), `the exported spans hold ${secret.slice(0, 12)}…`);
            }

            assert.equal(requestLine.traceId, balancerTrace, 'the API\'s request log line names the trace');
            assert.equal(requestLine.spanId, apiServer.spanId);
            const coreLine = logLines(core).find((line) => line.msg === 'request completed' && line.spanId === coreServer.spanId);
            assert.equal(coreLine?.traceId, balancerTrace, 'the core\'s request log line names the trace too');
          }),
        );
      } finally {
        for (const instance of running) await instance.stop('SIGKILL');
        await receiver.close();
      }
    });
  });
}

describe('tracing off', () => {
  test('without OTEL_* configuration nothing is exported (not even to the default endpoint) and the request log line names no trace', { timeout: 60_000 }, async () => {
    // The OTLP default, http://localhost:4318: a receiver there hears any export a default would send.
    const atDefault = await OtlpReceiver.start(4318).catch(() => undefined);
    const dir = tempDirectory('coregate-tracing-off-');
    const api = await spawnCoregate(['serve', '--db', `sqlite:${join(dir, 'off.db')}`, '--data', 'demo/sandbox.json'], { env: { ...withoutOtelVariables(), COREGATE_LOG_LEVEL: 'info' } });
    try {
      const correlationId = `untraced-${randomUUID()}`;
      await initiate(api, await tokenFor(api), correlationId, { traceparent: `00-${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-01` });
      const line = await waitFor('the request log line', async () => logLines(api).find((entry) => entry.msg === 'request completed' && entry.correlationId === correlationId));
      assert.equal('traceId' in line, false);
      assert.equal('spanId' in line, false);
      await stopped(api);
      if (atDefault) assert.deepEqual(atDefault.bodies, []);
    } finally {
      await api.stop('SIGKILL');
      await atDefault?.close();
    }
  });

  test('OTEL_SDK_DISABLED=true turns tracing off even with an endpoint set', { timeout: 60_000 }, async () => {
    const receiver = await OtlpReceiver.start();
    const dir = tempDirectory('coregate-tracing-disabled-');
    const api = await spawnCoregate(['serve', '--db', `sqlite:${join(dir, 'disabled.db')}`, '--data', 'demo/sandbox.json'], {
      env: { ...withoutOtelVariables(), OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', COREGATE_LOG_LEVEL: 'info' },
    });
    try {
      const correlationId = `disabled-${randomUUID()}`;
      await initiate(api, await tokenFor(api), correlationId);
      const line = await waitFor('the request log line', async () => logLines(api).find((entry) => entry.msg === 'request completed' && entry.correlationId === correlationId));
      assert.equal('traceId' in line, false);
      await stopped(api);
      assert.deepEqual(receiver.bodies, []);
    } finally {
      await api.stop('SIGKILL');
      await receiver.close();
    }
  });
});
