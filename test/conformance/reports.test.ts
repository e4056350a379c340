/**
 * What the kit writes (docs/conformance.md, "Reports"): a line per rule, a failure with what was
 * expected and the request and answer under it; JUnit XML whose text is escaped and whose counts
 * add up; TAP with a skip directive and a failure's details as a YAML block; in all of them, what a
 * core sent shown with its control characters escaped (printable.ts). And the amounts the
 * money rules pick: an interest and a commission that end in exactly half a minor unit, so that a
 * core that truncates or rounds half to even is caught.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeResult, describeTotals, junitReport, tapReport } from '../../src/conformance/conformance-report.js';
import { amountEndingInHalf, principalEndingInHalf } from '../../src/conformance/money-and-date-rules.js';
import type { ConformanceReport, RuleResult } from '../../src/conformance/run-core-conformance.js';
import { chargesFor } from '../../src/core/loans/charges.js';
import { interestAtMaturityMinor } from '../../src/core/term-deposits/interest.js';

const passed: RuleResult = { id: 'business-date', title: 'the business date is a calendar date', status: 'passed', notes: [], exchanges: [], durationMs: 12 };
const noted: RuleResult = { id: 'fencing.race', title: 'fencing: a fence racing a late command', status: 'passed', notes: ['3 of 6 commands won their race'], exchanges: [], durationMs: 80 };
const skipped: RuleResult = { id: 'end-of-day', title: 'end of day', status: 'skipped', message: 'it moves the core\'s business date: run with --advance', notes: [], exchanges: [], durationMs: 0 };
const failed: RuleResult = {
  id: 'refusals.term-deposit',
  title: 'refusals are values <TD> & "codes"',
  status: 'failed',
  message: '1 of 16 refusals are wrong:\n  - an inactive product: expected Rejected productNotAvailable (TD-422-003), got Rejected productNotAvailable (ML-422-003) \u0007',
  notes: [],
  exchanges: [{ request: 'POST /core/v1/term-deposit-constitutions/r1 {"productCode":"TDOLD"}', answer: '200 application/json {"status":"Rejected","refusal":{"name":"productNotAvailable","code":"ML-422-003"}}' }],
  durationMs: 1500,
};
const report: ConformanceReport = { businessDate: '2026-03-02', valueDate: '2026-03-02', fixtures: 'loaded', results: [passed, noted, skipped, failed], passed: 2, failed: 1, skipped: 1 };

test('a line per rule: ok with its notes, skip with why, FAIL with what was expected and, under it, the request and the answer that broke it; then the count', () => {
  assert.equal(describeResult(passed), 'ok    business-date');
  assert.equal(describeResult(noted), 'ok    fencing.race (3 of 6 commands won their race)');
  assert.equal(describeResult(skipped), 'skip  end-of-day: it moves the core\'s business date: run with --advance');
  assert.deepEqual(describeResult(failed).split('\n'), [
    'FAIL  refusals.term-deposit: 1 of 16 refusals are wrong:',
    // The bell the core sent is shown, not rung (printable.ts).
    '      - an inactive product: expected Rejected productNotAvailable (TD-422-003), got Rejected productNotAvailable (ML-422-003) \\x07',
    '      request: POST /core/v1/term-deposit-constitutions/r1 {"productCode":"TDOLD"}',
    '      answer:  200 application/json {"status":"Rejected","refusal":{"name":"productNotAvailable","code":"ML-422-003"}}',
  ]);
  assert.equal(describeTotals(report), '2 passed, 1 failed, 1 skipped');
  assert.equal(describeTotals({ passed: 20, failed: 0, skipped: 0 }), '20 passed, 0 failed');
});

test('JUnit XML: one testcase per rule, counts that add up, a failure with its details, a skip with its reason, text escaped and control characters shown escaped', () => {
  const xml = junitReport(report);
  assert.match(xml, /^<\?xml version="1\.0" encoding="UTF-8"\?>\n<testsuites name="coregate core conformance" tests="4" failures="1" errors="0" skipped="1" time="1\.592">/);
  assert.equal((xml.match(/<testcase /g) ?? []).length, 4);
  assert.match(xml, /<testcase classname="coregate\.conformance" name="business-date: the business date is a calendar date" time="0\.012"\/>/);
  assert.match(xml, /<system-out>3 of 6 commands won their race<\/system-out>/);
  assert.match(xml, /<skipped message="it moves the core&apos;s business date: run with --advance"\/>/);
  assert.match(xml, /name="refusals\.term-deposit: refusals are values &lt;TD&gt; &amp; &quot;codes&quot;"/);
  assert.match(xml, /<failure message="1 of 16 refusals are wrong:" type="RuleFailure">1 of 16 refusals are wrong:\n {2}- an inactive product: .*\(ML-422-003\) \\x07\nrequest: POST .*\nanswer: {2}200 application\/json \{&quot;status&quot;:&quot;Rejected&quot;/);
  assert.doesNotMatch(xml, /\u0007/, 'no control character XML cannot carry');
});

test('TAP 13: a plan, ok and not ok points, a skip directive, a failure\'s details in a YAML block, the count as a comment', () => {
  const lines = tapReport(report).split('\n');
  assert.deepEqual(lines.slice(0, 6), [
    'TAP version 13',
    '1..4',
    'ok 1 - business-date: the business date is a calendar date',
    'ok 2 - fencing.race: fencing: a fence racing a late command',
    'ok 3 - end-of-day: end of day # SKIP it moves the core\'s business date: run with --advance',
    'not ok 4 - refusals.term-deposit: refusals are values <TD> & "codes"',
  ]);
  assert.deepEqual(lines.slice(6, 9), ['  ---', '  message: |', '    1 of 16 refusals are wrong:']);
  assert.ok(lines.includes('  ...'));
  assert.equal(lines.at(-2), '# 2 passed, 1 failed, 1 skipped');
});

test('what a core sends cannot drive the terminal: escape sequences, a CSI byte, line breaks and bidirectional overrides in an answer, a message or a note are shown escaped, on one line, in every report', () => {
  const hostile: RuleResult = {
    id: 'refusals.loan',
    title: 'refusals are values',
    status: 'failed',
    // The kit's own line breaks stay; what the core put inside a line does not.
    message: '1 of 20 refusals are wrong:\n  - a closed facility: got Rejected facilityNotActive: \u001b[2J\u001b]0;owned\u0007 \u009b31m \u202etxt.exe',
    notes: ['note \u001b[31mred\rback'],
    exchanges: [{ request: 'POST /core/v1/loan-installment-executions/r2 {}', answer: '200 application/json {"message":"line one\nFAIL  events: forged\u2028\u001b[0m"}' }],
    durationMs: 1,
  };
  const lines = describeResult(hostile).split('\n');
  assert.deepEqual(lines, [
    'FAIL  refusals.loan: 1 of 20 refusals are wrong:',
    '      - a closed facility: got Rejected facilityNotActive: \\x1b[2J\\x1b]0;owned\\x07 \\x9b31m \\u202etxt.exe',
    '      request: POST /core/v1/loan-installment-executions/r2 {}',
    '      answer:  200 application/json {"message":"line one\\nFAIL  events: forged\\u2028\\x1b[0m"}',
    '      notes: note \\x1b[31mred\\rback',
  ]);
  assert.ok(!lines.some((line) => line.startsWith('FAIL  events')), 'no line of the core\'s own making');
  const one: ConformanceReport = { ...report, results: [hostile], passed: 0, failed: 1, skipped: 0 };
  for (const [format, text] of [['JUnit', junitReport(one)], ['TAP', tapReport(one)]] as const) {
    assert.doesNotMatch(text, /[\u0000-\u0009\u000B-\u001F\u007F-\u009F\u2028\u2029\u202A-\u202E]/, `${format}: no control character but the line breaks`);
    assert.match(text, /\\x1b\[2J/, `${format}: the escape sequence shown`);
    assert.doesNotMatch(text, /^\s*FAIL {2}events/m, `${format}: the core's line break kept inside its answer`);
  }
});

test('money to the cent: the kit picks a principal whose interest ends in exactly half a minor unit, and a loan amount whose commission and tax do', () => {
  const { principalMinor, exactHalf } = principalEndingInHalf(100_000n, 10_000_000n, 30, 'ACT/360');
  assert.equal(exactHalf, true);
  // Exactly .5 before rounding: half-up takes the upper cent, truncation would not.
  const numerator = principalMinor * 525n * 30n;
  assert.equal((numerator * 2n) % (3_600_000n * 2n), 3_600_000n);
  assert.equal(interestAtMaturityMinor(principalMinor, '5.25', 30, 'ACT/360'), numerator / 3_600_000n + 1n);

  const terms = { fixedFeeMinor: 2_500n, commissionRate: '0.0015', minimumCommissionMinor: 1_000n, taxRate: '0.15' };
  const { amountMinor, exactHalf: chargesHalf } = amountEndingInHalf(terms, 1_000_000n);
  assert.equal(chargesHalf, true);
  assert.equal((amountMinor * 15n) % 10_000n, 5_000n, 'the commission ends in half a minor unit');
  const charges = chargesFor(amountMinor, terms);
  assert.ok(charges.commissionMinor > terms.minimumCommissionMinor, 'above the minimum, so the rate decides');
  assert.equal(((charges.commissionMinor + charges.feeMinor) * 15n) % 100n, 50n, 'and so does the tax');
  // The demo facility's tax of 16 % never ends in half a cent: the commission alone does.
  const demo = amountEndingInHalf({ ...terms, taxRate: '0.16' }, 1_000_000n);
  assert.deepEqual(demo, { amountMinor: 667_000n, exactHalf: true });
});
