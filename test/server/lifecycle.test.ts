/**
 * The service's life cycle: health probes, graceful shutdown of a real `coregate serve` process
 * (README.md, "Quick start"), configuration from flags and environment variables, and role wiring.
 */
// @lane process: starts coregate processes (docs/testing.md, "Lanes")
// @starts-early: among the slowest files of a quiet run
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { decodeJwt } from 'jose';
import { availableParallelism } from 'node:os';
import { resolveConfig, defaultDbUrl } from '../../src/config.js';
import { startCoregate, type Coregate } from '../../src/main.js';
import { runCliProcess, type CliResult } from '../helpers/cli.js';
import { freePort, spawnCoregate, type CoregateProcess } from '../helpers/processes.js';
import { demo, demoDataFile, postForm, startTestServer, type TestServer } from '../helpers/server.js';
import { describeEachStore, describeEachStoreUrl } from '../helpers/suite.js';

/** Upper bound for a CLI run, a spawned process's exit and the waits of a shutdown (readiness is spawnCoregate's). */
const processTimeoutMs = 30_000;

const treasuryForm = {
  grant_type: 'client_credentials',
  client_id: demo.treasury.clientId,
  client_secret: demo.treasury.secret,
};

/** Runs the CLI to completion; never throws on a non-zero exit. */
function runCli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  return runCliProcess(args, { env: { ...process.env, ...env }, timeoutMs: processTimeoutMs });
}

/** Waits until `predicate` holds, polling; fails after `timeoutMs`. */
async function waitFor(what: string, predicate: () => boolean | Promise<boolean>, timeoutMs = processTimeoutMs): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await predicate()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Tries a TCP connection: 'connected' or the error code (ECONNREFUSED...). */
function tryConnect(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
  });
}

/** A logger destination that keeps nothing: tests that start servers directly stay quiet. */
function discardingDestination(): Writable {
  return new Writable({ write: (_chunk, _encoding, callback) => callback() });
}

describeEachStore('health probes', ({ server }) => {
  test('GET /health/live answers 200 on a started server', async () => {
    const response = await fetch(`${server().url}/health/live`);
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), { status: 'ok' });
  });

  test('GET /health/ready answers 200 {status: "ready"} once the service accepts requests, and says what it probed (issue 12 item 7)', async () => {
    const response = await fetch(`${server().url}/health/ready`);
    assert.equal(response.status, 200);
    const body = (await response.json()) as { status: string; checks: Record<string, Record<string, unknown>> };
    assert.equal(body.status, 'ready');
    assert.deepEqual(Object.keys(body.checks).sort(), ['core', 'store']);
    assert.equal(body.checks.store?.status, 'ok');
    assert.match(String(body.checks.store?.database), /^(SQLite|PostgreSQL)$/);
    assert.equal(body.checks.core?.status, 'ok');
    assert.equal(body.checks.core?.core, 'embedded reference core');
    assert.equal(typeof body.checks.core?.latencyMs, 'number');
    assert.doesNotMatch(JSON.stringify(body), /postgres:\/\/|sqlite:/, 'no connection URL in a public answer');
  });

  test('the server that answers ready also issues tokens', async () => {
    assert.equal((await fetch(`${server().url}/health/ready`)).status, 200);
    const response = await postForm(server().tokenUrl(), treasuryForm);
    assert.equal(response.status, 200);
  });
});

/** The grace period the spawned servers get: short, so that a hung shutdown fails fast. */
const shutdownGraceMs = 5_000;

function startServeProcess(dir: string): Promise<CoregateProcess> {
  // debug: "incoming request" tells when a request is in flight.
  return spawnCoregate(['serve', '--log-level', 'debug', '--data', 'demo/sandbox.json', '--db', `sqlite:${join(dir, 'coregate.db')}`], {
    env: { COREGATE_SHUTDOWN_GRACE_MS: String(shutdownGraceMs) },
  });
}

