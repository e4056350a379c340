/**
 * docs/deployment.md, "Tracing": a caller's `tracestate` stops at the trust boundary. A request may
 * join the caller's trace (its `traceparent`: trace id, parent span, sampled flag), but the text of
 * its `tracestate` is not kept in the server span's context: no exported span carries it, and the
 * call the API then makes to a remote core sends `traceparent` alone. In this process: the SDK
 * started as `coregate serve` starts it, an API with a remote core (in-process, untraced) reached
 * through a proxy that records the headers of every core call.
 */
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, test } from 'node:test';
import { resolveConfig } from '../../src/config.js';
import { startCoregate, type Coregate } from '../../src/main.js';
import { startTracing } from '../../src/tracing/start-tracing.js';
import { depositBody } from '../helpers/bodies.js';
import { startTestCoreServer, type TestCoreServer } from '../helpers/core-server.js';
import { tempDirectory } from '../helpers/data-files.js';
import { initiatePath, send } from '../helpers/http.js';
import { OtlpReceiver, spanKind } from '../helpers/otlp-receiver.js';
import { demo, demoDataFile, postForm } from '../helpers/server.js';

/** An HTTP proxy in front of the core that keeps the headers of every request it forwards. */
class RecordingProxy {
  readonly requests: Array<{ method: string; path: string; headers: IncomingHttpHeaders }> = [];

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(target: string): Promise<RecordingProxy> {
    const to = new URL(target);
    let proxy: RecordingProxy | undefined;
    const server = createServer((incoming, outgoing) => {
      proxy?.requests.push({ method: incoming.method ?? '', path: incoming.url ?? '', headers: { ...incoming.headers } });
      const forwarded = httpRequest({ host: to.hostname, port: to.port, method: incoming.method, path: incoming.url, headers: { ...incoming.headers, host: to.host } }, (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      });
      forwarded.on('error', () => outgoing.destroy());
      incoming.pipe(forwarded);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    proxy = new RecordingProxy(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    return proxy;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

let receiver: OtlpReceiver;
let core: TestCoreServer;
let proxy: RecordingProxy;
let coregate: Coregate;

before(async () => {
  receiver = await OtlpReceiver.start();
  for (const name of Object.keys(process.env).filter((each) => each.startsWith('OTEL_'))) delete process.env[name];
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.url;
  process.env.OTEL_EXPORTER_OTLP_PROTOCOL = 'http/json';
  process.env.OTEL_BSP_SCHEDULE_DELAY = '600000';
  const tracing = await startTracing({ name: 'coregate', version: 'test' });
  assert.ok(tracing, 'the endpoint turned tracing on');
  const dir = tempDirectory('coregate-trace-state-');
  core = await startTestCoreServer({ db: `sqlite:${join(dir, 'core.db')}` });
  proxy = await RecordingProxy.start(core.url);
  const quiet = new Writable({ write: (_chunk, _encoding, callback) => callback() });
  const flags = { port: '0', host: '127.0.0.1', db: `sqlite:${join(dir, 'api.db')}`, data: demoDataFile, coreUrl: proxy.url };
  coregate = await startCoregate(resolveConfig(flags, {}), { log: { destination: quiet, level: 'info' }, tracing });
});

after(async () => {
  await coregate?.close();
  await proxy?.close();
  await core?.close();
  await receiver?.close();
});

test('a caller\'s tracestate is dropped at the trust boundary: the server span joins the caller\'s trace, but no exported span has a trace state and the remote core call sends traceparent without tracestate', async () => {
  const token = await postForm(`${coregate.url}/realms/sandbox/protocol/openid-connect/token`, {
    grant_type: 'client_credentials',
    client_id: demo.treasury.clientId,
    client_secret: demo.treasury.secret,
  });
  assert.equal(token.status, 200);
  const callerTrace = randomBytes(16).toString('hex');
  const callerSpan = randomBytes(8).toString('hex');
  const evil = `evil=${randomBytes(12).toString('hex')}`;
  proxy.requests.length = 0;
  const deposit = await send(`${coregate.url}${initiatePath}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token.body.access_token}`,
      'content-type': 'application/json',
      'x-correlation-id': `trace-state-${randomUUID()}`,
      traceparent: `00-${callerTrace}-${callerSpan}-01`,
      tracestate: `${evil},vendor=caller-chosen-text`,
    },
    body: JSON.stringify(depositBody()),
  });
  assert.equal(deposit.status, 200, JSON.stringify(deposit.body));
  const coreCalls = [...proxy.requests];
  await coregate.close();

  const trace = receiver.spans.filter((span) => span.traceId === callerTrace);
  const server = trace.find((span) => span.kind === spanKind.server && span.name === `POST ${initiatePath}`);
  assert.ok(server, `the API's server span joins the caller's trace: ${JSON.stringify(receiver.spans.map((span) => span.name))}`);
  assert.equal(server.parentSpanId, callerSpan, 'its parent is the caller\'s span');
  assert.equal(server.traceState, '', 'the server span has no trace state');
  const clients = trace.filter((span) => span.kind === spanKind.client && span.name.startsWith('POST /core/'));
  assert.ok(clients.length >= 1, 'the core call is a client span of the same trace');
  for (const span of receiver.spans) assert.equal(span.traceState, '', `${span.name}: exported without a trace state`);
  assert.ok(!receiver.bodies.join('\n').includes('evil'), 'no exported byte holds the caller\'s tracestate');

  const traced = coreCalls.filter((call) => String(call.headers.traceparent ?? '').includes(callerTrace));
  assert.ok(traced.length >= 1, `the core calls carry the caller's trace in traceparent: ${JSON.stringify(coreCalls.map((call) => [call.method, call.path, call.headers.traceparent]))}`);
  for (const call of coreCalls) assert.equal(call.headers.tracestate, undefined, `${call.method} ${call.path} sends no tracestate`);
});
