/** The in-memory limit store: the LimitStore suite on a fake clock, and its bound on memory. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { limitKey, limitKeyPartCharsMax } from '../../src/limits/limit-key.js';
import { LruMap } from '../../src/cache/lru-map.js';
import { MemoryLimitStore, memoryLimitKeysMax } from '../../src/limits/memory-limit-store.js';
import { PerKeyQueue } from '../../src/limits/per-key-queue.js';
import { limitStoreSuite } from './limit-store-suite.js';

function fakeClock(): { now: () => number; advance: (ms: number) => Promise<void> } {
  let nowMs = 1_700_000_000_000;
  return { now: () => nowMs, advance: async (ms) => void (nowMs += ms) };
}

limitStoreSuite('memory (fake clock)', async () => {
  const clock = fakeClock();
  const store = new MemoryLimitStore({ clock: clock.now });
  return { store, advance: clock.advance, close: () => store.close() };
});

test('memory store is bounded: never more than keysMax keys, the least recently used forgotten first', async () => {
  const store = new MemoryLimitStore({ keysMax: 3, clock: fakeClock().now });
  await store.hit('a', 60_000);
  await store.hit('b', 60_000);
  await store.hit('c', 60_000);
  await store.peek('a'); // a is now the most recently used; b the least
  await store.hit('d', 60_000);
  assert.equal(store.size, 3);
  assert.equal((await store.peek('b')).count, 0, 'b was forgotten');
  assert.equal((await store.peek('a')).count, 1, 'a, used recently, was kept');
  for (let i = 0; i < 100; i += 1) await store.take(`bucket-${i}`, { ratePerSecond: 1, burst: 1 });
  assert.equal(store.size, 3, 'buckets count against the same bound');
});

test(`memory store default bound: ${memoryLimitKeysMax} keys`, async () => {
  const store = new MemoryLimitStore({ clock: fakeClock().now });
  for (let i = 0; i < memoryLimitKeysMax + 50; i += 1) await store.hit(`key-${i}`, 60_000);
  assert.equal(store.size, memoryLimitKeysMax);
});

test('memory store drops an expired window when it sees it again', async () => {
  const clock = fakeClock();
  const store = new MemoryLimitStore({ clock: clock.now });
  await store.hit('k', 1_000);
  assert.equal(store.size, 1);
  await clock.advance(1_000);
  assert.deepEqual(await store.peek('k'), { count: 0, resetInMs: 0 });
  assert.equal(store.size, 0);
});

test('LruMap refuses a bound below 1', () => {
  assert.throws(() => new LruMap(0), /entriesMax >= 1/);
});

test('limitKey: each part is percent-encoded, so no part runs into the next', () => {
  assert.equal(limitKey('auth-failures', 'sandbox', 'a:b', '127.0.0.1'), 'auth-failures:sandbox:a%3Ab:127.0.0.1');
  assert.notEqual(limitKey('k', 'a:b', 'c'), limitKey('k', 'a', 'b:c'));
});

test(`limitKey: a part longer than ${limitKeyPartCharsMax} characters is replaced by its SHA-256, so keys stay short`, () => {
  const key = limitKey('auth-failures', 'sandbox', 'x'.repeat(16_000), '127.0.0.1');
  assert.ok(key.length < 100, key);
  assert.match(key, /^auth-failures:sandbox:sha256~[A-Za-z0-9_-]{43}:127\.0\.0\.1$/);
  assert.notEqual(key, limitKey('auth-failures', 'sandbox', 'y'.repeat(16_000), '127.0.0.1'));
});

test('PerKeyQueue: work of one key runs one at a time and in order; other keys do not wait; idle keys are forgotten', async () => {
  const queue = new PerKeyQueue();
  const events: string[] = [];
  let release: () => void = () => {};
  const first = queue.run('a', async () => {
    events.push('a1 start');
    await new Promise<void>((resolve) => (release = resolve));
    events.push('a1 end');
  });
  const second = queue.run('a', async () => void events.push('a2'));
  const other = queue.run('b', async () => void events.push('b1'));
  await other;
  assert.deepEqual(events, ['a1 start', 'b1']);
  release();
  await Promise.all([first, second]);
  assert.deepEqual(events, ['a1 start', 'b1', 'a1 end', 'a2']);
  const failing = queue.run('a', async () => {
    throw new Error('refused');
  });
  await assert.rejects(failing, /refused/);
  assert.equal(await queue.run('a', async () => 'after a failure'), 'after a failure');
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(queue.size, 0);
});
