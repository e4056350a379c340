#!/usr/bin/env node
// Runs every test file under test/ with node's test runner through tsx. Node 20's --test takes
// no glob patterns, so the files are listed here. Extra arguments (file filters) narrow the run.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';

function testFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(path);
    return entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

const filters = process.argv.slice(2);
const files = testFiles('test')
  .filter((file) => filters.length === 0 || filters.some((filter) => file.includes(filter)))
  .sort();
if (files.length === 0) {
  console.error(`no test files match ${filters.join(' ')}`);
  process.exit(1);
}
// Tests that spawn the CLI run the compiled dist/ (starting tsx per process is seconds on a busy
// machine), so the build comes first and the tests always run against the current sources.
const build = spawnSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
if (build.status !== 0) {
  console.error('build failed: tests not run');
  process.exit(build.status ?? 1);
}
// Test files run in parallel: most of their time is spent waiting on HTTP, SQLite and PostgreSQL,
// not on the CPU. COREGATE_TEST_CONCURRENCY overrides the default (4) for a slower machine.
const concurrency = process.env.COREGATE_TEST_CONCURRENCY ?? '4';
// Each run reports twice: TAP (spec on a terminal) to the console, and its failures and totals to a
// file that the summary at the very end reads back (scripts/failures-reporter.mjs).
const reportDir = mkdtempSync(join(tmpdir(), 'coregate-test-'));
const failuresReporter = pathToFileURL(join(import.meta.dirname, 'failures-reporter.mjs')).href;
const runs = [];
const run = (label, testFiles, env = {}) => {
  const report = join(reportDir, `${runs.length}.jsonl`);
  const reporters = [
    `--test-reporter=${process.stdout.isTTY ? 'spec' : 'tap'}`, '--test-reporter-destination=stdout',
    `--test-reporter=${failuresReporter}`, `--test-reporter-destination=${report}`,
  ];
  const status = spawnSync(process.execPath, ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, ...reporters, ...testFiles], { stdio: 'inherit', env: { ...process.env, ...env } }).status ?? 1;
  runs.push({ label, status, report });
  return status;
};

function readReport(report) {
  let text = '';
  try {
    text = readFileSync(report, 'utf8');
  } catch {
    return { totals: {}, failures: [] };
  }
  const lines = text.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line));
  return {
    totals: Object.fromEntries(lines.filter((line) => line.kind === 'total').map((line) => [line.key, line.value])),
    failures: lines.filter((line) => line.kind === 'fail'),
  };
}

// One summary for every run, last in the log: a failure in the first of three runs is otherwise
// thousands of lines above the end.
function printSummary() {
  console.log('\n==== coregate test summary ====');
  for (const { label, status, report } of runs) {
    const { totals, failures } = readReport(report);
    const counts = ['tests', 'pass', 'fail', 'cancelled', 'skipped'].map((key) => `${key} ${totals[key] ?? '?'}`).join(', ');
    console.log(`run ${label}: exit ${status}; ${counts}`);
    for (const failure of failures) {
      console.log(`  FAILED ${failure.file ? relative(process.cwd(), failure.file) : '?'} :: ${failure.name}`);
      console.log(`    ${failure.message.trim().split('\n').slice(0, 6).join('\n    ')}`);
    }
    if (status !== 0 && failures.length === 0) console.log('  (the run failed without a failed test: a file did not load, or the runner itself failed; see its output above)');
  }
  rmSync(reportDir, { recursive: true, force: true });
}

let status = run('all test files', files);
// Every rule of the business API holds on all three deployments (issue 8): the API suites run again
// against a remote core over HTTP, and against two instances on one PostgreSQL database.
// COREGATE_TEST_DEPLOYMENTS=none skips these runs (a quick local loop).
const deployments = (process.env.COREGATE_TEST_DEPLOYMENTS ?? 'remote-core,two-instances').split(',').filter((name) => name !== '' && name !== 'none');
const apiFiles = files.filter((file) => file.startsWith(join('test', 'api')));
for (const deployment of apiFiles.length > 0 ? deployments : []) {
  console.log(`# deployment ${deployment}: ${apiFiles.length} API test files`);
  status = run(`deployment ${deployment}`, apiFiles, { COREGATE_TEST_DEPLOYMENT: deployment }) || status;
}
printSummary();
process.exit(status);
