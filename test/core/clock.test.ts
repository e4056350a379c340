/** Time as a parameter (src/core/clock.ts) and the tests' fake clock (test/helpers/fake-clock.ts). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { dateOf, epochSecondsOf, sleep } from '../../src/core/clock.js';
import { FakeClock, fakeClockStartMs } from '../helpers/fake-clock.js';

test('a fake clock stands still until it is moved, and reads as a Date and in epoch seconds', () => {
  const clock = new FakeClock(1_000_500);
  assert.equal(clock.now(), 1_000_500);
  assert.equal(clock.now(), 1_000_500);
  clock.advance(250);
  assert.equal(clock.now(), 1_000_750);
  assert.equal(dateOf(clock).getTime(), 1_000_750);
  assert.equal(epochSecondsOf(clock), 1_000);
  assert.equal(new FakeClock().now(), fakeClockStartMs);
});

test('advance fires the timers that fall due, in due order (ties in the order set), each at its due time', () => {
  const clock = new FakeClock(0);
  const fired: string[] = [];
  clock.setTimeout(() => fired.push(`c@${clock.now()}`), 300);
  clock.setTimeout(() => fired.push(`a@${clock.now()}`), 100);
  clock.setTimeout(() => fired.push(`b@${clock.now()}`), 100);
  clock.setTimeout(() => fired.push(`late@${clock.now()}`), 1_000);
  clock.advance(299);
  assert.deepEqual(fired, ['a@100', 'b@100']);
  assert.equal(clock.now(), 299);
  clock.advance(1);
  assert.deepEqual(fired, ['a@100', 'b@100', 'c@300']);
  assert.equal(clock.pendingTimers, 1);
  assert.equal(clock.nextDueMs, 1_000);
});

test('a timer set by a firing timer fires within the same advance when it falls due in it; a cleared one never fires', () => {
  const clock = new FakeClock(0);
  const ticks: number[] = [];
  const tick = () => {
    ticks.push(clock.now());
    clock.setTimeout(tick, 100);
  };
  clock.setTimeout(tick, 100);
  const cleared = clock.setTimeout(() => ticks.push(-1), 150);
  cleared.clear();
  clock.advance(350);
  assert.deepEqual(ticks, [100, 200, 300]);
  assert.equal(clock.pendingTimers, 1, 'the tick at 400 is still set');
});

test('a fake clock refuses to move backwards, and set() moves it to a time, firing what falls due', () => {
  const clock = new FakeClock(1_000);
  assert.throws(() => clock.advance(-1), RangeError);
  assert.throws(() => clock.set(999), RangeError);
  let fired = false;
  clock.setTimeout(() => (fired = true), 500);
  clock.set(1_500);
  assert.equal(fired, true);
  assert.equal(clock.now(), 1_500);
});

test('sleep resolves once the clock has moved past its delay, or at once when its signal aborts', async () => {
  const clock = new FakeClock(0);
  let slept = false;
  const sleeping = sleep(clock, 1_000).then(() => (slept = true));
  clock.advance(999);
  await Promise.resolve();
  assert.equal(slept, false);
  clock.advance(1);
  await sleeping;
  assert.equal(slept, true);

  const hurry = new AbortController();
  const cut = sleep(clock, 60_000, hurry.signal);
  hurry.abort();
  await cut;
  assert.equal(clock.pendingTimers, 0, 'the aborted sleep cleared its timer');
  await sleep(clock, 10, hurry.signal);
});
