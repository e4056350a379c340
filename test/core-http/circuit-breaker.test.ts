/** The circuit breaker of the remote core adapter, on a fake clock. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CircuitBreaker, CircuitOpen, type CircuitState } from '../../src/core-http/circuit-breaker.js';

function breakerOnFakeClock(failuresMax = 3, coolDownMs = 1_000) {
  const clock = { nowMs: 0 };
  const changes: CircuitState[] = [];
  const breaker = new CircuitBreaker({ failuresMax, coolDownMs, now: () => clock.nowMs, onStateChange: (state) => changes.push(state) });
  let calls = 0;
  const succeed = () => breaker.run(async () => (calls += 1));
  const fail = () =>
    breaker.run(async () => {
      calls += 1;
      throw new Error('core down');
    });
  return { breaker, clock, changes, calls: () => calls, succeed, fail };
}

test('closed: failures below the limit let every call through; a success resets the count', async () => {
  const { breaker, fail, succeed, calls } = breakerOnFakeClock(3);
  await assert.rejects(fail(), /core down/);
  await assert.rejects(fail(), /core down/);
  assert.equal(breaker.failures, 2);
  await succeed();
  assert.equal(breaker.failures, 0);
  await assert.rejects(fail(), /core down/);
  await assert.rejects(fail(), /core down/);
  assert.equal(breaker.state, 'closed');
  assert.equal(calls(), 5);
});

test('the limit of consecutive failures opens the breaker: calls then fail at once with CircuitOpen, without running', async () => {
  const { breaker, fail, succeed, calls, changes } = breakerOnFakeClock(3);
  for (let attempt = 0; attempt < 3; attempt += 1) await assert.rejects(fail(), /core down/);
  assert.equal(breaker.state, 'open');
  assert.deepEqual(changes, ['open']);
  await assert.rejects(succeed(), CircuitOpen);
  await assert.rejects(fail(), CircuitOpen);
  assert.equal(calls(), 3, 'no call ran while open');
});

test('after the cool-down one trial call goes through (half-open) while others still fail at once; its success closes the breaker', async () => {
  const { breaker, fail, clock, changes } = breakerOnFakeClock(2, 1_000);
  await assert.rejects(fail(), /core down/);
  await assert.rejects(fail(), /core down/);
  clock.nowMs = 999;
  await assert.rejects(breaker.run(async () => 'too early'), CircuitOpen);
  clock.nowMs = 1_000;
  let release: (value: string) => void = () => {};
  const trial = breaker.run(() => new Promise<string>((resolve) => (release = resolve)));
  assert.equal(breaker.state, 'half-open');
  await assert.rejects(breaker.run(async () => 'concurrent'), CircuitOpen, 'only one trial at a time');
  release('core back');
  assert.equal(await trial, 'core back');
  assert.equal(breaker.state, 'closed');
  assert.deepEqual(changes, ['open', 'half-open', 'closed']);
  assert.equal(await breaker.run(async () => 'normal'), 'normal');
});

test('a failed trial opens the breaker for another cool-down', async () => {
  const { breaker, fail, clock, succeed, changes } = breakerOnFakeClock(1, 500);
  await assert.rejects(fail(), /core down/);
  clock.nowMs = 500;
  await assert.rejects(fail(), /core down/);
  assert.equal(breaker.state, 'open');
  clock.nowMs = 999;
  await assert.rejects(succeed(), CircuitOpen, 'the cool-down restarted at the failed trial');
  clock.nowMs = 1_000;
  await succeed();
  assert.equal(breaker.state, 'closed');
  assert.deepEqual(changes, ['open', 'half-open', 'open', 'half-open', 'closed']);
});

test('an error the caller does not count as a failure (an answer that broke the protocol) neither counts nor resets the count; a half-open trial answered so closes the breaker (the core answered)', async () => {
  const { breaker, fail, clock, changes, calls } = breakerOnFakeClock(2, 1_000);
  const answeredBadly = () =>
    breaker.run(
      async () => {
        calls();
        throw new Error('malformed answer');
      },
      (error) => !/malformed/.test((error as Error).message),
    );
  await assert.rejects(fail(), /core down/);
  for (let answer = 0; answer < 10; answer += 1) await assert.rejects(answeredBadly(), /malformed/);
  assert.equal(breaker.state, 'closed', 'ten malformed answers in a row do not open the breaker');
  assert.equal(breaker.failures, 1, 'nor reset the count of transport failures');
  await assert.rejects(fail(), /core down/);
  assert.equal(breaker.state, 'open', 'the second transport failure in a row opens it');
  clock.nowMs = 1_000;
  await assert.rejects(answeredBadly(), /malformed/);
  assert.equal(breaker.state, 'closed', 'the trial reached the core: closed, not left half-open refusing every other call');
  assert.equal(await breaker.run(async () => 'well-formed'), 'well-formed');
  assert.deepEqual(changes, ['open', 'half-open', 'closed']);
});

test('invalid settings are refused', () => {
  assert.throws(() => new CircuitBreaker({ failuresMax: 0, coolDownMs: 1, now: () => 0 }));
  assert.throws(() => new CircuitBreaker({ failuresMax: 1, coolDownMs: -1, now: () => 0 }));
});