/** The exit of the process, or a failure once the grace period and a margin are over. */
function exitWithin(serve: CoregateProcess, timeoutMs: number) {
  return Promise.race([
    serve.exit,
    new Promise<never>((_resolve, reject) => setTimeout(() => reject(new Error(`process did not exit within ${timeoutMs} ms`)), timeoutMs).unref()),
  ]);
}

/**
 * Opens a raw connection and sends a token request's headers with only half of its body: the
 * request is in flight until `finish` sends the rest. Answers the raw response text once complete.
 */
async function halfSentTokenRequest(serve: CoregateProcess, extraHeaders: string) {
  const body = new URLSearchParams(treasuryForm).toString();
  const half = Math.floor(body.length / 2);
  const socket = connect({ port: serve.port, host: '127.0.0.1' });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  let response = '';
  socket.on('data', (chunk) => (response += String(chunk)));
  socket.on('error', () => {});
  socket.write(
    'POST /realms/sandbox/protocol/openid-connect/token HTTP/1.1\r\n' +
      `Host: 127.0.0.1:${serve.port}\r\n` +
      'Content-Type: application/x-www-form-urlencoded\r\n' +
      extraHeaders +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n` +
      body.slice(0, half),
  );
  // The server logs "incoming request" once it has the headers: from then on the request is in flight.
  await waitFor('the request to be in flight', () =>
    serve
      .output()
      .stdout.split('\n')
      .some((line) => line.includes('"msg":"incoming request"') && line.includes('"url":"/realms/sandbox/protocol/openid-connect/token"')),
  );
  return {
    socket,
    async finish(): Promise<{ head: string; payload: string }> {
      socket.write(body.slice(half));
      await waitFor('a complete response', () => /\r\n\r\n\{.*\}$/s.test(response), 10_000);
      const [head = '', payload = ''] = response.split('\r\n\r\n');
      return { head, payload };
    },
  };
}

/** SIGTERM, then waits until the listener is closed (new connections refused). */
async function terminate(serve: CoregateProcess): Promise<void> {
  serve.child.kill('SIGTERM');
  await waitFor('the shutdown to start', () => serve.output().stdout.includes('shutting down'));
  await waitFor('new connections to be refused', async () => (await tryConnect(serve.port)) === 'ECONNREFUSED', 5_000);
}

function assertTokenResponse(response: { head: string; payload: string }): void {
  assert.match(response.head, /^HTTP\/1\.1 200 /, response.head);
  const token = JSON.parse(response.payload) as { access_token: string; token_type: string };
  assert.equal(token.token_type, 'Bearer');
  assert.equal(decodeJwt(token.access_token).client_id, demo.treasury.clientId);
}

describe('graceful shutdown (SIGTERM) of a coregate serve process', () => {
  const dirs: string[] = [];
  const processes: CoregateProcess[] = [];
  const sockets: Socket[] = [];
  const newDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'coregate-lifecycle-'));
    dirs.push(dir);
    return dir;
  };

  after(() => {
    for (const socket of sockets) socket.destroy();
    for (const serve of processes) if (serve.child.exitCode === null && serve.child.signalCode === null) serve.child.kill('SIGKILL');
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  test('an in-flight request of a client that closes its connection completes with 200; the process exits 0; new connections are refused', async () => {
    const serve = await startServeProcess(newDir());
    processes.push(serve);
    const request = await halfSentTokenRequest(serve, 'Connection: close\r\n');
    sockets.push(request.socket);
    await terminate(serve);
    assert.equal(serve.child.exitCode, null, 'the process waits for the in-flight request');
    assertTokenResponse(await request.finish());
    const { code, signal } = await exitWithin(serve, shutdownGraceMs + 5_000);
    assert.equal(signal, null);
    assert.equal(code, 0, serve.output().stderr + serve.output().stdout.split('\n').filter((l) => l.includes('"level":50')).join('\n'));
    assert.match(serve.output().stdout, /"msg":"stopped"/);
    assert.equal(await tryConnect(serve.port), 'ECONNREFUSED');
  });

  test('an in-flight request on a keep-alive connection (HTTP/1.1 default) completes with 200, and the process then exits 0 without waiting out the grace period', async () => {
    const serve = await startServeProcess(newDir());
    processes.push(serve);
    const request = await halfSentTokenRequest(serve, '');
    sockets.push(request.socket);
    await terminate(serve);
    assert.equal(serve.child.exitCode, null, 'the process waits for the in-flight request');
    const response = await request.finish();
    assertTokenResponse(response);
    // The client keeps its connection, as HTTP/1.1 clients and load balancers do. A draining
    // server must not keep it alive: the response says Connection: close, or the idle socket is closed.
    const finishedAt = Date.now();
    const { code, signal } = await exitWithin(serve, shutdownGraceMs + 5_000);
    assert.equal(signal, null);
    assert.equal(code, 0, `exit ${code} after ${Date.now() - finishedAt} ms; response head:\n${response.head}\n` +
      serve.output().stdout.split('\n').filter((l) => l.includes('"level":50')).join('\n'));
    assert.ok(Date.now() - finishedAt < shutdownGraceMs, 'the process exits once the in-flight request is done');
    assert.equal(await tryConnect(serve.port), 'ECONNREFUSED');
  });
});

describe('configuration (README.md, "Configuration"): resolveConfig', () => {
  test('defaults: port 8080, host localhost, the embedded store, role all', () => {
    const config = resolveConfig({}, {});
    assert.equal(config.port, 8080);
    assert.equal(config.host, 'localhost');
    assert.equal(config.db, defaultDbUrl);
    assert.equal(config.db, 'sqlite:./data/coregate.db');
    assert.equal(config.role, 'all');
    assert.equal(config.publicUrl, undefined);
    assert.equal(config.dataFile, undefined);
  });

  test('environment variables: COREGATE_PORT, COREGATE_DB, COREGATE_PUBLIC_URL, COREGATE_DATA, COREGATE_ROLE', () => {
    const config = resolveConfig(
      {},
      {
        COREGATE_PORT: '9090',
        COREGATE_DB: 'postgres://db.internal/coregate',
        COREGATE_PUBLIC_URL: 'https://auth.bank.example',
        COREGATE_DATA: 'demo/sandbox.json',
        COREGATE_ROLE: 'auth',
        COREGATE_BUSINESS_DATE: '2026-03-02',
      },
    );
    assert.equal(config.port, 9090);
    assert.equal(config.db, 'postgres://db.internal/coregate');
    assert.equal(config.publicUrl, 'https://auth.bank.example');
    assert.equal(config.dataFile, 'demo/sandbox.json');
    assert.equal(config.role, 'auth');
    assert.equal(config.businessDate, '2026-03-02');
  });

  test('flags win over environment variables', () => {
    const config = resolveConfig(
      { port: '7070', db: 'sqlite:/tmp/flag.db', publicUrl: 'https://flag.example', role: 'api', businessDate: '2026-03-03' },
      {
        COREGATE_PORT: '9090',
        COREGATE_DB: 'postgres://env/coregate',
        COREGATE_PUBLIC_URL: 'https://env.example',
        COREGATE_ROLE: 'auth',
        COREGATE_BUSINESS_DATE: '2026-03-02',
      },
    );
    assert.equal(config.port, 7070);
    assert.equal(config.db, 'sqlite:/tmp/flag.db');
    assert.equal(config.publicUrl, 'https://flag.example');
    assert.equal(config.role, 'api');
    assert.equal(config.businessDate, '2026-03-03');
  });

  test('the public URL loses its trailing slashes', () => {
    assert.equal(resolveConfig({ publicUrl: 'https://auth.bank.example/base//' }, {}).publicUrl, 'https://auth.bank.example/base');
  });

  test('--port abc is refused with a message naming the setting', () => {
    assert.throws(() => resolveConfig({ port: 'abc' }, {}), /--port/);
  });

  test('COREGATE_PORT=abc is refused with a message naming the variable', () => {
    assert.throws(() => resolveConfig({}, { COREGATE_PORT: 'abc' }), /COREGATE_PORT/);
  });

  test('a port above 65535 or negative is refused', () => {
    assert.throws(() => resolveConfig({ port: '65536' }, {}), /--port/);
    assert.throws(() => resolveConfig({ port: '-1' }, {}), /--port/);
  });

  test('a valid --port overrides an invalid COREGATE_PORT (the flag wins)', () => {
    assert.equal(resolveConfig({ port: '8081' }, { COREGATE_PORT: 'abc' }).port, 8081);
  });

  test('--business-date 2026-02-30 (not a calendar date) is refused naming the setting', () => {
    assert.throws(() => resolveConfig({ businessDate: '2026-02-30' }, {}), /--business-date/);
    assert.throws(() => resolveConfig({}, { COREGATE_BUSINESS_DATE: '02/03/2026' }), /COREGATE_BUSINESS_DATE/);
  });

  test('--business-date 2028-02-29 (leap day) is accepted', () => {
    assert.equal(resolveConfig({ businessDate: '2028-02-29' }, {}).businessDate, '2028-02-29');
  });

  test('--public-url that is no http(s) URL is refused naming the setting', () => {
    assert.throws(() => resolveConfig({ publicUrl: 'ftp://auth.example' }, {}), /--public-url/);
    assert.throws(() => resolveConfig({}, { COREGATE_PUBLIC_URL: 'auth.example' }), /COREGATE_PUBLIC_URL/);
  });

  test('--role other than all, auth or api is refused naming the setting', () => {
    assert.throws(() => resolveConfig({ role: 'both' }, {}), /--role/);
  });

  test('--db mysql://x is refused with a message naming the setting', () => {
    // config.ts promises that "every value is checked here, once, with a message naming the setting".
    assert.throws(() => resolveConfig({ db: 'mysql://x' }, {}), /--db|COREGATE_DB/);
  });

  test('--workers: 1 by default, auto is one per core, 0 or a word is refused naming the setting', () => {
    assert.equal(resolveConfig({}, {}).workers, 1);
    assert.equal(resolveConfig({ workers: 'auto' }, {}).workers, availableParallelism());
    assert.equal(resolveConfig({}, { COREGATE_WORKERS: '3' }).workers, 3);
    assert.throws(() => resolveConfig({ workers: '0' }, {}), /--workers/);
    assert.throws(() => resolveConfig({}, { COREGATE_WORKERS: 'many' }), /COREGATE_WORKERS/);
  });
});

describe('configuration: coregate serve exits non-zero on an invalid setting', () => {
  test('serve --port abc exits non-zero naming --port', async () => {
    const result = await runCli(['serve', '--port', 'abc', '--host', '127.0.0.1']);
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, /--port/);
  });

  test('serve --business-date 2026-02-30 exits non-zero naming --business-date', async () => {
    const result = await runCli(['serve', '--port', '0', '--host', '127.0.0.1', '--business-date', '2026-02-30']);
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, /--business-date/);
  });

  test('serve --db mysql://x exits non-zero naming the setting', async () => {
    const result = await runCli(['serve', '--port', '0', '--host', '127.0.0.1', '--db', 'mysql://x']);
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, /mysql:\/\/x/);
    assert.match(result.stderr, /--db|COREGATE_DB/);
  });
});

describeEachStoreUrl('configuration through environment variables, on a started server', ({ dbUrl }) => {
  let coregate: Coregate | undefined;
  let server: TestServer | undefined;
  after(async () => {
    await coregate?.close();
    await server?.close();
  });

  test('COREGATE_PORT, COREGATE_HOST and COREGATE_DB choose where it listens and which store it uses', async () => {
    const port = await freePort();
    const config = resolveConfig({ data: demoDataFile }, { COREGATE_PORT: String(port), COREGATE_HOST: '127.0.0.1', COREGATE_DB: dbUrl() });
    coregate = await startCoregate(config, { log: { destination: discardingDestination() } });
    assert.equal(coregate.url, `http://127.0.0.1:${port}`);
    // The test stores' URLs carry no password, so the displayed URL is the URL itself.
    assert.equal(coregate.store.displayUrl, dbUrl());
    const response = await postForm(`${coregate.url}/realms/sandbox/protocol/openid-connect/token`, treasuryForm);
    assert.equal(response.status, 200);
    await coregate.close();
    coregate = undefined;
  });

  test('COREGATE_PUBLIC_URL: tokens carry iss = {public url}/realms/sandbox, discovery agrees', async () => {
    server = await startTestServer({ db: dbUrl(), env: { COREGATE_PUBLIC_URL: 'https://auth.bank.example/' } });
    const response = await postForm(server.tokenUrl(), treasuryForm);
    assert.equal(response.status, 200);
    assert.equal(decodeJwt(response.body.access_token).iss, 'https://auth.bank.example/realms/sandbox');
    const discovery = (await (await fetch(`${server.realmUrl()}/.well-known/openid-configuration`)).json()) as { issuer: string };
    assert.equal(discovery.issuer, 'https://auth.bank.example/realms/sandbox');
    await server.close();
    server = undefined;
  });

  test('--public-url wins over COREGATE_PUBLIC_URL for the issuer', async () => {
    server = await startTestServer({ db: dbUrl(), publicUrl: 'https://flag.bank.example', env: { COREGATE_PUBLIC_URL: 'https://env.bank.example' } });
    const response = await postForm(server.tokenUrl(), treasuryForm);
    assert.equal(decodeJwt(response.body.access_token).iss, 'https://flag.bank.example/realms/sandbox');
    await server.close();
    server = undefined;
  });

  test('without a public URL the issuer is the address it listens on', async () => {
    server = await startTestServer({ db: dbUrl() });
    const response = await postForm(server.tokenUrl(), treasuryForm);
    assert.equal(decodeJwt(response.body.access_token).iss, `${server.url}/realms/sandbox`);
    await server.close();
    server = undefined;
  });
});

