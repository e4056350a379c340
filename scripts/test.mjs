#!/usr/bin/env node
// Runs every test file under test/ with node's test runner, compiled (dist/test, built first: see
// below), in lanes (docs/testing.md):
//   in-process     the suites that run coregate inside the test's process (most of them);
//   process        the suites that spawn coregate processes (the CLI, SIGKILL and crash, failover,
//                  torture, TLS, workers): each of their files costs whole processes' start-ups
//                  and CPU, so fewer of them run at once;
//   remote-core,   the API suites whose behaviour depends on the deployment, again against a
//   two-instances  remote core over HTTP and against two instances behind a round-robin proxy.
// The in-process and process lanes start together; the deployment lanes start, side by side, when
// the first of them has ended, so that no more files run at once than the machine takes
// (2 + 2 at first, then 1 + 1 + what is left of the other lane). Arguments: file filters (a file runs when its path contains one of
// them), `--lane <name>` (repeatable) to run only those lanes, `--list` to print the lanes and
// their files and run nothing. Node 20's --test takes no glob patterns: the runner lists the files itself.
import { spawn } from 'node:child_process';
import { accessSync, constants, createWriteStream, mkdtempSync, readdirSync, readFileSync, rmSync, statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { compile } from './build.mjs';
import { bundleCommand, bundledPathOf, bundleTests } from './bundle.mjs';
import { sourcePathOf } from './file-timer.mjs';
import { makeSigningKeys } from './test-signing-keys.mjs';
import { newRunId, prepareTemplates } from './test-templates.mjs';

/**
 * Each test file declares its lane in its own header (docs/testing.md, "Lanes"), in line comments
 * before its first import:
 *   // @lane process          its tests spawn coregate processes (the CLI's entry, `serve`, a
 *                             SIGKILL, failover, torture, TLS, workers): fewer of them run at once;
 *   // @deployments remote-core two-instances
 *                             an API suite whose outcome depends on the deployment, re-run there;
 *   // @starts-early          among the slowest files of a quiet run: it starts first in its lane,
 *                             so that no long file starts last and runs alone at the end.
 * A file without `@lane process` runs in the in-process lane.
 */
const deploymentNames = ['remote-core', 'two-instances'];
const declarationCache = new Map();
function declarationsOf(file) {
  let found = declarationCache.get(file);
  if (found) return found;
  found = { process: false, deployments: [], startsEarly: false };
  // The header only: the declarations come before the first import.
  for (const line of readFileSync(file, 'utf8').split('\n', 80)) {
    if (line.startsWith('import ')) break;
    const match = /^\/\/ @(lane|deployments|starts-early)\b(.*)$/.exec(line);
    if (!match) continue;
    const [, name, rest] = match;
    const words = rest.replace(/:.*$/, '').trim().split(/\s+/).filter((word) => word !== '');
    if (name === 'lane') {
      if (words.length !== 1 || !['process', 'in-process'].includes(words[0])) throw new Error(`${file}: @lane takes process or in-process, got "${rest.trim()}"`);
      found.process = words[0] === 'process';
    } else if (name === 'deployments') {
      const unknown = words.filter((word) => !deploymentNames.includes(word));
      if (words.length === 0 || unknown.length > 0) throw new Error(`${file}: @deployments takes ${deploymentNames.join(', ')}, got "${rest.trim()}"`);
      found.deployments = words;
    } else {
      found.startsEarly = true;
    }
  }
  declarationCache.set(file, found);
  return found;
}
const startOrder = (file) => (declarationsOf(file).startsEarly ? 0 : 1);

function testFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(path);
    return entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

const laneNames = ['in-process', 'process', 'remote-core', 'two-instances'];
const args = process.argv.slice(2);
const filters = [];
const chosenLanes = [];
let listOnly = false;
for (let index = 0; index < args.length; index += 1) {
  if (args[index] === '--list') {
    listOnly = true;
  } else if (args[index] === '--lane') {
    const lane = args[++index];
    if (!laneNames.includes(lane)) {
      console.error(`--lane takes one of ${laneNames.join(', ')}, got "${lane ?? ''}"`);
      process.exit(2);
    }
    chosenLanes.push(lane);
  } else {
    filters.push(args[index]);
  }
}
// COREGATE_TEST_DEPLOYMENTS=none (or a list) narrows the deployment lanes, as it always has.
const deployments = (process.env.COREGATE_TEST_DEPLOYMENTS ?? 'remote-core,two-instances').split(',').filter((name) => name !== '' && name !== 'none');
const wanted = (lane) => (chosenLanes.length === 0 ? lane === 'in-process' || lane === 'process' || deployments.includes(lane) : chosenLanes.includes(lane));

const files = testFiles('test')
  .map((file) => file.split('\\').join('/'))
  .filter((file) => filters.length === 0 || filters.some((filter) => file.includes(filter)))
  .sort()
  .sort((a, b) => startOrder(a) - startOrder(b));
const inProcessLane = (file) => !declarationsOf(file).process;
// At most four files at once per run while the in-process and process lanes run (2 + 2), and at
// most four after the first of them (1 + 1 + 2): two whole runs at once on a 2-core machine, with five files each, timed out
// process start-ups and CLI runs (issue 25's two-runs proof). The deployment lanes are bound by the
// CPU too: the remote core's two at a time took as long as one at a time (154 s against 151 s, in
// quiet runs) and slowed the two instances' lane beside it (83 → 154 s).
const concurrency = Number(process.env.COREGATE_TEST_CONCURRENCY ?? '2');
const processConcurrency = Number(process.env.COREGATE_TEST_PROCESS_CONCURRENCY ?? '2');
const deploymentConcurrency = Number(process.env.COREGATE_TEST_DEPLOYMENT_CONCURRENCY ?? '1');
const lanes = [
  { label: 'in-process', files: files.filter(inProcessLane), concurrency },
  { label: 'process', files: files.filter((file) => !inProcessLane(file)), concurrency: processConcurrency },
  ...['remote-core', 'two-instances'].map((deployment) => ({
    label: deployment,
    files: files.filter((file) => declarationsOf(file).deployments.includes(deployment)),
    concurrency: deploymentConcurrency,
    env: { COREGATE_TEST_DEPLOYMENT: deployment },
  })),
].filter((lane) => wanted(lane.label) && lane.files.length > 0);
if (lanes.length === 0) {
  console.error(`no test files match ${filters.join(' ')}${chosenLanes.length > 0 ? ` in lane ${chosenLanes.join(', ')}` : ''}`);
  process.exit(1);
}
if (listOnly) {
  for (const lane of lanes) console.log(`lane ${lane.label}: ${lane.files.length} files, ${lane.concurrency} at a time\n${lane.files.map((file) => `  ${file}`).join('\n')}`);
  process.exit(0);
}

// The tests run compiled: the build's tsc program (tsconfig.build.json, the one `npm run build`
// and npm's `prepare` run) type-checks the whole repository, as `npm run typecheck` does (so
// .ci/run runs no separate type-check), and builds src, test, bench and scripts into dist/, so
// the tests and the CLI they spawn always run the current sources and no file's process loads tsx. Through tsx each file's process spent ~1.5 s of CPU more
// loading the same modules (2.4 s against 0.9 s for src/main.js: every module's resolution and load
// a round trip to tsx's loader thread), about a seventh of the suite's CPU over its ~160 file processes.
// The build is incremental (its state in dist/.tsbuildinfo, so removing dist/ builds all again):
// after `npm ci` (whose `prepare` built everything) or a small change it takes ~2.5 s of wall time
// instead of ~12.5 s on a 2-core machine.
const compiled = compile();
if (compiled !== 0) {
  console.error('build failed: tests not run');
  process.exit(compiled);
}

// Each test file runs bundled (scripts/bundle.mjs, docs/testing.md "Bundled test files"): its
// process loads one module and its shared chunks instead of ~1,000 modules. COREGATE_TEST_BUNDLE=0
// runs the compiled modules as they are (a stack trace's lines are the compiled files'). The
// `coregate` command the tests spawn runs its program bundled, as `npm run build` makes it
// (scripts/build.mjs): bundled again from this build, so that no test spawns an older program.
const bundled = process.env.COREGATE_TEST_BUNDLE !== '0';
const selected = [...new Set(lanes.flatMap((lane) => lane.files))];
/**
 * Where the test files' processes keep their temporary files (TMPDIR in the lanes: the suites'
 * SQLite stores, data files, audit spools, the browser's profile; this run's templates and
 * reports): COREGATE_TEST_TMPDIR, else /dev/shm where it is a memory file system (tmpfs), else the
 * system's. A file on tmpfs is written without waiting for a disk: every SQLite commit's sync, and
 * each suite's copy of the template, cost the disk's time. The in-process lane alone, interleaved
 * runs on a 2-core machine: 166–167 s on the disk, 156–157 s on tmpfs. A test about the disk
 * itself finds the system's own directory in COREGATE_TEST_DISK_TMPDIR (wal-checkpointer.test.ts).
 */
const diskTmpdir = tmpdir();
function memoryTmpdir() {
  const tmpfsMagic = 0x01021994;
  try {
    accessSync('/dev/shm', constants.W_OK);
    return statfsSync('/dev/shm').type === tmpfsMagic ? '/dev/shm' : undefined;
  } catch {
    return undefined;
  }
}
const testTmpdir = process.env.COREGATE_TEST_TMPDIR || memoryTmpdir() || diskTmpdir;
const reportDir = mkdtempSync(join(testTmpdir, 'coregate-test-'));
const runId = newRunId();
// Bundling, the templates' migration (a process of its own) and the signing keys go at once: each
// waits on something else part of its time.
const bundlingStarted = Date.now();
const bundling = Promise.all([bundleCommand(), bundled ? bundleTests(selected.map(compiledPath)) : undefined]).then(() => {
  console.log(`# bundled in ${((Date.now() - bundlingStarted) / 1000).toFixed(1)} s: the coregate command${bundled ? `, ${selected.length} test files` : ''}`);
});
const prepared = await Promise.allSettled([prepareTemplates(runId, reportDir), makeSigningKeys(reportDir), bundling]);
const failed = prepared.find((result) => result.status === 'rejected');
if (failed) {
  // No lane will run: the templates made beside a failed bundle are dropped now.
  if (prepared[0].status === 'fulfilled') await prepared[0].value.drop().catch(() => {});
  throw failed.reason;
}
const [templates, signingKeysEnv] = prepared.map((result) => result.value);
const failuresReporter = pathToFileURL(join(import.meta.dirname, 'failures-reporter.mjs')).href;
const fileTimer = pathToFileURL(join(import.meta.dirname, 'file-timer.mjs')).href;

/** Where the build puts a test file: test/x.test.ts is compiled to dist/test/x.test.js. */
function compiledPath(file) {
  return `dist/${file.replace(/\.ts$/, '.js')}`;
}

/** What a lane runs for a test file: its bundle, or its compiled module with COREGATE_TEST_BUNDLE=0. */
function runPath(file) {
  return bundled ? bundledPathOf(compiledPath(file)) : compiledPath(file);
}

/**
 * Runs one lane with its own `node --test`. Each reports twice: TAP (spec on a terminal) to the
 * console, and its failures and totals to a file that the summary at the very end reads back
 * (scripts/failures-reporter.mjs); each file's process appends its time to another
 * (scripts/file-timer.mjs). The first lane started writes to the console as it
 * goes; the others, running beside it, write to a file that is printed whole when they end, so
 * that the lanes' outputs do not interleave line by line. Answers `ended` (the lane's process has
 * ended) and `done` (its output is printed too: after the live lane's).
 */
function runLane(lane, index, live) {
  const report = join(reportDir, `${index}.jsonl`);
  const timings = join(reportDir, `${index}.times.jsonl`);
  const reporters = [
    `--test-reporter=${process.stdout.isTTY ? 'spec' : 'tap'}`, '--test-reporter-destination=stdout',
    `--test-reporter=${failuresReporter}`, `--test-reporter-destination=${report}`,
  ];
  const output = live ? undefined : join(reportDir, `${index}.out`);
  const header = `# lane ${lane.label}: ${lane.files.length} files, ${lane.concurrency} at a time`;
  if (live) console.log(header);
  const child = spawn(process.execPath, ['--import', fileTimer, '--test', `--test-concurrency=${lane.concurrency}`, ...reporters, ...lane.files.map(runPath)], {
    stdio: live ? 'inherit' : ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...templates.env, ...signingKeysEnv, ...lane.env, TMPDIR: testTmpdir, COREGATE_TEST_DISK_TMPDIR: diskTmpdir, COREGATE_TEST_TIMINGS: timings },
  });
  if (output) {
    const sink = createWriteStream(output);
    child.stdout.pipe(sink, { end: false });
    child.stderr.pipe(sink, { end: false });
  }
  children.add(child);
  const started = Date.now();
  const ended = new Promise((resolve) => {
    child.on('close', (code, signal) => {
      children.delete(child);
      const seconds = Math.round((Date.now() - started) / 1000);
      resolve({ label: lane.label, status: code ?? (signal ? 1 : 0), report, timings, seconds });
    });
  });
  const done = ended.then(async (result) => {
    if (live) {
      console.log(`# lane ${lane.label} ended after ${result.seconds} s`);
      endLive();
      return result;
    }
    // Printed once the live lane's output has ended, so that it never lands in its middle.
    await liveEnded;
    console.log(`${header}\n${readFileSync(output, 'utf8')}\n# lane ${lane.label} ended after ${result.seconds} s`);
    return result;
  });
  return { ended, done };
}

