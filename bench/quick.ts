/**
 * A quick loop for profiling work (not part of `npm run bench`): starts `coregate serve` on a
 * fresh store, runs the named scenarios for a few seconds each, and prints the throughput and
 * the server's CPU per request (user + system, from /proc/<pid>/stat), which is steadier than
 * throughput on a shared machine.
 *
 *   node --import tsx bench/quick.ts [--store sqlite|postgres] [--seconds 5] [--workers N] [--profile DIR] [--strace DIR] retrieve 401 ...
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { realms, writeBenchData } from './data.js';
import { measure, type Scenario } from './load.js';
import { measurePaced } from './paced-load.js';
import { startCoregate, startHelloWorld } from './processes.js';
import { narrowClient } from './data.js';
import {
  badSignatureScenario,
  createDeposit,
  depositScenario,
  forbiddenScenario,
  helloWorldScenario,
  invalidBodyScenario,
  loanScenario,
  malformedTokenScenario,
  notFoundScenario,
  obtainToken,
  retrieveScenario,
  tokenScenario,
  tooLargeScenario,
  unsupportedMediaScenario,
} from './scenarios.js';
import { defaultPgUrl, withScratchDatabase } from './scratch-database.js';

const { values: flags, positionals } = parseArgs({
  allowPositionals: true,
  options: { store: { type: 'string', default: 'sqlite' }, seconds: { type: 'string', default: '5' }, workers: { type: 'string', default: '1' }, profile: { type: 'string' }, perf: { type: 'string' }, strace: { type: 'string' }, rate: { type: 'string' }, warmup: { type: 'string', default: '1' } },
});
const load = { connections: 16, seconds: Number(flags.seconds), warmupSeconds: Number(flags.warmup) };
const ticksPerSecond = 100;

/** A /proc stat file's command name and its user and system ticks. */
function statTicks(path: string): { command: string; user: number; system: number } {
  const stat = readFileSync(path, 'utf8');
  const fields = stat.split(') ')[1]!.split(' ');
  return { command: stat.slice(stat.indexOf('(') + 1, stat.indexOf(') ')), user: Number(fields[11]), system: Number(fields[12]) };
}

/** User and system ticks of the process (all threads) and of its main thread. */
function cpuTicks(pid: number): { user: number; system: number; mainUser: number; mainSystem: number } {
  const all = statTicks(`/proc/${pid}/stat`);
  const main = statTicks(`/proc/${pid}/task/${pid}/stat`);
  return { user: all.user, system: all.system, mainUser: main.user, mainSystem: main.system };
}

/** User + system ticks of every PostgreSQL process (its backends do the store's work on PostgreSQL). */
function postgresTicks(): number {
  let ticks = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const { command, user, system } = statTicks(`/proc/${entry}/stat`);
      if (command === 'postgres') ticks += user + system;
    } catch {
      // The process ended meanwhile.
    }
  }
  return ticks;
}

