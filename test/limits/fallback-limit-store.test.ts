/**
 * The fallback store: when the shared store fails, answers come from memory, one warning per
 * outage, one info line when it is back, and the state is readable (degraded, fallbacks).
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { FallbackLimitStore, primaryProbeIntervalMs } from '../../src/limits/fallback-limit-store.js';
import type { LimitStore } from '../../src/limits/limit-store.js';
import { MemoryLimitStore } from '../../src/limits/memory-limit-store.js';
import { createLogger } from '../../src/log.js';

/** A shared store that can be switched off; counts the calls it received. */
class SwitchableStore implements LimitStore {
  up = true;
  calls = 0;
  readonly #inner: MemoryLimitStore;
  constructor(clock: () => number) {
    this.#inner = new MemoryLimitStore({ clock });
  }
  #check(): void {
    this.calls += 1;
    if (!this.up) throw new Error('Connection is closed.');
  }
  async hit(key: string, windowMs: number) {
    this.#check();
    return this.#inner.hit(key, windowMs);
  }
  async peek(key: string) {
    this.#check();
    return this.#inner.peek(key);
  }
  async take(key: string, bucket: { ratePerSecond: number; burst: number }) {
    this.#check();
    return this.#inner.take(key, bucket);
  }
  async close() {}
}

function fixture() {
  let nowMs = 0;
  const clock = () => nowMs;
  const lines: Array<{ level: number; msg: string; limitStore?: string }> = [];
  const destination = new Writable({
    write(chunk, _encoding, callback) {
      for (const line of String(chunk).split('\n').filter((text) => text !== '')) lines.push(JSON.parse(line));
      callback();
    },
  });
  const primary = new SwitchableStore(clock);
  const store = new FallbackLimitStore(primary, new MemoryLimitStore({ clock }), {
    logger: createLogger({ destination, level: 'debug' }),
    primaryName: 'redis://cache:6379',
    clock,
  });
  return { store, primary, lines, advance: (ms: number) => void (nowMs += ms) };
}

test('fallback: while the shared store is up, it answers and nothing is logged', async () => {
  const { store, primary, lines } = fixture();
  assert.equal((await store.hit('k', 60_000)).count, 1);
  assert.equal(primary.calls, 1);
  assert.equal(store.degraded(), false);
  assert.equal(store.fallbacks(), 0);
  assert.deepEqual(lines, []);
});

test('fallback: a failing shared store is answered from memory, degraded, with one warning per outage and fallbacks counted', async () => {
  const { store, primary, lines } = fixture();
  primary.up = false;
  assert.equal((await store.hit('k', 60_000)).count, 1);
  assert.equal((await store.hit('k', 60_000)).count, 2, 'memory keeps counting during the outage');
  assert.equal((await store.take('b', { ratePerSecond: 1, burst: 1 })).allowed, true);
  assert.equal(store.degraded(), true);
  assert.equal(store.fallbacks(), 3);
  assert.equal(store.outages(), 1);
  const warnings = lines.filter((line) => line.level === 40);
  assert.equal(warnings.length, 1, JSON.stringify(lines));
  assert.match(warnings[0]?.msg ?? '', /unreachable: limits are kept per instance/);
  assert.equal(warnings[0]?.limitStore, 'redis://cache:6379');
});

test(`fallback: while degraded, the shared store is tried at most once per ${primaryProbeIntervalMs} ms; its answer ends the outage with an info line`, async () => {
  const { store, primary, lines, advance } = fixture();
  primary.up = false;
  await store.peek('k');
  const callsAfterOutage = primary.calls;
  for (let i = 0; i < 20; i += 1) await store.peek('k');
  assert.equal(primary.calls, callsAfterOutage, 'no call to the shared store before the probe interval');
  advance(primaryProbeIntervalMs);
  await store.peek('k');
  assert.equal(primary.calls, callsAfterOutage + 1, 'one probe once the interval passed');
  assert.equal(store.degraded(), true);
  primary.up = true;
  advance(primaryProbeIntervalMs);
  await store.peek('k');
  assert.equal(store.degraded(), false);
  const infos = lines.filter((line) => line.level === 30);
  assert.equal(infos.length, 1);
  assert.match(infos[0]?.msg ?? '', /reachable again: limits are shared/);
  assert.equal(lines.filter((line) => line.level === 40).length, 1, 'still one warning for the one outage');
});

test('fallback: connection events (down, down, up, down) give one warning per outage and one info per recovery', async () => {
  const { store, lines } = fixture();
  store.primaryDown('connect ECONNREFUSED');
  store.primaryDown('connect ECONNREFUSED');
  store.primaryUp();
  store.primaryUp();
  store.primaryDown('Connection is closed.');
  assert.equal(store.outages(), 2);
  assert.deepEqual(
    lines.map((line) => line.level),
    [40, 30, 40],
  );
});

test('fallback: closing logs nothing more', async () => {
  const { store, lines } = fixture();
  await store.close();
  store.primaryDown('Connection is closed.');
  assert.deepEqual(lines, []);
});
