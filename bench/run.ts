/**
 * `npm run bench`: coregate as deployed (`coregate serve` in its own process, default log level)
 * under autocannon from this process, on SQLite and on PostgreSQL (a scratch database created
 * and dropped), every baseline measured in the same run, ratios against the performance targets.
 * Each store's baselines are measured just before and just after each path they judge (jose
 * around the tokens, TPC-B or pgbench around the deposits, hello-world around the retrieve, the
 * 401 and the 400), and a path's ratio is taken to their mean, with the spread: this VM's speed
 * drifts within minutes. Beside every throughput, the CPU a request cost coregate's process (and
 * PostgreSQL's) and which party bounded the run (bench/cpu.ts): the CPU per request does not move
 * with the disk's phase as the throughput does. The sender-constrained paths (issue 42: the FAPI
 * token, the DPoP-bound and the certificate-bound retrieve) are judged by their CPU a request
 * against their bearer path's plus a number of ES256 verifications, the verification measured in
 * the same run; the certificate-bound retrieve runs on a second server, with TLS and client
 * certificates on (bench/mtls.ts), once the first one stopped, beside a bearer retrieve over TLS.
 * Writes bench/results/<date>.json, .md and .svg and prints the summary table. Numbers are
 * measurements, never assertions: no test times anything (the smoke test only checks it works).
 *
 *   npm run bench -- [--seconds 10] [--warmup 2] [--connections 16] [--stores sqlite,postgres]
 *                    [--only <substring>] [--smoke] [--out bench/results] [--workers 1]
 *                    [--profile DIR]   (the server runs under --cpu-prof; see bench/profile-summary.mjs)
 * BENCH_PG_URL names the PostgreSQL server (default postgres://postgres@127.0.0.1:5432/test).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { es256Verification, joseSigning, pgbench, sqliteTransfers, verificationBaseline, type BaselineFigure } from './baselines.js';
import { cpuProbe } from './cpu.js';
import { narrowClient, realms, writeBenchData } from './data.js';
import { dpopRetrieveScenario, fapiKeys, fapiRealmData, fapiToken, fapiTokenScenario, type FapiKeys } from './fapi.js';
import { measure, type LoadOptions, type Measurement, type Scenario } from './load.js';
import { mtlsMaterial, mtlsRealmData, mtlsServeArgs, mtlsToken, tlsRetrieveScenario, tlsSecretToken, type MtlsMaterial } from './mtls.js';
import { measurePaced } from './paced-load.js';
import { startCoregate, startHelloWorld } from './processes.js';
import { machine, printTable, summaryTable, writeReport, type BaselineRun, type BenchResult, type Judged, type StoreName, type StoreRun } from './report.js';
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
import { defaultPgUrl, postgresReachable, withScratchDatabase } from './scratch-database.js';

const { values: flags } = parseArgs({
  options: {
    seconds: { type: 'string' },
    warmup: { type: 'string' },
    connections: { type: 'string', default: '16' },
    stores: { type: 'string', default: 'sqlite,postgres' },
    only: { type: 'string' },
    smoke: { type: 'boolean', default: false },
    out: { type: 'string', default: new URL('./results', import.meta.url).pathname },
    workers: { type: 'string', default: '1' },
    profile: { type: 'string' },
  },
});

const smoke = flags.smoke === true;
const load: LoadOptions = {
  connections: Number(flags.connections),
  // Smoke: `requests` below rather than a duration, so that a busy machine still gets every answer
  // (a one-second run on PostgreSQL once got none) and a quiet one spends no longer than needed;
  // `seconds` then only bounds the paced scenario.
  seconds: Number(flags.seconds ?? (smoke ? 1 : 10)),
  warmupSeconds: Number(flags.warmup ?? (smoke ? 0.5 : 2)),
  // Smoke: a fixed number of requests per scenario, each waited for (bench/load.ts).
  ...(smoke ? { requests: 4 * Number(flags.connections) } : {}),
};
/** How long each baseline measures: the smoke run only checks that each one works. */
const baselineSeconds = smoke ? 0.25 : load.seconds;
const stores = (flags.stores ?? '').split(',').filter((store): store is StoreName => store === 'sqlite' || store === 'postgres');
const pgServerUrl = process.env.BENCH_PG_URL ?? defaultPgUrl;
const selected = (name: string) => flags.only === undefined || name.includes(flags.only);
const step = (text: string) => process.stderr.write(`${text}\n`);
/** The FAPI client's and its session's keys (bench/fapi.ts), made once per run. */
let fapi: FapiKeys;
/** The TLS server's and the certificate-bound client's certificates (bench/mtls.ts); undefined without openssl. */
let mtls: MtlsMaterial | undefined;