// A signal to the run (Ctrl-C, a CI job's time-out) goes to the lanes' processes too; the
// templates are dropped once they have ended. A run killed outright leaves them to the next run's
// clean-up (test-templates.mjs).
const children = new Set();
let endLive = () => {};
const liveEnded = new Promise((resolve) => {
  endLive = resolve;
});
let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    interrupted = true;
    for (const child of children) child.kill(signal);
  });
}

const inProcessIndex = lanes.findIndex((lane) => lane.label === 'in-process');
const started = new Map();
const start = (index) => {
  // An interrupted run starts no further lane.
  const skipped = Promise.resolve({ label: lanes[index].label, status: 130, report: '', timings: '', seconds: 0 });
  if (!started.has(index)) started.set(index, interrupted ? { ended: skipped, done: skipped } : runLane(lanes[index], index, started.size === 0));
  return started.get(index);
};
// The in-process lane first (its output is the one shown live), then the process lane; the
// deployment lanes when the first of those two has ended, so that at most four files run at once.
const firstLanes = lanes.flatMap((lane, index) => (lane.env?.COREGATE_TEST_DEPLOYMENT ? [] : [index])).sort((a, b) => (a === inProcessIndex ? -1 : b === inProcessIndex ? 1 : 0));
for (const index of firstLanes) start(index);
const results = await Promise.all(
  lanes.map(async (lane, index) => {
    // A lane has ended when its process has (its output may wait for the live lane's to end).
    if (lane.env?.COREGATE_TEST_DEPLOYMENT && firstLanes.length > 0) await Promise.race(firstLanes.map((first) => start(first).ended));
    return start(index).done;
  }),
);
await templates.drop().catch((error) => console.warn(`# dropping the template database failed: ${error.message}`));

