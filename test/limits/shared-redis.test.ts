/**
 * Two instances sharing one Redis (--redis-url) count together: failed client authentications
 * on instance A count on instance B, and a client's --rate-limit bucket is one for both. Both
 * instances use one SQLite file and one public URL, as instances behind a load balancer share a
 * database and an issuer, so a token of A is valid on B. Keys live under a random prefix and are
 * deleted afterwards.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { ConfigFlags } from '../../src/config.js';
import { demo, demoToken, startTestServer, type TestServer } from '../helpers/server.js';
import { postFormFrom } from '../helpers/source-address.js';
import { deleteKeysUnder, keysUnder, randomKeyPrefix, redisSkip, redisTestUrl } from '../helpers/redis.js';
import { storeTargets } from '../helpers/stores.js';
import { sleep } from '../helpers/wait.js';

const { treasury, reporting } = demo;
const wrongSecret = 'wrong-secret-0123456789-not-the-real-one';
const sqlite = storeTargets.find((target) => target.name === 'sqlite');

describe(`limits shared through Redis by two instances (${redisTestUrl})`, { skip: redisSkip }, () => {
  const keyPrefix = randomKeyPrefix();
  const servers: TestServer[] = [];
  let drop: (() => Promise<void>) | undefined;
  const a = () => servers[0] as TestServer;
  const b = () => servers[1] as TestServer;

  before(async () => {
    if (!sqlite) throw new Error('no SQLite store target');
    const created = await sqlite.create();
    drop = created.drop;
    const flags: ConfigFlags = { redisUrl: redisTestUrl, redisKeyPrefix: keyPrefix, rateLimit: '3' };
    // A longer command time-out than the 200 ms default: this machine runs other test suites.
    const env = { COREGATE_REDIS_COMMAND_TIMEOUT_MS: '2000' };
    for (let i = 0; i < 2; i += 1) servers.push(await startTestServer({ db: created.url, flags, env, publicUrl: 'http://coregate.test' }));
  });

  after(async () => {
    for (const server of servers) await server.close();
    await drop?.();
    await deleteKeysUnder(redisTestUrl, keyPrefix);
  });

  const tokenAt = (server: TestServer, address: string, secret: string, clientId: string = treasury.clientId) =>
    postFormFrom(address, server.tokenUrl(), { grant_type: 'client_credentials', client_id: clientId, client_secret: secret });

  test('failed authentications on instance A count on instance B: 6 on A and 4 on B block the pair on both', async () => {
    for (let i = 0; i < 6; i += 1) assert.equal((await tokenAt(a(), '127.0.0.31', wrongSecret)).status, 401);
    for (let i = 0; i < 4; i += 1) assert.equal((await tokenAt(b(), '127.0.0.31', wrongSecret)).status, 401);
    for (const server of [a(), b()]) {
      const limited = await tokenAt(server, '127.0.0.31', treasury.secret);
      assert.equal(limited.status, 429, JSON.stringify(limited.body));
      assert.equal(limited.body.error, 'temporarily_unavailable');
      assert.ok(Number(limited.headers.get('retry-after')) >= 1);
    }
    assert.equal((await tokenAt(b(), '127.0.0.32', treasury.secret)).status, 200, 'the same client from another address is unaffected');
  });

  test('--rate-limit is one bucket per client across instances: 429 TOO_MANY_REQUESTS on the business API', async () => {
    const treasuryToken = await demoToken(a());
    const reportingToken = await demoToken(b(), reporting);
    const retrieve = (server: TestServer, token: string) =>
      fetch(`${server.url}/v1/term-deposits/TD-NONE/retrieve`, { headers: { authorization: `Bearer ${token}` } });
    // The bucket holds 3 and gains one every 333 ms: three requests over both instances pass and
    // the fourth is refused when the four take less than 333 ms. A loaded machine can take longer
    // (the bucket refilled meanwhile: inconclusive, not wrong), so the round is tried again after
    // the bucket filled up; a fast round that lets the fourth through is a failure.
    let limited: Response | undefined;
    for (let round = 0; round < 5 && limited === undefined; round += 1) {
      if (round > 0) await sleep(1_100);
      const startedAt = Date.now();
      const statuses = [(await retrieve(a(), treasuryToken)).status, (await retrieve(b(), treasuryToken)).status, (await retrieve(a(), treasuryToken)).status];
      const fourth = await retrieve(b(), treasuryToken);
      const elapsedMs = Date.now() - startedAt;
      if (elapsedMs >= 300) continue;
      assert.deepEqual(statuses, [404, 404, 404], 'three requests within the burst of 3, over two instances');
      assert.equal(fourth.status, 429, `the fourth within ${elapsedMs} ms`);
      limited = fourth;
    }
    assert.ok(limited, 'no round of four requests took less than 300 ms: the machine is too busy to tell');
    assert.ok(Number(limited.headers.get('retry-after')) >= 1);
    const body = (await limited.json()) as { reason: string; errordetail: Array<{ code: string }> };
    assert.equal(body.reason, 'TOO_MANY_REQUESTS');
    assert.equal(body.errordetail[0]?.code, 'TD-429-001');
    assert.equal((await retrieve(b(), reportingToken)).status, 404, 'another client has its own bucket');
  });

  test('every key is under the prefix with a TTL; no instance fell back to memory', async () => {
    const keys = await keysUnder(redisTestUrl, keyPrefix);
    assert.ok(keys.some((entry) => entry.key.startsWith(`${keyPrefix}auth-failures:sandbox:treasury-app:127.0.0.31`)), JSON.stringify(keys));
    assert.ok(keys.some((entry) => entry.key.startsWith(`${keyPrefix}rate:`)), JSON.stringify(keys));
    for (const entry of keys) assert.ok(entry.ttlMs > 0, `${entry.key} has no TTL`);
    for (const server of servers) {
      assert.deepEqual(server.coregate.limits.status(), { backend: 'redis', degraded: false, fallbacks: 0, outages: 0 });
    }
    assert.ok(a().logLines.some((line) => line.includes('limits shared through Redis')));
  });
});
