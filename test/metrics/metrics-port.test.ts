/**
 * `--metrics-port` / COREGATE_METRICS_PORT: the metrics move to a port of their own on the same
 * host, and leave the main port; the setting is checked with a message naming it; that port holds
 * connections to the main port's limits (src/connection-limits.ts), with short limits so that no
 * test waits the 10 s default.
 */
// @starts-early: among the slowest files of a quiet run
import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import { describe, test } from 'node:test';
import { resolveConfig } from '../../src/config.js';
import { runCli } from '../helpers/cli.js';
import { parseSamples, scrape, valueOf } from '../helpers/metrics.js';
import { serverOnFreshSqlite } from '../helpers/server-fixture.js';
import { closedWithin, openSocket } from '../helpers/sockets.js';

/** A started server with its metrics on a port of their own, under the given environment. */
const metricsPortServer = (env: Record<string, string> = {}) => serverOnFreshSqlite({ flags: { metricsPort: '0' }, env });

describe('with --metrics-port 0 (any free port)', () => {
  const running = metricsPortServer();

  test('the main port answers 404 on /metrics', async () => {
    const response = await fetch(`${running().url}/metrics`);
    await response.text();
    assert.equal(response.status, 404);
  });

  test('the metrics port, on the same host, serves the metrics and counts the main port\'s requests', async () => {
    const { coregate } = running();
    const metricsUrl = new URL(coregate.metricsUrl);
    const mainUrl = new URL(coregate.url);
    assert.equal(metricsUrl.hostname, mainUrl.hostname);
    assert.notEqual(metricsUrl.port, mainUrl.port);
    assert.equal(metricsUrl.pathname, '/metrics');
    await (await fetch(`${coregate.url}/health/live`)).text();
    const response = await scrape(coregate.metricsUrl);
    assert.equal(response.status, 200);
    assert.match(response.contentType ?? '', /^text\/plain; version=0\.0\.4/);
    const all = parseSamples(response.text);
    assert.equal(valueOf(all, 'coregate_http_requests_total', { route: '/health/live', method: 'GET', status: '200' }), 1);
    assert.equal(valueOf(all, 'coregate_http_requests_total', { route: 'unmatched', method: 'GET', status: '404' }), 1, 'the main port\'s 404 on /metrics');
  });

  test('the metrics port serves nothing else: other paths 404, other methods 405', async () => {
    const metricsUrl = new URL(running().coregate.metricsUrl);
    const other = await fetch(new URL('/health/live', metricsUrl));
    await other.text();
    assert.equal(other.status, 404);
    const post = await fetch(metricsUrl, { method: 'POST', body: '' });
    await post.text();
    assert.equal(post.status, 405);
    assert.equal(post.headers.get('allow'), 'GET, HEAD');
  });
});

describe('the metrics port holds connections to the main port\'s limits', () => {
  const headersTimeoutMs = 300;
  // Whole seconds: node announces the time-out in seconds, rounded down (`Keep-Alive: timeout=1`).
  const keepAliveTimeoutMs = 1_000;
  /** Below node's own defaults (a silent socket kept 60 s and more, keep-alive 5 s): a port that ignored the limits keeps its socket open past this. */
  const slackMs = 3_000;
  const running = metricsPortServer({ COREGATE_HEADERS_TIMEOUT_MS: String(headersTimeoutMs), COREGATE_KEEP_ALIVE_TIMEOUT_MS: String(keepAliveTimeoutMs) });

  test('headers time-out: a connection that never sends a byte is closed by the server; a scrape is served meanwhile', async () => {
    const { metricsUrl } = running().coregate;
    const silent = await openSocket(metricsUrl);
    const closed = closedWithin(silent, headersTimeoutMs + slackMs);
    const response = await scrape(metricsUrl);
    assert.equal(response.status, 200);
    assert.match(response.text, /coregate_http_requests_total/);
    await closed;
  });

  test('keep-alive time-out: an idle kept-alive connection is closed once it has been answered', async () => {
    const socket = await openSocket(running().coregate.metricsUrl);
    let answer = '';
    const answered = new Promise<void>((resolve) =>
      socket.on('data', (chunk) => {
        answer += String(chunk);
        if (answer.includes('\r\n\r\n')) resolve();
      }),
    );
    socket.write('HEAD /metrics HTTP/1.1\r\nHost: metrics\r\n\r\n');
    await answered;
    assert.match(answer, /^HTTP\/1\.1 200 /);
    assert.match(answer, new RegExp(`Keep-Alive: timeout=${keepAliveTimeoutMs / 1000}`, 'i'));
    await closedWithin(socket, keepAliveTimeoutMs + slackMs);
  });
});

describe('the metrics port refuses connections beyond COREGATE_CONNECTIONS_MAX, as the main port does', () => {
  const running = metricsPortServer({ COREGATE_CONNECTIONS_MAX: '5' });

  test('connection cap: the sixth connection is closed at once; once others close, a scrape is served again', async () => {
    const { metricsUrl } = running().coregate;
    const sockets: Socket[] = [];
    try {
      for (let i = 0; i < 5; i += 1) sockets.push(await openSocket(metricsUrl));
      await closedWithin(await openSocket(metricsUrl), 3_000);
      for (const socket of sockets.splice(0)) socket.destroy();
      let status = 0;
      for (let attempt = 0; attempt < 20 && status !== 200; attempt += 1) {
        status = await scrape(metricsUrl).then((response) => response.status, () => 0);
        if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      assert.equal(status, 200);
    } finally {
      for (const socket of sockets) socket.destroy();
    }
  });
});

describe('--metrics-port / COREGATE_METRICS_PORT is checked', () => {
  test('absent: metrics on the main port (metricsPort undefined)', () => {
    assert.equal(resolveConfig({}, {}).metricsPort, undefined);
  });

  test('the flag wins over the environment', () => {
    assert.equal(resolveConfig({ metricsPort: '9464' }, { COREGATE_METRICS_PORT: '9465' }).metricsPort, 9464);
    assert.equal(resolveConfig({}, { COREGATE_METRICS_PORT: '9465' }).metricsPort, 9465);
  });

  test('not an integer, or outside 0-65535: refused with a message naming the setting', () => {
    assert.throws(() => resolveConfig({ metricsPort: 'abc' }, {}), /--metrics-port \/ COREGATE_METRICS_PORT must be an integer, got "abc"/);
    assert.throws(() => resolveConfig({}, { COREGATE_METRICS_PORT: '70000' }), /--metrics-port \/ COREGATE_METRICS_PORT must be between 0 and 65535, got 70000/);
  });

  test('coregate serve --help names the flag and its environment variable', async () => {
    const help = await runCli(['serve', '--help']);
    assert.equal(help.code, 0, help.stderr);
    assert.match(help.stdout, /--metrics-port <port>[\s\S]*COREGATE_METRICS_PORT/);
  });

  test('the same port as the main one: refused', () => {
    assert.throws(() => resolveConfig({ port: '8080', metricsPort: '8080' }, {}), /--metrics-port \/ COREGATE_METRICS_PORT must differ from --port/);
  });
});
