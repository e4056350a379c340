/**
 * A quick loop for profiling work (not part of `npm run bench`): starts `coregate serve` on a
 * fresh store, runs the named scenarios for a few seconds each, and prints the throughput and
 * the server's CPU per request (bench/cpu.ts: user + system, from /proc), which is steadier than
 * throughput on a shared machine, with what bounded the run.
 *
 *   node --import tsx bench/quick.ts [--store sqlite|postgres] [--seconds 5] [--workers N] [--profile DIR] [--strace DIR] retrieve 401 ...
 *
 * `dpop` (a retrieve with a DPoP-bound token, a fresh proof each), `fapi` (a token with
 * private_key_jwt and a DPoP proof, fresh each), `mtls` (a retrieve with a certificate-bound token,
 * over TLS), `tls` (the bearer retrieve over the same TLS server) and `verify` (the baseline: one
 * ES256 verification with node:crypto on one core, in this process) are issue 42's.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { es256Verification } from './baselines.js';
import { boundBy, cpuProbe } from './cpu.js';
import { narrowClient, realms, writeBenchData } from './data.js';
import { dpopRetrieveScenario, fapiKeys, fapiRealmData, fapiToken, fapiTokenScenario } from './fapi.js';
import { measure, type Scenario } from './load.js';
import { mtlsMaterial, mtlsRealmData, mtlsServeArgs, mtlsToken, tlsRetrieveScenario, tlsSecretToken } from './mtls.js';
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
  const fapi = await fapiKeys();
  const dataFile = writeBenchData(dir, [fapiRealmData(fapi), mtlsRealmData()]);
  if (positionals.includes('verify')) {
    const figure = es256Verification(load.seconds);
    console.log(`${'one ES256 verification (node:crypto)'.padEnd(34)} ${String(figure.perSecond).padStart(7)}/s  ${figure.cpuUsPerOperation} µs of CPU each`);
  }
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
  let depositId = '';
  try {
    const token = await obtainToken(server.url);
    depositId = await createDeposit(server.url, token);
    const narrowToken = await obtainToken(server.url, realms.rs256, narrowClient);
    // Enough proofs and assertions for the warm-up and the run at the rates this machine reaches (bench/fapi.ts).
    const fapiCount = Math.ceil((load.seconds + load.warmupSeconds) * 8_000) + 100;
    const dpopToken = positionals.includes('dpop') ? await fapiToken(server.url, fapi) : '';
    const scenarios: Record<string, () => Scenario | Promise<Scenario>> = {
      dpop: () => dpopRetrieveScenario('retrieve DPoP', server.url, fapi, dpopToken, depositId, fapiCount),
      fapi: () => fapiTokenScenario('token private_key_jwt + DPoP', server.url, fapi, Math.ceil(fapiCount / 2)),
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
      // The warm-up and the measured run number their requests in one sequence: correlation ids
      // never repeat, and a pool of single-use proofs is never handed out twice.
      const made = await make();
      let sequence = 0;
      const scenario = { ...made, request: () => made.request(sequence++) };
      if (load.warmupSeconds > 0) await measure(server.url, scenario, { ...load, seconds: load.warmupSeconds, warmupSeconds: 0 });
      await measured(server.url, server.pid, scenario);
    }
  } finally {
    await server.stop();
  }
  // `tls` (the bearer retrieve over TLS) and `mtls` (a certificate-bound token's): coregate serving
  // TLS with client certificates on, on the same store once the plain server stopped (bench/mtls.ts).
  const overTls = positionals.filter((name) => name === 'tls' || name === 'mtls');
  if (overTls.length === 0) return;
  const material = mtlsMaterial(dir);
  if (material === undefined) throw new Error('openssl is needed to make the TLS scenarios\' certificates');
  const tlsServer = await startCoregate({ dataFile, db, logDir: dir, name: 'coregate-tls', workers: Number(flags.workers), profileDir: flags.profile, extraArgs: mtlsServeArgs(material) });
  try {
    for (const name of overTls) {
      const scenario = name === 'tls' ? tlsRetrieveScenario('retrieve over TLS, bearer', await tlsSecretToken(tlsServer.url), depositId, undefined) : tlsRetrieveScenario('retrieve mTLS-bound', await mtlsToken(tlsServer.url, material), depositId, material);
      if (load.warmupSeconds > 0) await measure(tlsServer.url, scenario, { ...load, seconds: load.warmupSeconds, warmupSeconds: 0 });
      await measured(tlsServer.url, tlsServer.pid, scenario);
    }
  } finally {
    await tlsServer.stop();
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
