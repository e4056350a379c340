#!/usr/bin/env node
// Runs every test file under test/ with node's test runner through tsx. Node 20's --test takes
// no glob patterns, so the files are listed here. Extra arguments (file filters) narrow the run.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

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
const run = (testFiles, env = {}) =>
  spawnSync(process.execPath, ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, ...testFiles], { stdio: 'inherit', env: { ...process.env, ...env } }).status ?? 1;

let status = run(files);
// Every rule of the business API holds on all three deployments (issue 8): the API suites run again
// against a remote core over HTTP, and against two instances on one PostgreSQL database.
// COREGATE_TEST_DEPLOYMENTS=none skips these runs (a quick local loop).
const deployments = (process.env.COREGATE_TEST_DEPLOYMENTS ?? 'remote-core,two-instances').split(',').filter((name) => name !== '' && name !== 'none');
const apiFiles = files.filter((file) => file.startsWith(join('test', 'api')));
for (const deployment of apiFiles.length > 0 ? deployments : []) {
  console.log(`# deployment ${deployment}: ${apiFiles.length} API test files`);
  status = run(apiFiles, { COREGATE_TEST_DEPLOYMENT: deployment }) || status;
}
process.exit(status);
