/**
 * Failed client authentication is limited per client and source address (docs/limits.md, "Failed
 * client authentication"), at the token and the introspection endpoints, over real HTTP. Source
 * addresses: every test binds its client sockets to addresses of its own in 127.0.0.0/8, so the
 * tests do not share counts.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { resolveConfig } from '../../src/config.js';
import type { HttpResult } from '../helpers/http.js';
import { basicAuth, demo, demoToken, type TestServer } from '../helpers/server.js';
import { serverOnFreshSqlite } from '../helpers/server-fixture.js';
import { postFormFrom } from '../helpers/source-address.js';
import { FakeClock } from '../helpers/fake-clock.js';

const { treasury, reporting } = demo;
const grant = { grant_type: 'client_credentials' };
const wrongSecret = 'wrong-secret-0123456789-not-the-real-one';

/** A server on a fresh SQLite store (limits do not depend on the store). */
const serverFixture = (flags: Record<string, string> = {}) => serverOnFreshSqlite({ flags });

const introspectUrl = (server: TestServer) => `${server.realmUrl()}/protocol/openid-connect/token/introspect`;

function tokenFrom(server: TestServer, address: string, client: { clientId: string; secret: string }): Promise<HttpResult> {
  return postFormFrom(address, server.tokenUrl(), { ...grant, client_id: client.clientId, client_secret: client.secret });
}

/** `count` wrong-secret token requests from `address`, each asserted 401 invalid_client. */
async function failTimes(server: TestServer, address: string, clientId: string, count: number): Promise<void> {
  for (let i = 1; i <= count; i += 1) {
    const response = await tokenFrom(server, address, { clientId, secret: wrongSecret });
    assert.equal(response.status, 401, `failure ${i} of ${count}: ${JSON.stringify(response.body)}`);
    assert.equal(response.body.error, 'invalid_client');
  }
}

function assertLimited(response: HttpResult, windowSeconds: number): void {
  assert.equal(response.status, 429, JSON.stringify(response.body));
  assert.deepEqual(Object.keys(response.body).sort(), ['error', 'error_description']);
  assert.equal(response.body.error, 'temporarily_unavailable');
  assert.ok(response.body.error_description.length > 0);
  const retryAfter = response.headers.get('retry-after');
  assert.match(retryAfter ?? '', /^[1-9][0-9]*$/, `Retry-After ${retryAfter}`);
  assert.ok(Number(retryAfter) <= windowSeconds, `Retry-After ${retryAfter} beyond the window`);
  assert.equal(response.headers.get('cache-control'), 'no-store');
  assert.equal(response.headers.get('pragma'), 'no-cache');
  assert.equal(response.headers.get('www-authenticate'), null);
}

describe('failed client authentication limit (defaults: 10 failures per client and address in 60 s)', () => {
  const server = serverFixture();

  test('the 11th wrong secret of one client from one address → 429 temporarily_unavailable, Retry-After, no-store; the same client with the right secret from another address → 200', async () => {
    await failTimes(server(), '127.0.0.11', treasury.clientId, 10);
    assertLimited(await tokenFrom(server(), '127.0.0.11', { clientId: treasury.clientId, secret: wrongSecret }), 60);
    const elsewhere = await tokenFrom(server(), '127.0.0.12', treasury);
    assert.equal(elsewhere.status, 200, JSON.stringify(elsewhere.body));
    assert.equal(typeof elsewhere.body.access_token, 'string');
  });

  test('a blocked client and address is refused before the secret is checked: the right secret gets 429 too (no oracle)', async () => {
    await failTimes(server(), '127.0.0.13', treasury.clientId, 10);
    assertLimited(await tokenFrom(server(), '127.0.0.13', treasury), 60);
  });

  test('another client from the blocked address is not affected', async () => {
    await failTimes(server(), '127.0.0.14', treasury.clientId, 10);
    assert.equal((await tokenFrom(server(), '127.0.0.14', reporting)).status, 200);
  });

  test('unknown client ids count too, keyed on the id as presented', async () => {
    await failTimes(server(), '127.0.0.15', 'no-such-client', 10);
    assertLimited(await tokenFrom(server(), '127.0.0.15', { clientId: 'no-such-client', secret: wrongSecret }), 60);
    await failTimes(server(), '127.0.0.15', 'another-unknown-client', 1);
  });

  test('Basic credentials count the same as form credentials', async () => {
    for (let i = 0; i < 10; i += 1) {
      const response = await postFormFrom('127.0.0.16', server().tokenUrl(), grant, { authorization: basicAuth(treasury.clientId, wrongSecret) });
      assert.equal(response.status, 401);
      assert.equal(response.headers.get('www-authenticate'), 'Basic realm="sandbox"');
    }
    assertLimited(await postFormFrom('127.0.0.16', server().tokenUrl(), grant, { authorization: basicAuth(treasury.clientId, treasury.secret) }), 60);
  });

  test('the introspection endpoint counts failures too, and shares the count with the token endpoint', async () => {
    const token = await demoToken(server());
    const introspectAs = (address: string, secret: string) =>
      postFormFrom(address, introspectUrl(server()), { token, client_id: reporting.clientId, client_secret: secret });
    for (let i = 0; i < 5; i += 1) assert.equal((await introspectAs('127.0.0.17', wrongSecret)).status, 401);
    await failTimes(server(), '127.0.0.17', reporting.clientId, 5);
    assertLimited(await introspectAs('127.0.0.17', reporting.secret), 60);
    assertLimited(await tokenFrom(server(), '127.0.0.17', reporting), 60);
    const elsewhere = await introspectAs('127.0.0.18', reporting.secret);
    assert.equal(elsewhere.status, 200);
    assert.equal(elsewhere.body.active, true);
  });

  test('a burst of concurrent wrong secrets cannot outrun the count: exactly 10 are checked, the rest get 429', async () => {
    const responses = await Promise.all(
      Array.from({ length: 30 }, () => tokenFrom(server(), '127.0.0.19', { clientId: treasury.clientId, secret: wrongSecret })),
    );
    const statuses = responses.map((response) => response.status);
    assert.equal(statuses.filter((status) => status === 401).length, 10, `statuses ${statuses}`);
    assert.equal(statuses.filter((status) => status === 429).length, 20, `statuses ${statuses}`);
  });

  test('successes neither count nor reset the count', async () => {
    await failTimes(server(), '127.0.0.20', treasury.clientId, 9);
    for (let i = 0; i < 3; i += 1) assert.equal((await tokenFrom(server(), '127.0.0.20', treasury)).status, 200);
    await failTimes(server(), '127.0.0.20', treasury.clientId, 1);
    assertLimited(await tokenFrom(server(), '127.0.0.20', treasury), 60);
  });

  test('the refusal is logged with the client and address, and no secret reaches a log line', async () => {
    const lines = server().logLines;
    const refusals = lines.filter((line) => line.includes('temporarily_unavailable')).map((line) => JSON.parse(line));
    assert.ok(refusals.length > 0, 'the 429s were logged');
    assert.ok(refusals.some((line) => /refused without checking its secret/.test(line.detail) && /127\.0\.0\.11/.test(line.detail)));
    assert.ok(lines.some((line) => /further attempts refused until the window closes/.test(line)), 'reaching the limit is logged');
    for (const secret of [wrongSecret, treasury.secret, reporting.secret]) {
      assert.ok(!lines.some((line) => line.includes(secret)), 'a secret reached the log');
    }
  });
});