function readLines(file) {
  try {
    return readFileSync(file, 'utf8').split('\n').filter((line) => line !== '').map((line) => JSON.parse(line));
  } catch {
    return [];
  }
}

function readReport(report) {
  const lines = readLines(report);
  return {
    totals: Object.fromEntries(lines.filter((line) => line.kind === 'total').map((line) => [line.key, line.value])),
    failures: lines.filter((line) => line.kind === 'fail'),
  };
}

// One summary for every lane, last in the log: a failure in the first lane is otherwise thousands
// of lines above the end. Then the slowest files, where the run's time went.
function printSummary() {
  console.log('\n==== coregate test summary ====');
  const times = [];
  for (const { label, status, report, timings, seconds } of results) {
    const { totals, failures } = readReport(report);
    const counts = ['tests', 'pass', 'fail', 'cancelled', 'skipped'].map((key) => `${key} ${totals[key] ?? '?'}`).join(', ');
    console.log(`run ${label}: exit ${status}; ${counts}; ${seconds} s`);
    for (const failure of failures) {
      console.log(`  FAILED ${failure.file ? sourcePathOf(relative(process.cwd(), failure.file)) : '?'} :: ${failure.name}`);
      console.log(`    ${failure.message.trim().split('\n').slice(0, 6).join('\n    ')}`);
    }
    if (status !== 0 && failures.length === 0) console.log('  (the run failed without a failed test: a file did not load, or the runner itself failed; see its output above)');
    times.push(...readLines(timings).map((line) => ({ ...line, label })));
  }
  const slowest = Number(process.env.COREGATE_TEST_SLOWEST ?? '10');
  if (slowest > 0 && times.length > 0) {
    console.log(`slowest files (wall time of each file's process):`);
    const cpuTotal = times.reduce((sum, { cpuMs }) => sum + (cpuMs ?? 0), 0);
    console.log(`CPU time of the files' processes and their children (the databases' own not counted): ${Math.round(cpuTotal / 1000)} s`);
    for (const { label, file, ms, cpuMs } of times.sort((a, b) => b.ms - a.ms).slice(0, slowest)) {
      const cpu = cpuMs === undefined ? '' : `, CPU ${(cpuMs / 1000).toFixed(1).padStart(5)} s`;
      console.log(`  ${(ms / 1000).toFixed(1).padStart(6)} s${cpu}  ${file}${label === 'in-process' || label === 'process' ? '' : ` [${label}]`}`);
    }
  }
  if (interrupted) console.log('interrupted');
  rmSync(reportDir, { recursive: true, force: true });
}

printSummary();
process.exit(interrupted ? 130 : results.reduce((status, result) => status || result.status, 0));