describeEachStoreUrl('roles', ({ dbUrl }) => {
  let coregate: Coregate | undefined;
  after(async () => {
    await coregate?.close();
  });

  async function startWithRole(role: string): Promise<Coregate> {
    const config = resolveConfig({ role, port: '0', host: '127.0.0.1', db: dbUrl(), data: demoDataFile }, {});
    return startCoregate(config, { log: { destination: discardingDestination() } });
  }

  test('--role auth serves the token endpoint, the JWKS and the health probes', async () => {
    coregate = await startWithRole('auth');
    const realmUrl = `${coregate.url}/realms/sandbox`;
    const response = await postForm(`${realmUrl}/protocol/openid-connect/token`, treasuryForm);
    assert.equal(response.status, 200);
    assert.equal(response.body.token_type, 'Bearer');
    const jwks = (await (await fetch(`${realmUrl}/protocol/openid-connect/certs`)).json()) as { keys: unknown[] };
    assert.ok(jwks.keys.length >= 1);
    assert.equal((await fetch(`${coregate.url}/health/ready`)).status, 200);
    await coregate.close();
    coregate = undefined;
  });

  test('--role api does not serve the auth service\'s endpoints', async () => {
    coregate = await startWithRole('api');
    const response = await fetch(`${coregate.url}/realms/sandbox/protocol/openid-connect/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(treasuryForm).toString(),
    });
    assert.equal(response.status, 404);
    assert.equal((await fetch(`${coregate.url}/health/ready`)).status, 200);
    await coregate.close();
    coregate = undefined;
  });
});
