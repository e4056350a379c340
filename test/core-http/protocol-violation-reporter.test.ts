/**
 * The protocol-violation reporter (docs/core-protocol.md, "What the API's adapter makes of it";
 * docs/metrics.md): every violation counted; one about an operation logged each time; one of a
 * call on its own schedule (the event polls, readiness) logged at most once a minute per kind and
 * call, with how many were not, so that a core answering every poll wrongly does not flood the log.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { protocolViolationReporter, repeatedLogIntervalMs } from '../../src/core-http/protocol-violation-reporter.js';
import type { ProtocolViolationReport } from '../../src/core-http/http-core-adapter.js';
import type { Logger } from '../../src/log.js';
import { FakeClock } from '../helpers/fake-clock.js';

/** A logger and metrics that keep what they are told. */
function recorder() {
  const lines: Array<{ fields: Record<string, unknown>; message: string }> = [];
  const counted: string[] = [];
  const logger = { error: (fields: Record<string, unknown>, message: string) => void lines.push({ fields, message }) } as unknown as Logger;
  return { lines, counted, logger, metrics: { coreProtocolViolation: (kind: string) => void counted.push(kind) } };
}

const poll: ProtocolViolationReport = { kind: 'malformed_answer', call: 'GET /core/v1/events', reference: undefined, field: '/events/0/sequence', value: '0', message: 'bad sequence', settled: false };

test('a violation of a call on its own schedule is logged once a minute per kind and call, with how many were not; every one is counted', () => {
  const clock = new FakeClock(1_000_000);
  const { lines, counted, logger, metrics } = recorder();
  const report = protocolViolationReporter(logger, metrics, clock);
  for (let index = 0; index < 12; index += 1) {
    report(poll);
    clock.advance(5_000);
  }
  assert.equal(counted.length, 12, 'every violation counted');
  assert.equal(lines.length, 1, 'logged once within the minute');
  assert.match(lines[0]?.message ?? '', /the call failed/);
  clock.advance(repeatedLogIntervalMs);
  report(poll);
  assert.equal(lines.length, 2);
  assert.equal(lines[1]?.fields.notLoggedSince, 11);
  report({ ...poll, call: 'GET /health/ready' });
  assert.equal(lines.length, 3, 'another call is logged on its own');
});

test('a violation about an operation is logged each time, naming its reference', () => {
  const clock = new FakeClock(1_000_000);
  const { lines, logger, metrics } = recorder();
  const report = protocolViolationReporter(logger, metrics, clock);
  for (const reference of ['a', 'b', 'c']) report({ ...poll, call: 'POST /core/v1/term-deposit-constitutions/:reference', reference, settled: true, kind: 'unknown_refusal' });
  assert.deepEqual(lines.map((line) => line.fields.reference), ['a', 'b', 'c']);
  assert.match(lines[0]?.message ?? '', /settled Rejected \(REJECTED_BY_CORE\)/);
});
