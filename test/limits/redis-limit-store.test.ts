/**
 * The Redis limit store: the LimitStore suite on a real Redis under a random key prefix, every
 * key with a TTL, and a Redis that is not there failing fast instead of stalling.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { RedisLimitStore } from '../../src/limits/redis-limit-store.js';
import { systemClock } from '../../src/clock/system-clock.js';
import { deleteKeysUnder, freePort, keysUnder, randomKeyPrefix, redisSkip, redisTestUrl } from '../helpers/redis.js';
import { sleep } from '../helpers/wait.js';
import { limitStoreSuite } from './limit-store-suite.js';

const keyPrefix = randomKeyPrefix();

async function openRedisStore(prefix: string = keyPrefix): Promise<RedisLimitStore> {
  const store = new RedisLimitStore({ url: redisTestUrl, keyPrefix: prefix, commandTimeoutMs: 1_000 });
  const first = await store.firstConnection(3_000, systemClock);
  if (!first.up) throw new Error(`Redis store did not connect: ${first.reason}`);
  return store;
}

limitStoreSuite(
  `redis (${redisTestUrl}, real time)`,
  async () => {
    const store = await openRedisStore();
    return { store, advance: sleep, close: () => store.close() };
  },
  // Real time: two hits half a window apart stay within it on a loaded machine (two whole runs at once).
  { skip: redisSkip, windowMs: 3_000 },
);

describe('Redis limit store', { skip: redisSkip }, () => {
  after(async () => {
    await deleteKeysUnder(redisTestUrl, keyPrefix);
  });

  test('every key it writes is under the key prefix and has a TTL', async () => {
    const prefix = randomKeyPrefix();
    const store = await openRedisStore(prefix);
    try {
      await store.hit('auth-failures:sandbox:treasury-app:127.0.0.1', 60_000);
      await store.take('rate:client', { ratePerSecond: 5, burst: 5 });
      await store.peek('auth-failures:never-hit');
      const keys = await keysUnder(redisTestUrl, prefix);
      assert.deepEqual(keys.map((entry) => entry.key).sort(), [`${prefix}auth-failures:sandbox:treasury-app:127.0.0.1`, `${prefix}rate:client`]);
      for (const entry of keys) assert.ok(entry.ttlMs > 0, `${entry.key} has no TTL (${entry.ttlMs})`);
      const bucket = keys.find((entry) => entry.key.endsWith('rate:client'));
      assert.ok((bucket?.ttlMs ?? 0) <= 2_000, 'a bucket lives until it would be full again (burst / rate), plus a second');
    } finally {
      await store.close();
      await deleteKeysUnder(redisTestUrl, prefix);
    }
  });

  test('a Redis that is not there fails each command at once (no offline queue), it does not stall', async () => {
    const store = new RedisLimitStore({ url: `redis://127.0.0.1:${await freePort()}`, keyPrefix, commandTimeoutMs: 200 });
    try {
      const first = await store.firstConnection(3_000, systemClock);
      assert.equal(first.up, false);
      const startedMs = Date.now();
      await assert.rejects(store.hit('k', 1_000));
      await assert.rejects(store.take('k2', { ratePerSecond: 1, burst: 1 }));
      assert.ok(Date.now() - startedMs < 200, `took ${Date.now() - startedMs} ms`);
    } finally {
      await store.close();
    }
  });
});
