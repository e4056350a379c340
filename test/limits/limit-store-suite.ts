/**
 * The suite every LimitStore passes (src/limits/limit-store.ts): the memory store with a fake
 * clock, the Redis store on real time. `advance` moves the store's clock forward (or sleeps).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { LimitStore } from '../../src/limits/limit-store.js';

export interface LimitStoreFixture {
  store: LimitStore;
  advance(ms: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * `windowMs`: the window the expiry test opens. On real time it must leave room for a loaded
 * machine between two hits half a window apart (the Redis store: seconds, not a few hundred ms).
 */
export function limitStoreSuite(title: string, open: () => Promise<LimitStoreFixture>, options: { skip?: string | undefined; windowMs?: number } = {}): void {
  const windowMs = options.windowMs ?? 300;
  describe(`LimitStore suite: ${title}`, { skip: options.skip }, () => {
    let fixture: LimitStoreFixture | undefined;
    const store = () => {
      if (!fixture) throw new Error('store not open');
      return fixture.store;
    };
    const advance = (ms: number) => fixture?.advance(ms) ?? Promise.resolve();
    // Fresh keys per test: the Redis store keeps its keys between tests.
    const key = (name: string) => `suite:${name}:${randomBytes(4).toString('hex')}`;
    before(async () => {
      fixture = await open();
    });
    after(async () => {
      await fixture?.close();
    });

    test('hit: counts the hits of a key within its window and tells the time left', async () => {
      const k = key('hit');
      const first = await store().hit(k, 10_000);
      assert.equal(first.count, 1);
      assert.ok(first.resetInMs > 9_000 && first.resetInMs <= 10_000, `resetInMs ${first.resetInMs}`);
      assert.equal((await store().hit(k, 10_000)).count, 2);
      assert.equal((await store().hit(k, 10_000)).count, 3);
    });

    test('peek: reads the count without counting; an unknown key has count 0 and no window', async () => {
      const k = key('peek');
      assert.deepEqual(await store().peek(k), { count: 0, resetInMs: 0 });
      await store().hit(k, 10_000);
      const peeked = await store().peek(k);
      assert.equal(peeked.count, 1);
      assert.ok(peeked.resetInMs > 0 && peeked.resetInMs <= 10_000);
      assert.equal((await store().peek(k)).count, 1, 'peeking twice counts nothing');
    });

    test('window: it opens at the first hit, later hits do not extend it, and once it closes the count starts again at 0', async () => {
      const k = key('expiry');
      await store().hit(k, windowMs);
      await advance(windowMs / 2);
      const second = await store().hit(k, windowMs);
      assert.equal(second.count, 2);
      assert.ok(second.resetInMs <= windowMs / 2, `the second hit must not extend the window (resetInMs ${second.resetInMs})`);
      await advance((windowMs * 5) / 6);
      assert.deepEqual(await store().peek(k), { count: 0, resetInMs: 0 });
      assert.equal((await store().hit(k, windowMs)).count, 1);
    });

    test('keys are independent', async () => {
      const a = key('a');
      const b = key('b');
      await store().hit(a, 10_000);
      await store().hit(a, 10_000);
      assert.equal((await store().hit(b, 10_000)).count, 1);
      assert.equal((await store().peek(a)).count, 2);
    });

    test('take: a new bucket allows a burst, then refuses with the time until the next token', async () => {
      const k = key('bucket');
      const bucket = { ratePerSecond: 1, burst: 3 };
      for (let i = 0; i < 3; i += 1) assert.deepEqual(await store().take(k, bucket), { allowed: true }, `request ${i + 1} of the burst`);
      const refused = await store().take(k, bucket);
      assert.equal(refused.allowed, false);
      if (!refused.allowed) assert.ok(refused.retryAfterMs > 0 && refused.retryAfterMs <= 1_000, `retryAfterMs ${refused.retryAfterMs}`);
      assert.deepEqual(await store().take(key('other-bucket'), bucket), { allowed: true }, 'another key has its own bucket');
    });

    test('take: the bucket refills at ratePerSecond', async () => {
      const k = key('refill');
      const bucket = { ratePerSecond: 4, burst: 1 };
      assert.equal((await store().take(k, bucket)).allowed, true);
      assert.equal((await store().take(k, bucket)).allowed, false);
      await advance(300);
      assert.equal((await store().take(k, bucket)).allowed, true, 'a quarter of a second refills one token at 4/s');
    });
  });
}
