/**
 * How the kit says what it found (docs/conformance.md, "Reports"): a line per rule for a person,
 * with a failure's expected-and-answered and its last request and answer under it; a closing
 * count; and JUnit XML or TAP for a CI system. What the core sent is printed with its control
 * characters escaped (printable.ts): an answer is one line, a message its own lines only, each
 * indented under its rule, so that nothing a core sends can write a line of its own.
 */
import { printableLine, printableLines } from './printable.js';
import type { ConformanceReport, RuleResult } from './run-core-conformance.js';

export type ReportFormat = 'junit' | 'tap';
export const reportFormats: readonly ReportFormat[] = ['junit', 'tap'];

const indent = (text: string, prefix: string) => text.split('\n').map((line) => `${prefix}${line}`).join('\n');

/** A rule's result as a person reads it: one line, and a failure's details indented under it. */
export function describeResult(result: RuleResult): string {
  const notes = result.notes.length > 0 ? ` (${printableLine(result.notes.join('; '))})` : '';
  if (result.status === 'passed') return `ok    ${result.id}${notes}`;
  if (result.status === 'skipped') return `skip  ${result.id}: ${printableLine(result.message ?? '')}`;
  const [first = '', ...rest] = printableLines(result.message ?? '').split('\n');
  const lines = [`FAIL  ${result.id}: ${first}`, ...rest.map((line) => `      ${line.trimStart()}`)];
  for (const exchange of result.exchanges) {
    lines.push(`      request: ${printableLine(exchange.request)}`, `      answer:  ${printableLine(exchange.answer)}`);
  }
  if (result.notes.length > 0) lines.push(`      notes: ${printableLine(result.notes.join('; '))}`);
  return lines.join('\n');
}

export function describeTotals(report: Pick<ConformanceReport, 'passed' | 'failed' | 'skipped'>): string {
  return `${report.passed} passed, ${report.failed} failed${report.skipped > 0 ? `, ${report.skipped} skipped` : ''}`;
}

/** The details a CI report carries for a failure: the message, then each exchange on one line. */
function failureText(result: RuleResult): string {
  return [
    printableLines(result.message ?? ''),
    ...result.exchanges.flatMap((exchange) => [`request: ${printableLine(exchange.request)}`, `answer:  ${printableLine(exchange.answer)}`]),
    ...(result.notes.length > 0 ? [`notes: ${printableLine(result.notes.join('; '))}`] : []),
  ].join('\n');
}

/** XML 1.0 text: the five escapes, and no control character XML cannot carry. */
function xml(text: string): string {
  return text
    .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, '?')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

const seconds = (ms: number) => (ms / 1000).toFixed(3);

/** JUnit XML (the schema Jenkins, GitLab and GitHub Actions' reporters read): one testcase per rule. */
export function junitReport(report: ConformanceReport, suiteName = 'coregate core conformance'): string {
  const total = report.results.reduce((sum, result) => sum + result.durationMs, 0);
  const counts = `tests="${report.results.length}" failures="${report.failed}" errors="0" skipped="${report.skipped}" time="${seconds(total)}"`;
  const cases = report.results.map((result) => {
    const open = `    <testcase classname="coregate.conformance" name="${xml(`${result.id}: ${result.title}`)}" time="${seconds(result.durationMs)}"`;
    if (result.status === 'passed') return result.notes.length > 0 ? `${open}>\n      <system-out>${xml(result.notes.map(printableLine).join('\n'))}</system-out>\n    </testcase>` : `${open}/>`;
    if (result.status === 'skipped') return `${open}>\n      <skipped message="${xml(printableLine(result.message ?? ''))}"/>\n    </testcase>`;
    const [summary = ''] = printableLines(result.message ?? '').split('\n');
    return `${open}>\n      <failure message="${xml(summary)}" type="RuleFailure">${xml(failureText(result))}</failure>\n    </testcase>`;
  });
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="${xml(suiteName)}" ${counts}>`,
    `  <testsuite name="${xml(suiteName)}" ${counts}>`,
    `    <properties>\n      <property name="businessDate" value="${xml(report.businessDate)}"/>\n      <property name="fixtures" value="${report.fixtures}"/>\n    </properties>`,
    ...cases,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}

/** TAP version 13: a test point per rule, a failure's details as a YAML block, a skip as a directive. */
export function tapReport(report: ConformanceReport): string {
  const oneLine = (text: string) => printableLine(text.replace(/[\r\n#]+/g, ' ').trim());
  const lines = ['TAP version 13', `1..${report.results.length}`];
  report.results.forEach((result, index) => {
    const point = `${index + 1} - ${result.id}: ${oneLine(result.title)}`;
    if (result.status === 'passed') lines.push(`ok ${point}`);
    else if (result.status === 'skipped') lines.push(`ok ${point} # SKIP ${oneLine(result.message ?? '')}`);
    else lines.push(`not ok ${point}`, '  ---', '  message: |', indent(failureText(result), '    '), '  ...');
  });
  lines.push(`# ${describeTotals(report)}`, '');
  return lines.join('\n');
}
