/** An optional per-client rate limit (--rate-limit): 429 TOO_MANY_REQUESTS with Retry-After. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RateLimiter } from '../../src/api/rate-limit.js';
import { MemoryLimitStore } from '../../src/limits/memory-limit-store.js';
import { demo, demoToken, testDeployment } from '../helpers/server.js';
import { describeEachStore } from '../helpers/suite.js';

/** A RateLimiter over a memory store whose clock the test sets. */
function limiterAt(ratePerSecond: number): { limiter: RateLimiter; clock: { nowMs: number } } {
  const clock = { nowMs: 0 };
  return { limiter: new RateLimiter(ratePerSecond, new MemoryLimitStore({ clock: () => clock.nowMs })), clock };
}

test('RateLimiter: a burst of N, then refills at N per second', async () => {
  const { limiter, clock } = limiterAt(2);
  assert.equal((await limiter.take('a')).allowed, true);
  assert.equal((await limiter.take('a')).allowed, true);
  const refused = await limiter.take('a');
  assert.deepEqual(refused, { allowed: false, retryAfterSeconds: 1 });
  assert.equal((await limiter.take('b')).allowed, true, 'another client has its own bucket');
  clock.nowMs = 500;
  assert.equal((await limiter.take('a')).allowed, true, 'half a second refills one request at 2/s');
  assert.equal((await limiter.take('a')).allowed, false);
});

test('RateLimiter: 0 disables the limit', async () => {
  const { limiter } = limiterAt(0);
  for (let i = 0; i < 1000; i += 1) assert.equal((await limiter.take('a')).allowed, true);
});

describeEachStore(
  'rate limit on the business API',
  ({ server }) => {
    test('429 TOO_MANY_REQUESTS with Retry-After and TD-429-001 once the client exceeds --rate-limit; other clients are not affected', { skip: testDeployment === 'two-instances' ? 'without Redis the limit is per instance (test/limits/shared-redis.test.ts covers two instances)' : undefined }, async () => {
      const treasury = await demoToken(server());
      const reporting = await demoToken(server(), demo.reporting);
      const retrieve = (token: string) =>
        fetch(`${server().url}/v1/term-deposits/TD-NONE/retrieve`, { headers: { authorization: `Bearer ${token}` } });
      // A burst of one at one request a second: the second request, right after, finds the bucket
      // empty however slow the machine (a burst of three at three a second refilled on a busy one).
      assert.equal((await retrieve(treasury)).status, 404, 'the first request is within the burst');
      const limited = await retrieve(treasury);
      assert.equal(limited.status, 429);
      assert.ok(Number(limited.headers.get('retry-after')) >= 1);
      const body = (await limited.json()) as { reason: string; errordetail: Array<{ code: string }> };
      assert.equal(body.reason, 'TOO_MANY_REQUESTS');
      assert.equal(body.errordetail[0]?.code, 'TD-429-001');
      assert.equal((await retrieve(reporting)).status, 404, 'another client has its own allowance');
    });
  },
  { flags: { rateLimit: '1' } },
);
