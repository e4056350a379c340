/**
 * `npm run bench`: throughput and latency of the token endpoint and of term deposit initiation
 * against a started server on loopback, on SQLite (and PostgreSQL with BENCH_PG_URL, in a scratch
 * database created and dropped on that server). Bounded:
 * each scenario runs BENCH_SECONDS (default 5) at BENCH_CONCURRENCY (default 16) connections.
 * Numbers are measurements, never assertions: tests do not time anything.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import pg from 'pg';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { resolveConfig } from '../src/config.js';
import { startCoregate } from '../src/main.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 16);
const dataFile = new URL('../demo/sandbox.json', import.meta.url).pathname;
const treasury = { clientId: 'treasury-app', secret: 'treasury-app-secret-change-me-0123456789abcdef' };

interface Result {
  scenario: string;
  store: string;
  requests: number;
  errors: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
}

async function drive(scenario: string, store: string, request: (i: number) => Promise<boolean>): Promise<Result> {
  const latencies: number[] = [];
  let errors = 0;
  let counter = 0;
  const deadline = performance.now() + seconds * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) {
        const t0 = performance.now();
        const ok = await request(counter++).catch(() => false);
        latencies.push(performance.now() - t0);
        if (!ok) errors += 1;
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q: number) => Number((latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0).toFixed(2));
  return { scenario, store, requests: latencies.length, errors, perSecond: Math.round(latencies.length / elapsed), p50Ms: at(0.5), p99Ms: at(0.99) };
}

async function benchStore(store: string, db: string): Promise<Result[]> {
  const silent = new Writable({ write: (_chunk, _encoding, callback) => callback() });
  const coregate = await startCoregate(resolveConfig({ port: '0', host: '127.0.0.1', db, data: dataFile, logLevel: 'warn', duplicateWindow: '0' }, {}), {
    log: { destination: silent, level: 'warn' },
  });
  const tokenUrl = `${coregate.url}/realms/sandbox/protocol/openid-connect/token`;
  const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: treasury.clientId, client_secret: treasury.secret }).toString();
  const getToken = async () => {
    const response = await fetch(tokenUrl, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form });
    return response.ok ? ((await response.json()) as { access_token: string }).access_token : undefined;
  };
  const results: Result[] = [];
  try {
    results.push(await drive('token endpoint (RS256)', store, async () => (await getToken()) !== undefined));
    const token = await getToken();
    results.push(
      await drive('term deposit initiation', store, async (i) => {
        const response = await fetch(`${coregate.url}/v1/term-deposits/initiate`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'x-correlation-id': `bench-${store}-${i}` },
          body: JSON.stringify({
            customerReference: 'C0001',
            termDepositProduct: { productCode: 'TDFIX', componentCode: 'TD30-365' },
            principalAmount: { amountValue: 1000, amountCurrency: { currencycode: 'USD' }, amountType: 'Principal' },
            interestRate: { rateValue: 5.25, rateType: 'Nominal' },
            termDepositPeriod: { numberOfDays: 90 },
            valueDate: '2026-03-02',
            sourceAccount: { accountIdentification: '1000000001', accountType: 'DebitAccount' },
            interestSettlementAccount: { accountIdentification: '1000000002', accountType: 'CreditAccount' },
          }),
        });
        await response.arrayBuffer();
        // Once the source account is drained, 422 is the correct answer; it still measures the path.
        return response.status === 200 || response.status === 422;
      }),
    );
  } finally {
    await coregate.close();
  }
  return results;
}

/** BENCH_PG_URL names a server to use, never a database to fill: the bench works in a scratch one. */
async function withScratchDatabase<T>(adminUrl: string, work: (url: string) => Promise<T>): Promise<T> {
  const name = `coregate_bench_${randomBytes(6).toString('hex')}`;
  const admin = async (text: string) => {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    try {
      await client.query(text);
    } finally {
      await client.end();
    }
  };
  await admin(`create database ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  try {
    return await work(url.toString());
  } finally {
    await admin(`drop database if exists ${name} with (force)`);
  }
}

const dir = mkdtempSync(join(tmpdir(), 'coregate-bench-'));
const results: Result[] = [];
try {
  results.push(...(await benchStore('sqlite', `sqlite:${join(dir, 'bench.db')}`)));
  if (process.env.BENCH_PG_URL) results.push(...(await withScratchDatabase(process.env.BENCH_PG_URL, (url) => benchStore('postgres', url))));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
console.table(results);
console.log(`rss ${Math.round(process.memoryUsage().rss / 1024 / 1024)} MiB; ${seconds} s per scenario, ${concurrency} concurrent connections, client and server in one process`);
