/**
 * `npm run bench`: coregate as deployed (`coregate serve` in its own process, default log level)
 * under autocannon from this process, on SQLite and on PostgreSQL (a scratch database created
 * and dropped), every baseline measured in the same run, ratios against the performance targets.
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
  // Smoke: long enough that the slowest scenario answers on a slow machine, short enough for CI.
  seconds: Number(flags.seconds ?? (smoke ? 1 : 10)),
  warmupSeconds: Number(flags.warmup ?? (smoke ? 0 : 2)),
};
const stores = (flags.stores ?? '').split(',').filter((store): store is StoreName => store === 'sqlite' || store === 'postgres');
const pgServerUrl = process.env.BENCH_PG_URL ?? defaultPgUrl;
const selected = (name: string) => flags.only === undefined || name.includes(flags.only);
const step = (text: string) => process.stderr.write(`${text}\n`);

async function benchStore(store: StoreName, db: string, dataFile: string, workDir: string): Promise<StoreRun> {
  step(`coregate on ${store}`);
  const server = await startCoregate({ dataFile, db, logDir: workDir, name: `coregate-${store}`, workers: Number(flags.workers), profileDir: flags.profile });
  const scenarios: Measurement[] = [];
  const run = async (scenario: Scenario, pacedRate?: number) => {
    if (!selected(scenario.name)) return undefined;
    const measured = pacedRate === undefined ? await measure(server.url, scenario, load) : await measurePaced(server.url, scenario, load, pacedRate);
    step(`  ${scenario.name}: ${measured.perSecond}/s, p50 ${measured.p50Ms} ms, p99 ${measured.p99Ms} ms${measured.unexpected ? `, ${measured.unexpected} unexpected answers ${JSON.stringify(measured.statuses)}` : ''}`);
    scenarios.push(measured);
    return measured;
  };
  try {
    const token = await obtainToken(server.url);
    await run(tokenScenario('token RS256', realms.rs256));
    await run(tokenScenario('token ES256', realms.es256));
    const spread = await run(depositScenario('term deposit initiation', token));
    if (spread && spread.perSecond > 1) await run(depositScenario('term deposit initiation at half rate', token), Math.max(1, Math.round(spread.perSecond / 2)));
    await run(depositScenario('hot account', token, { hot: true }));
    await run(loanScenario('loan installment execution', token));
    const depositId = await createDeposit(server.url, token);
    await run(retrieveScenario('retrieve', token, depositId));
    await run(malformedTokenScenario('401 malformed token', depositId));
    await run(invalidBodyScenario('400 invalid body', token));
    return { scenarios, peakRssMiB: server.peakRssMiB() };
  } finally {
    await server.stop();
  }
}

async function measureBaselines(workDir: string, withPostgres: boolean): Promise<Baselines> {
  const seconds = load.seconds;
  const baselines: Baselines = {};
  step('baselines');
  baselines.joseRs256PerSecond = await joseSigningPerSecond('RS256', seconds);
  step(`  jose RS256 signing on all cores: ${baselines.joseRs256PerSecond}/s`);
  baselines.joseEs256PerSecond = await joseSigningPerSecond('ES256', seconds);
  step(`  jose ES256 signing on all cores: ${baselines.joseEs256PerSecond}/s`);
  baselines.sqliteTransfersPerSecond = sqliteTransfersPerSecond(workDir, seconds);
  step(`  better-sqlite3 TPC-B-like transfers: ${baselines.sqliteTransfersPerSecond}/s`);
  if (withPostgres) {
    baselines.pgbenchTps = await withScratchDatabase(pgServerUrl, 'pgbench', async (url) => pgbenchTps(url, load.connections, seconds));
    step(`  pgbench TPC-B: ${baselines.pgbenchTps} tps`);
  }
  const hello = await startHelloWorld(workDir);
  try {
    baselines.helloWorldPerSecond = (await measure(hello.url, helloWorldScenario(), load)).perSecond;
    step(`  Fastify hello-world: ${baselines.helloWorldPerSecond}/s`);
  } finally {
    await hello.stop();
  }
  return baselines;
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
    const dataFile = writeBenchData(workDir);
    const baselines = await measureBaselines(workDir, withPostgres);
    const runs: BenchResult['stores'] = {};
    if (stores.includes('sqlite')) runs.sqlite = await benchStore('sqlite', `sqlite:${join(workDir, 'coregate.db')}`, dataFile, workDir);
    if (withPostgres) runs.postgres = await withScratchDatabase(pgServerUrl, 'coregate', (url) => benchStore('postgres', url, dataFile, workDir));
    const result: BenchResult = {
      date: new Date().toISOString().slice(0, 10),
      machine: machine(),
      settings: { connections: load.connections, seconds: load.seconds, warmupSeconds: load.warmupSeconds, smoke, workers: Number(flags.workers) },
      baselines,
      stores: runs,
      table: summaryTable(baselines, runs),
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
