/** The operation states: one table of allowed transitions, final states, what clients see. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { allowedTransitions, assertTransition, canTransition, isFinal, visibleStatus } from '../../src/operations/operation-states.js';
import { nextAttemptAt, reconcileAttemptsMax, neverEpochMs, retryBaseMs, retryIntervalMaxMs } from '../../src/operations/retry-schedule.js';

test('Executed and Rejected are final: nothing leaves them', () => {
  assert.equal(isFinal('Executed'), true);
  assert.equal(isFinal('Rejected'), true);
  for (const to of ['Pending', 'InFlight', 'Unknown', 'Executed', 'Rejected'] as const) {
    assert.equal(canTransition('Executed', to), false);
    assert.throws(() => assertTransition('Rejected', to));
  }
});

test('an operation is executed only from InFlight (claimed) or settled from Unknown by lookup; never from Pending directly', () => {
  assert.equal(canTransition('Pending', 'Executed'), false);
  assert.equal(canTransition('InFlight', 'Executed'), true);
  assert.equal(canTransition('Unknown', 'Executed'), true);
  assert.equal(canTransition('new', 'Executed'), false, 'a new operation is claimed before it executes');
});

test('every state but the final ones can reach a final state', () => {
  for (const [from, targets] of Object.entries(allowedTransitions)) {
    if (targets.length === 0) continue;
    assert.ok(targets.some((to) => to === 'Executed' || to === 'Rejected' || allowedTransitions[to].includes('Executed')), from);
  }
});

test('clients see Pending for every state that is not final (docs/api.md, "200, 202, 204")', () => {
  assert.equal(visibleStatus('InFlight'), 'Pending');
  assert.equal(visibleStatus('Unknown'), 'Pending');
  assert.equal(visibleStatus('Pending'), 'Pending');
  assert.equal(visibleStatus('Executed'), 'Executed');
});

test('reconciliation backs off exponentially with jitter, capped, and stops after the bounded attempts', () => {
  const now = 1_000_000;
  assert.equal(nextAttemptAt(0, now, retryIntervalMaxMs, () => 0), now + retryBaseMs / 2);
  assert.equal(nextAttemptAt(0, now, retryIntervalMaxMs, () => 1), now + retryBaseMs);
  assert.equal(nextAttemptAt(3, now, retryIntervalMaxMs, () => 1), now + 8 * retryBaseMs);
  assert.equal(nextAttemptAt(20, now, retryIntervalMaxMs, () => 1), now + retryIntervalMaxMs);
  assert.equal(nextAttemptAt(reconcileAttemptsMax, now), neverEpochMs);
});
