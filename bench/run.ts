/**
 * `npm run bench`: coregate as deployed (`coregate serve` in its own process, default log level)
 * under autocannon from this process, on SQLite and on PostgreSQL (a scratch database created
 * and dropped), every baseline measured in the same run, ratios against the performance targets.
 * Each store's baselines are measured just before the scenarios they judge (jose before the
 * tokens, TPC-B or pgbench before the deposits, hello-world before the retrieves, 401s and 400s):
 * this VM's speed drifts within minutes, and a baseline taken at the start of a 9-minute run
 * compared paths measured under another speed.
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
import { joseSigningPerSecond, pgbenchTps, sqliteTransfersPerSecond } from './baselines.js';
import { realms, writeBenchData } from './data.js';
import { dpopRetrieveScenario, fapiKeys, fapiRealmData, fapiToken, fapiTokenScenario, type FapiKeys } from './fapi.js';
import { measure, type LoadOptions, type Measurement, type Scenario } from './load.js';
import { measurePaced } from './paced-load.js';
import { startCoregate, startHelloWorld } from './processes.js';
import { machine, printTable, summaryTable, writeReport, type Baselines, type BenchResult, type StoreName, type StoreRun } from './report.js';
import {
  createDeposit,
  depositScenario,
  helloWorldScenario,
  invalidBodyScenario,
  loanScenario,
  malformedTokenScenario,
  obtainToken,
  retrieveScenario,
  tokenScenario,
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

async function benchStore(store: StoreName, db: string, dataFile: string, workDir: string): Promise<StoreRun> {
  step(`coregate on ${store}`);
  const server = await startCoregate({ dataFile, db, logDir: workDir, name: `coregate-${store}`, workers: Number(flags.workers), profileDir: flags.profile });
  const scenarios: Measurement[] = [];
  const baselines: Baselines = {};
  const run = async (scenario: Scenario, pacedRate?: number) => {
    if (!selected(scenario.name)) return undefined;
    const measured = pacedRate === undefined ? await measure(server.url, scenario, load) : await measurePaced(server.url, scenario, load, pacedRate);
    step(`  ${scenario.name}: ${measured.perSecond}/s, p50 ${measured.p50Ms} ms, p99 ${measured.p99Ms} ms${measured.unexpected ? `, ${measured.unexpected} unexpected answers ${JSON.stringify(measured.statuses)}` : ''}`);
    scenarios.push(measured);
    return measured;
  };
  const baseline = async (names: readonly string[], measureIt: () => Promise<number> | number) => {
    if (!names.some(selected)) return undefined;
    return measureIt();
  };
  try {
    const token = await obtainToken(server.url);
    baselines.joseRs256PerSecond = await baseline(['token RS256'], () => logged('jose RS256 signing on all cores', joseSigningPerSecond('RS256', baselineSeconds)));
    await run(tokenScenario('token RS256', realms.rs256));
    baselines.joseEs256PerSecond = await baseline(['token ES256'], () => logged('jose ES256 signing on all cores', joseSigningPerSecond('ES256', baselineSeconds)));
    await run(tokenScenario('token ES256', realms.es256));
    // CONTRACT §13: private_key_jwt and a DPoP proof per request (their pools made just before).
    // Smoke: its requests and warm-up, with room (autocannon builds a few requests ahead).
    const fapiCount = (perSecond: number) => (load.requests !== undefined ? 2 * load.requests + 4 * load.connections : Math.ceil((load.seconds + load.warmupSeconds) * perSecond) + 100);
    if (selected('token private_key_jwt + DPoP')) await run(await fapiTokenScenario('token private_key_jwt + DPoP', server.url, fapi, fapiCount(4_000)));
    if (store === 'sqlite') {
      baselines.sqliteTransfersPerSecond = await baseline(['term deposit initiation'], () => logged('better-sqlite3 TPC-B-like transfers', sqliteTransfersPerSecond(workDir, baselineSeconds)));
    } else {
      baselines.pgbenchTps = await baseline(['term deposit initiation'], () =>
        logged('pgbench TPC-B (tps)', withScratchDatabase(pgServerUrl, 'pgbench', async (url) => pgbenchTps(url, load.connections, baselineSeconds))),
      );
    }
    const spread = await run(depositScenario('term deposit initiation', token));
    if (spread && spread.perSecond > 1) await run(depositScenario('term deposit initiation at half rate', token), Math.max(1, Math.round(spread.perSecond / 2)));
    await run(depositScenario('hot account', token, { hot: true }));
    await run(loanScenario('loan installment execution', token));
    const depositId = await createDeposit(server.url, token);
    baselines.helloWorldPerSecond = await baseline(['retrieve', '401 malformed token', '400 invalid body'], () => logged('Fastify hello-world', helloWorldPerSecond(workDir)));
    await run(retrieveScenario('retrieve', token, depositId));
    if (selected('retrieve DPoP')) {
      const dpopToken = await fapiToken(server.url, fapi);
      await run(await dpopRetrieveScenario('retrieve DPoP', server.url, fapi, dpopToken, depositId, fapiCount(8_000)));
    }
    await run(malformedTokenScenario('401 malformed token', depositId));
    await run(invalidBodyScenario('400 invalid body', token));
    return { scenarios, baselines, peakRssMiB: server.peakRssMiB() };
  } finally {
    await server.stop();
  }
}

async function logged(name: string, measuring: Promise<number> | number): Promise<number> {
  const value = await measuring;
  step(`  baseline, ${name}: ${value}/s`);
  return value;
}

/** Fastify's hello-world in its own process, under the same load as the scenarios. */
async function helloWorldPerSecond(workDir: string): Promise<number> {
  const hello = await startHelloWorld(workDir);
  try {
    return (await measure(hello.url, helloWorldScenario(), load)).perSecond;
  } finally {
    await hello.stop();
  }
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
    const dataFile = writeBenchData(workDir, [fapiRealmData(fapi)]);
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