describe('failed client authentication limit: the window (--auth-failure-limit 3, --auth-failure-window 2)', () => {
  // The window is the instance's clock's: the test moves it past the window instead of waiting.
  const clock = new FakeClock(Date.now());
  const server = serverOnFreshSqlite({ flags: { authFailureLimit: '3', authFailureWindow: '2' }, clock });

  test('after the window the blocked client and address may authenticate again', async () => {
    await failTimes(server(), '127.0.0.21', treasury.clientId, 3);
    const limited = await tokenFrom(server(), '127.0.0.21', treasury);
    assertLimited(limited, 2);
    // Still refused just before the window closes, admitted once it has.
    clock.advance(Number(limited.headers.get('retry-after')) * 1000 - 500);
    assertLimited(await tokenFrom(server(), '127.0.0.21', treasury), 1);
    clock.advance(600);
    const again = await tokenFrom(server(), '127.0.0.21', treasury);
    assert.equal(again.status, 200, JSON.stringify(again.body));
  });
});

describe('failed client authentication limit: --auth-failure-limit 0 disables it', () => {
  const server = serverFixture({ authFailureLimit: '0' });

  test('no 429 however many failures', async () => {
    await failTimes(server(), '127.0.0.22', treasury.clientId, 25);
    assert.equal((await tokenFrom(server(), '127.0.0.22', treasury)).status, 200);
  });
});

test('configuration: defaults 10 failures per 60 s, prefix coregate:, no Redis; bad values name their setting', () => {
  const config = resolveConfig({}, {});
  assert.equal(config.authFailureLimit, 10);
  assert.equal(config.authFailureWindowSeconds, 60);
  assert.equal(config.redisUrl, undefined);
  assert.equal(config.redisKeyPrefix, 'coregate:');
  assert.equal(config.redisCommandTimeoutMs, 200);
  const fromEnv = resolveConfig({}, { COREGATE_AUTH_FAILURE_LIMIT: '5', COREGATE_AUTH_FAILURE_WINDOW_SECONDS: '30', COREGATE_REDIS_URL: 'redis://cache:6379/2' });
  assert.deepEqual([fromEnv.authFailureLimit, fromEnv.authFailureWindowSeconds, fromEnv.redisUrl], [5, 30, 'redis://cache:6379/2']);
  assert.equal(resolveConfig({ authFailureLimit: '7' }, { COREGATE_AUTH_FAILURE_LIMIT: '5' }).authFailureLimit, 7, 'flags win');
  assert.throws(() => resolveConfig({ authFailureLimit: 'ten' }, {}), /--auth-failure-limit \/ COREGATE_AUTH_FAILURE_LIMIT must be an integer/);
  assert.throws(() => resolveConfig({ authFailureWindow: '-1' }, {}), /--auth-failure-window \/ COREGATE_AUTH_FAILURE_WINDOW_SECONDS/);
  assert.throws(() => resolveConfig({ redisKeyPrefix: 'has space' }, {}), /--redis-key-prefix \/ COREGATE_REDIS_KEY_PREFIX/);
  assert.throws(
    () => resolveConfig({ redisUrl: 'http://user:hunter2@cache:6379' }, {}),
    (error: Error) => /--redis-url \/ COREGATE_REDIS_URL/.test(error.message) && !error.message.includes('hunter2'),
  );
});
