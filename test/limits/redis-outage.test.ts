/**
 * A Redis that goes away: the service keeps answering on per-instance limits, warns once per
 * outage, says so through `limits.degraded()`, and shares limits again once Redis is back. The
 * suite runs a redis-server child process of its own (no persistence) and kills it mid-test.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { ConfigFlags } from '../../src/config.js';
import { demo, startTestServer, type TestServer } from '../helpers/server.js';
import { postFormFrom } from '../helpers/source-address.js';
import { freePort, randomKeyPrefix, redisServerSkip, startRedisServer, type RedisProcess } from '../helpers/redis.js';
import { storeTargets } from '../helpers/stores.js';
import { waitFor } from '../helpers/wait.js';

const { treasury } = demo;
const wrongSecret = 'wrong-secret-0123456789-not-the-real-one';
const sqlite = storeTargets.find((target) => target.name === 'sqlite');
const unreachableMessage = 'shared limit store unreachable: limits are kept per instance until it is back';
const backMessage = 'shared limit store reachable again: limits are shared';
// A longer command time-out than the 200 ms default: this machine runs other test suites.
const env = { COREGATE_REDIS_COMMAND_TIMEOUT_MS: '2000' };

const tokenAt = (server: TestServer, clientId: string, secret: string) =>
  postFormFrom('127.0.0.41', server.tokenUrl(), { grant_type: 'client_credentials', client_id: clientId, client_secret: secret });

/** `failures` wrong secrets for `clientId` on `server`, each 401. */
async function fail(server: TestServer, clientId: string, failures: number): Promise<void> {
  for (let i = 0; i < failures; i += 1) assert.equal((await tokenAt(server, clientId, wrongSecret)).status, 401, `failure ${i + 1} on ${server.url}`);
}

const linesWith = (server: TestServer, message: string) => server.logLines.filter((line) => line.includes(message)).map((line) => JSON.parse(line));

describe('limits when Redis goes away and comes back (a redis-server of this suite)', { skip: redisServerSkip }, () => {
  let redis: RedisProcess | undefined;
  const servers: TestServer[] = [];
  const drops: Array<() => Promise<void>> = [];
  const a = () => servers[0] as TestServer;
  const b = () => servers[1] as TestServer;

  before(async () => {
    if (!sqlite) throw new Error('no SQLite store target');
    redis = await startRedisServer();
    const flags: ConfigFlags = { redisUrl: redis.url, redisKeyPrefix: randomKeyPrefix(), authFailureLimit: '3' };
    for (let i = 0; i < 2; i += 1) {
      const created = await sqlite.create();
      drops.push(created.drop);
      servers.push(await startTestServer({ db: created.url, flags, env }));
    }
  });

  after(async () => {
    for (const server of servers) await server.close();
    await redis?.kill();
    for (const drop of drops) await drop();
  });

  test('with Redis up, failures on A count on B', async () => {
    await fail(a(), 'ghost-before', 3);
    assert.equal((await tokenAt(b(), 'ghost-before', wrongSecret)).status, 429);
    assert.equal(a().coregate.limits.degraded(), false);
  });

  test('Redis killed: requests are still answered on per-instance limits, one warning is logged, degraded() says so', async () => {
    await redis?.kill();
    for (const server of servers) await waitFor('degraded limits', async () => (server.coregate.limits.degraded() ? true : undefined), 10_000);
    assert.equal((await tokenAt(a(), treasury.clientId, treasury.secret)).status, 200, 'a correct secret still gets a token');
    await fail(a(), 'ghost-during', 3);
    assert.equal((await tokenAt(a(), 'ghost-during', wrongSecret)).status, 429, 'A still limits, in its own memory');
    assert.equal((await tokenAt(b(), 'ghost-during', wrongSecret)).status, 401, "B does not see A's failures: limits are per instance");
    for (const server of servers) {
      const warnings = linesWith(server, unreachableMessage);
      assert.equal(warnings.length, 1, `one warning per outage on ${server.url}: ${JSON.stringify(warnings)}`);
      assert.equal(warnings[0].level, 40);
      assert.equal(warnings[0].limitStore, redis?.url);
      assert.ok(server.coregate.limits.fallbacks() > 0);
    }
    const status = a().coregate.limits.status();
    assert.equal(status.backend, 'redis');
    assert.equal(status.degraded, true);
    assert.equal(status.outages, 1);
  });

  test('Redis restarted on the same port: limits are shared again, with one info line', async () => {
    await redis?.restart();
    for (const server of servers) await waitFor('shared limits again', async () => (server.coregate.limits.degraded() ? undefined : true), 15_000);
    for (const server of servers) {
      const back = linesWith(server, backMessage);
      assert.equal(back.length, 1, JSON.stringify(back));
      assert.equal(back[0].level, 30);
    }
    await fail(b(), 'ghost-after', 3);
    assert.equal((await tokenAt(a(), 'ghost-after', wrongSecret)).status, 429, "B's failures count on A again");
  });
});

describe('limits when Redis is unreachable at start', () => {
  let server: TestServer | undefined;
  let drop: (() => Promise<void>) | undefined;

  before(async () => {
    if (!sqlite) throw new Error('no SQLite store target');
    const created = await sqlite.create();
    drop = created.drop;
    server = await startTestServer({ db: created.url, flags: { redisUrl: `redis://127.0.0.1:${await freePort()}`, authFailureLimit: '3' }, env });
  });

  after(async () => {
    await server?.close();
    await drop?.();
  });

  test('the instance starts on per-instance limits, degraded, with one warning, and still limits', async () => {
    const started = server as TestServer;
    assert.equal(started.coregate.limits.degraded(), true);
    assert.equal(linesWith(started, unreachableMessage).length, 1);
    await fail(started, 'ghost-start', 3);
    assert.equal((await tokenAt(started, 'ghost-start', wrongSecret)).status, 429);
    assert.equal((await tokenAt(started, treasury.clientId, treasury.secret)).status, 200);
    assert.equal(linesWith(started, unreachableMessage).length, 1, 'still one warning: reconnection attempts do not repeat it');
  });
});