async function benchStore(store: StoreName, db: string, dataFile: string, workDir: string): Promise<StoreRun> {
  step(`coregate on ${store}`);
  const server = await startCoregate({ dataFile, db, logDir: workDir, name: `coregate-${store}`, workers: Number(flags.workers), profileDir: flags.profile });
  const probe = cpuProbe(server.pid, { postgres: store === 'postgres' });
  const scenarios: Measurement[] = [];
  const baselines: BaselineRun[] = [];
  const judged: Judged[] = [];
  let peakRssMiB = 0;
  const run = async (scenario: Scenario, pacedRate?: number) => {
    if (!selected(scenario.name)) return undefined;
    // The paced run is about latency below saturation: its CPU is not what it judges.
    const measured = pacedRate === undefined ? await measure(server.url, scenario, load, probe) : await measurePaced(server.url, scenario, load, pacedRate);
    const cpu = measured.cpu ? `, ${measured.cpu.serverUsPerRequest} µs of server CPU a request${measured.cpu.postgresUsPerRequest === undefined ? '' : ` + ${measured.cpu.postgresUsPerRequest} µs PostgreSQL's`}` : '';
    step(`  ${scenario.name}: ${measured.perSecond}/s, p50 ${measured.p50Ms} ms, p99 ${measured.p99Ms} ms${cpu}${measured.unexpected ? `, ${measured.unexpected} unexpected answers ${JSON.stringify(measured.statuses)}` : ''}`);
    scenarios.push(measured);
    return measured;
  };
  /**
   * The baseline measured just before and just after each path it judges (one measurement between
   * two paths serves as the first one's "after" and the next one's "before"): the ratio is taken
   * to their mean, and their difference is the machine's drift while the path ran.
   */
  const series = async (baseline: string, measureBaseline: () => Promise<BaselineFigure>, paths: ReadonlyArray<{ name: string; go: () => Promise<Measurement | undefined> }>) => {
    const wanted = paths.filter((path) => selected(path.name));
    if (wanted.length === 0) return;
    const take = async () => {
      const figure = await measureBaseline();
      baselines.push({ name: baseline, ...figure });
      step(`  baseline, ${baseline}: ${figure.perSecond}/s${figure.cpuUsPerOperation === undefined ? '' : `, ${figure.cpuUsPerOperation} µs of CPU each`}`);
      return figure.perSecond;
    };
    let before = await take();
    for (const path of wanted) {
      const measured = await path.go();
      if (!measured) continue;
      const after = await take();
      judged.push({ scenario: measured.name, baseline, before, after });
      before = after;
    }
  };
  /**
   * Issue 42's unit: one ES256 signature verified with node:crypto on one core, measured in this
   * process between the paths it judges (the sender-constrained ones: their bound is their bearer
   * path's CPU plus a number of these); the bound takes the mean of this store's measurements.
   */
  const verification = async () => {
    if (!['token private_key_jwt + DPoP', 'retrieve DPoP', 'retrieve mTLS-bound'].some(selected)) return;
    const figure = es256Verification(baselineSeconds);
    baselines.push({ name: verificationBaseline, ...figure });
    step(`  baseline, ${verificationBaseline}: ${figure.perSecond}/s, ${figure.cpuUsPerOperation} µs of CPU each`);
  };
  let depositId = '';
  try {
    const token = await obtainToken(server.url);
    const narrowToken = await obtainToken(server.url, realms.rs256, narrowClient);
    await series('jose RS256 signing on all cores', () => joseSigning('RS256', baselineSeconds), [{ name: 'token RS256', go: () => run(tokenScenario('token RS256', realms.rs256)) }]);
    await series('jose ES256 signing on all cores', () => joseSigning('ES256', baselineSeconds), [{ name: 'token ES256', go: () => run(tokenScenario('token ES256', realms.es256)) }]);
    // FAPI 2.0 (docs/auth.md): private_key_jwt and a DPoP proof per request (their pools made just
    // before). Smoke: its requests and warm-up, with room (autocannon builds a few requests ahead).
    const fapiCount = (perSecond: number) => (load.requests !== undefined ? 2 * load.requests + 4 * load.connections : Math.ceil((load.seconds + load.warmupSeconds) * perSecond) + 100);
    await verification();
    if (selected('token private_key_jwt + DPoP')) await run(await fapiTokenScenario('token private_key_jwt + DPoP', server.url, fapi, fapiCount(4_000)));
    const deposits = { name: 'term deposit initiation', go: () => run(depositScenario('term deposit initiation', token)) };
    if (store === 'sqlite') {
      await series('better-sqlite3 TPC-B-like (WAL, FULL)', async () => sqliteTransfers(workDir, baselineSeconds), [deposits]);
    } else {
      await series('pgbench TPC-B, same connections', () => withScratchDatabase(pgServerUrl, 'pgbench', async (url) => pgbench(url, load.connections, baselineSeconds)), [deposits]);
    }
    const spread = scenarios.find((scenario) => scenario.name === 'term deposit initiation');
    if (spread && spread.perSecond > 1) await run(depositScenario('term deposit initiation at half rate', token), Math.max(1, Math.round(spread.perSecond / 2)));
    await run(depositScenario('hot account', token, { hot: true }));
    await run(loanScenario('loan installment execution', token));
    depositId = await createDeposit(server.url, token);
    // The paths judged against hello-world, which runs in its own process, idle while coregate is measured.
    const lightPaths = [
      { name: 'retrieve', go: () => run(retrieveScenario('retrieve', token, depositId)) },
      { name: '401 malformed token', go: () => run(malformedTokenScenario('401 malformed token', depositId)) },
      { name: '400 invalid body', go: () => run(invalidBodyScenario('400 invalid body', token)) },
    ];
    const hello = lightPaths.some((path) => selected(path.name)) ? await startHelloWorld(workDir) : undefined;
    try {
      const helloProbe = hello && cpuProbe(hello.pid);
      const helloWorld = async (): Promise<BaselineFigure> => {
        const measured = await measure(hello!.url, helloWorldScenario(), load, helloProbe);
        return { perSecond: measured.perSecond, ...(measured.cpu ? { cpuUsPerOperation: measured.cpu.serverUsPerRequest, cpu: measured.cpu } : {}) };
      };
      await series('Fastify hello-world', helloWorld, lightPaths);
    } finally {
      await hello?.stop();
    }
    if (selected('retrieve DPoP')) {
      const dpopToken = await fapiToken(server.url, fapi);
      await run(await dpopRetrieveScenario('retrieve DPoP', server.url, fapi, dpopToken, depositId, fapiCount(8_000)));
      await verification();
    }
    // The other refusals, each against the retrieve's CPU a request (issue 28: no dearer than a retrieve).
    await run(badSignatureScenario('401 forged signature, replayed', token, depositId));
    await run(badSignatureScenario('401 forged signature, each unique', token, depositId, { unique: true }));
    await run(forbiddenScenario('403 scope', narrowToken, depositId));
    await run(notFoundScenario('404 unknown route'));
    await run(unsupportedMediaScenario('415 text/plain, audited', token));
    await run(tooLargeScenario('413 body over 64 KiB, audited', token));
  } finally {
    peakRssMiB = server.peakRssMiB();
    await server.stop();
  }
  // Mutual TLS: coregate serving TLS with client certificates on, on the same store (one server at a time).
  if (mtls !== undefined && ['retrieve over TLS, bearer', 'retrieve mTLS-bound'].some(selected)) {
    step(`coregate on ${store}, TLS with client certificates`);
    const tlsServer = await startCoregate({ dataFile, db, logDir: workDir, name: `coregate-${store}-tls`, workers: Number(flags.workers), profileDir: flags.profile, extraArgs: mtlsServeArgs(mtls) });
    const tlsProbe = cpuProbe(tlsServer.pid, { postgres: store === 'postgres' });
    try {
      const tlsRun = async (scenario: Scenario) => {
        if (!selected(scenario.name)) return;
        const measured = await measure(tlsServer.url, scenario, load, tlsProbe);
        step(`  ${scenario.name}: ${measured.perSecond}/s, p50 ${measured.p50Ms} ms, p99 ${measured.p99Ms} ms${measured.cpu ? `, ${measured.cpu.serverUsPerRequest} µs of server CPU a request` : ''}`);
        scenarios.push(measured);
      };
      await tlsRun(tlsRetrieveScenario('retrieve over TLS, bearer', await tlsSecretToken(tlsServer.url), depositId, undefined));
      await tlsRun(tlsRetrieveScenario('retrieve mTLS-bound', await mtlsToken(tlsServer.url, mtls), depositId, mtls));
      await verification();
    } finally {
      peakRssMiB = Math.max(peakRssMiB, tlsServer.peakRssMiB());
      await tlsServer.stop();
    }
  }
  return { scenarios, baselines, judged, peakRssMiB };
}

