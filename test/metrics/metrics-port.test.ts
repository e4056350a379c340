/**
 * `--metrics-port` / COREGATE_METRICS_PORT: the metrics move to a port of their own on the same
 * host, and leave the main port; the setting is checked with a message naming it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { resolveConfig } from '../../src/config.js';
import { runCli } from '../helpers/cli.js';
import { parseSamples, scrape, valueOf } from '../helpers/metrics.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { storeTargets } from '../helpers/stores.js';

describe('with --metrics-port 0 (any free port)', () => {
  let server: TestServer | undefined;
  let drop: (() => Promise<void>) | undefined;
  const running = () => {
    if (!server) throw new Error('server not started');
    return server;
  };

  before(async () => {
    const sqlite = storeTargets.find((target) => target.name === 'sqlite');
    const created = await sqlite!.create();
    drop = created.drop;
    server = await startTestServer({ db: created.url, flags: { metricsPort: '0' } });
  });
  after(async () => {
    await server?.close();
    await drop?.();
  });

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