async function measured(url: string, pid: number, scenario: Scenario): Promise<void> {
  // --perf DIR: perf's CPU samples of the server (run with NODE_OPTIONS=--perf-basic-prof for JS names).
  const perf = flags.perf === undefined ? undefined : spawn('perf', ['record', '-F', '1999', '-g', '-p', String(pid), '-o', join(flags.perf, `${scenario.name.replace(/\W+/g, '-')}.data`)], { stdio: 'ignore' });
  // --strace DIR: the server's system calls, counted (strace -c -f) over the measured run.
  const strace = flags.strace === undefined ? undefined : spawn('strace', ['-c', '-f', '-p', String(pid), '-o', join(flags.strace, `${scenario.name.replace(/\W+/g, '-')}.strace`)], { stdio: 'ignore' });
  if (strace) await new Promise((resolve) => setTimeout(resolve, 500));
  const before = cpuTicks(pid);
  const postgresBefore = flags.store === 'postgres' ? postgresTicks() : 0;
  const startedAt = performance.now();
  // --rate N: paced at N requests/s (CPU per request at a fixed rate), else as fast as it answers.
  const result = flags.rate === undefined ? await measure(url, scenario, { ...load, warmupSeconds: 0 }) : await measurePaced(url, scenario, { ...load, warmupSeconds: 0 }, Number(flags.rate));
  const after = cpuTicks(pid);
  const postgresSpent = flags.store === 'postgres' ? postgresTicks() - postgresBefore : undefined;
  if (perf) {
    perf.kill('SIGINT');
    await new Promise((resolve) => perf.once('exit', resolve));
  }
  if (strace) {
    strace.kill('SIGINT');
    await new Promise((resolve) => strace.once('exit', resolve));
    console.log(`${scenario.name}: ${result.requests} requests measured; system calls in ${join(flags.strace!, `${scenario.name.replace(/\W+/g, '-')}.strace`)}`);
  }
  const elapsed = (performance.now() - startedAt) / 1000;
  const micros = (ticks: number) => ((ticks / ticksPerSecond / result.requests) * 1e6).toFixed(1);
  const ticks = after.user + after.system - before.user - before.system;
  console.log(
    `${scenario.name.padEnd(28)} ${String(result.perSecond).padStart(7)}/s  p50 ${result.p50Ms} p99 ${result.p99Ms} ms  server CPU ${micros(ticks)} µs/req ` +
      `(user ${micros(after.user - before.user)}, system ${micros(after.system - before.system)}; main thread ${micros(after.mainUser - before.mainUser)} + ${micros(after.mainSystem - before.mainSystem)}) ` +
      `${((ticks / ticksPerSecond / elapsed) * 100).toFixed(0)} % of a core${postgresSpent === undefined ? '' : `  PostgreSQL CPU ${micros(postgresSpent)} µs/req`}  ${JSON.stringify(result.statuses)}`,
  );
}

async function main(dir: string, db: string): Promise<void> {
  process.env.X_DBPATH = join(dir, 'coregate.db');
  const dataFile = writeBenchData(dir);
  if (positionals.includes('hello')) {
    const hello = await startHelloWorld(dir, flags.profile);
    try {
      await measure(hello.url, helloWorldScenario(), { ...load, seconds: load.warmupSeconds, warmupSeconds: 0 });
      await measured(hello.url, hello.pid, helloWorldScenario());
    } finally {
      await hello.stop();
    }
  }
  const server = await startCoregate({ dataFile, db, logDir: dir, name: 'coregate', workers: Number(flags.workers), profileDir: flags.profile });
  try {
    const token = await obtainToken(server.url);
    const depositId = await createDeposit(server.url, token);
    const narrowToken = await obtainToken(server.url, realms.rs256, narrowClient);
    const scenarios: Record<string, () => Scenario> = {
      rs256: () => tokenScenario('token RS256', realms.rs256),
      es256: () => tokenScenario('token ES256', realms.es256),
      deposit: () => depositScenario('term deposit initiation', token),
      hot: () => depositScenario('hot account', token, { hot: true }),
      loan: () => loanScenario('loan installment execution', token),
      retrieve: () => retrieveScenario('retrieve', token, depositId),
      '401': () => malformedTokenScenario('401 malformed token', depositId),
      '400': () => invalidBodyScenario('400 invalid body', token),
      '401sig': () => badSignatureScenario('401 bad signature', token, depositId),
      '401forged': () => badSignatureScenario('401 forged, each unique', token, depositId, { unique: true }),
      '403': () => forbiddenScenario('403 scope', narrowToken, depositId),
      '404': () => notFoundScenario('404 unknown route'),
      '413': () => tooLargeScenario('413 body too large', token),
      '415': () => unsupportedMediaScenario('415 text/plain', token),
    };
    for (const name of positionals) {
      const make = scenarios[name];
      if (!make) continue;
      // The warm-up's requests are numbered apart from the measured ones: their correlation ids never repeat.
      const warmup = make();
      if (load.warmupSeconds > 0) await measure(server.url, { ...warmup, request: (i) => warmup.request(i + 1_000_000_000) }, { ...load, seconds: load.warmupSeconds, warmupSeconds: 0 });
      await measured(server.url, server.pid, make());
    }
  } finally {
    await server.stop();
  }
}

const dir = mkdtempSync(join(tmpdir(), 'coregate-quick-'));
try {
  if (flags.store === 'postgres') await withScratchDatabase(process.env.BENCH_PG_URL ?? defaultPgUrl, 'coregate', (url) => main(dir, url));
  else await main(dir, `sqlite:${join(dir, 'coregate.db')}`);
} finally {
  if (process.env.QUICK_KEEP) console.log(`kept ${dir}`);
  else rmSync(dir, { recursive: true, force: true });
}
