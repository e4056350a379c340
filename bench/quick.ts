/**
 * A quick loop for profiling work (not part of `npm run bench`): starts `coregate serve` on a
 * fresh store, runs the named scenarios for a few seconds each, and prints the throughput and
 * the server's CPU per request (bench/cpu.ts: user + system, from /proc), which is steadier than
 * throughput on a shared machine, with what bounded the run.
 *
 *   node --import tsx bench/quick.ts [--store sqlite|postgres] [--seconds 5] [--workers N] [--profile DIR] [--strace DIR] retrieve 401 ...
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { boundBy, cpuProbe } from './cpu.js';
import { narrowClient, realms, writeBenchData } from './data.js';
import { measure, type Scenario } from './load.js';
import { measurePaced } from './paced-load.js';
import { startCoregate, startHelloWorld } from './processes.js';
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
async function measured(url: string, pid: number, scenario: Scenario): Promise<void> {
  // --perf DIR: perf's CPU samples of the server (run with NODE_OPTIONS=--perf-basic-prof for JS names).
  const perf = flags.perf === undefined ? undefined : spawn('perf', ['record', '-F', '1999', '-g', '-p', String(pid), '-o', join(flags.perf, `${scenario.name.replace(/\W+/g, '-')}.data`)], { stdio: 'ignore' });
  // --strace DIR: the server's system calls, counted (strace -c -f) over the measured run.
  const strace = flags.strace === undefined ? undefined : spawn('strace', ['-c', '-f', '-p', String(pid), '-o', join(flags.strace, `${scenario.name.replace(/\W+/g, '-')}.strace`)], { stdio: 'ignore' });
  if (strace) await new Promise((resolve) => setTimeout(resolve, 500));
  const probe = cpuProbe(pid, { postgres: flags.store === 'postgres' });
  // --rate N: paced at N requests/s (CPU per request at a fixed rate), else as fast as it answers.
  const stop = flags.rate === undefined ? undefined : probe();
  const result = flags.rate === undefined ? await measure(url, scenario, { ...load, warmupSeconds: 0 }, probe) : await measurePaced(url, scenario, { ...load, warmupSeconds: 0 }, Number(flags.rate));
  const cpu = result.cpu ?? stop?.(result.requests);
  if (perf) {
    perf.kill('SIGINT');
    await new Promise((resolve) => perf.once('exit', resolve));
  }
  if (strace) {
    strace.kill('SIGINT');
    await new Promise((resolve) => strace.once('exit', resolve));
    console.log(`${scenario.name}: ${result.requests} requests measured; system calls in ${join(flags.strace!, `${scenario.name.replace(/\W+/g, '-')}.strace`)}`);
  }
  const figures = cpu
    ? `server CPU ${cpu.serverUsPerRequest} µs/req, ${cpu.serverCores} cores (main thread ${cpu.serverMainThreadCores}), load generator ${cpu.loadGeneratorCores}, machine ${Math.round(cpu.machineBusy * 100)} %` +
      `${cpu.postgresUsPerRequest === undefined ? '' : `  PostgreSQL CPU ${cpu.postgresUsPerRequest} µs/req`}  bounded by ${boundBy(cpu)}`
    : '';
  console.log(`${scenario.name.padEnd(34)} ${String(result.perSecond).padStart(7)}/s  p50 ${result.p50Ms} p99 ${result.p99Ms} ms  ${figures}  ${JSON.stringify(result.statuses)}`);
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
      '401sig': () => badSignatureScenario('401 forged signature, replayed', token, depositId),
      '401forged': () => badSignatureScenario('401 forged signature, each unique', token, depositId, { unique: true }),
      '403': () => forbiddenScenario('403 scope', narrowToken, depositId),
      '404': () => notFoundScenario('404 unknown route'),
      '413': () => tooLargeScenario('413 body over 64 KiB, audited', token),
      '415': () => unsupportedMediaScenario('415 text/plain, audited', token),
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