async function main(): Promise<void> {
  const workDir = mkdtempSync(join(tmpdir(), 'coregate-bench-'));
  try {
    let withPostgres = stores.includes('postgres');
    if (withPostgres && !(await postgresReachable(pgServerUrl))) {
      if (process.env.CI === 'true') throw new Error(`PostgreSQL at ${pgServerUrl} is unreachable (required with CI=true)`);
      step(`PostgreSQL at ${pgServerUrl} is unreachable: its scenarios are skipped (set BENCH_PG_URL)`);
      withPostgres = false;
    }
    fapi = await fapiKeys();
    mtls = mtlsMaterial(workDir);
    if (mtls === undefined) step('openssl is not available to make certificates: the mutual-TLS scenarios are skipped');
    const dataFile = writeBenchData(workDir, [fapiRealmData(fapi), ...(mtls ? [mtlsRealmData()] : [])]);
    const runs: BenchResult['stores'] = {};
    if (stores.includes('sqlite')) runs.sqlite = await benchStore('sqlite', `sqlite:${join(workDir, 'coregate.db')}`, dataFile, workDir);
    if (withPostgres) runs.postgres = await withScratchDatabase(pgServerUrl, 'coregate', (url) => benchStore('postgres', url, dataFile, workDir));
    const result: BenchResult = {
      date: new Date().toISOString().slice(0, 10),
      machine: machine(),
      settings: { connections: load.connections, seconds: load.seconds, warmupSeconds: load.warmupSeconds, smoke, workers: Number(flags.workers) },
      stores: runs,
      table: summaryTable(runs),
    };
    const files = writeReport(flags.out ?? 'bench/results', result);
    console.log('');
    printTable(result.table);
    console.log(`\n${files.json}\n${files.markdown}\n${files.svg}`);
  } finally {
    rmSync(workDir, { recursive: true, force: true });
  }
}

await main();
