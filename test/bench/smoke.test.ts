/**
 * `npm run bench -- --smoke`: the benchmark runs end to end (servers, scenarios, baselines,
 * report) in a few seconds. It checks that it works, never how fast anything is.
 */
// @lane process: starts coregate processes (docs/testing.md, "Lanes")
// @starts-early: among the slowest files of a quiet run
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { promisify } from 'node:util';
import type { BenchResult } from '../../bench/report.js';
import { postgresAdminUrl } from '../helpers/stores.js';
import { repoRoot } from '../helpers/repo-root.js';

const out = mkdtempSync(join(tmpdir(), 'coregate-bench-smoke-'));
after(() => rmSync(out, { recursive: true, force: true }));

const scenarioNames = [
  'token RS256',
  'token ES256',
  'token private_key_jwt + DPoP',
  'term deposit initiation',
  'term deposit initiation at half rate',
  'hot account',
  'loan installment execution',
  'retrieve',
  '401 malformed token',
  '400 invalid body',
  'retrieve DPoP',
  '401 forged signature, replayed',
  '401 forged signature, each unique',
  '403 scope',
  '404 unknown route',
  '415 text/plain, audited',
  '413 body over 64 KiB, audited',
];
/** Issue 42's mutual-TLS paths, on a second server with TLS and client certificates (bench/mtls.ts): made with openssl. */
const tlsScenarioNames = ['retrieve over TLS, bearer', 'retrieve mTLS-bound'];
const withOpenssl = (() => {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

// 123 s alone on the 2-core machine, 250 s with two whole runs at once: the time-out only catches a hang.
test('npm run bench --smoke: every scenario on both stores, every baseline, the report files', { timeout: 600_000 }, async () => {
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'bench/run.ts', '--smoke', '--out', out], {
    cwd: repoRoot,
    maxBuffer: 16 * 1024 * 1024,
    // The PostgreSQL the other suites use.
    env: { ...process.env, BENCH_PG_URL: postgresAdminUrl },
  });
  const date = new Date().toISOString().slice(0, 10);
  const result = JSON.parse(readFileSync(join(out, `${date}.json`), 'utf8')) as BenchResult;
  const stores = process.env.CI === 'true' || result.stores.postgres ? ['sqlite', 'postgres'] : ['sqlite'];
  for (const store of stores) {
    const run = result.stores[store as 'sqlite' | 'postgres'];
    assert.ok(run, `${store} was benched`);
    assert.deepEqual(run.scenarios.map((scenario) => scenario.name), [...scenarioNames, ...(withOpenssl ? tlsScenarioNames : [])]);
    // Issue 42's unit, measured in the same run around the sender-constrained paths it judges.
    assert.ok(run.baselines.filter((baseline) => baseline.name === 'one ES256 verification (node:crypto, one core)' && (baseline.cpuUsPerOperation ?? 0) > 0).length >= 2, `${store}: the verification measured`);
    for (const scenario of run.scenarios) {
      assert.ok(scenario.requests > 0, `${store} ${scenario.name} answered requests`);
      assert.equal(scenario.unexpected, 0, `${store} ${scenario.name} got only its intended answers: ${JSON.stringify(scenario.statuses)}`);
    }
    assert.ok(run.peakRssMiB > 0);
  }
  // Each store's run measures the baselines of its own ratios just before and just after each path they judge.
  for (const store of stores) {
    const run = result.stores[store as 'sqlite' | 'postgres'];
    const depositBaseline = store === 'sqlite' ? 'better-sqlite3 TPC-B-like (WAL, FULL)' : 'pgbench TPC-B, same connections';
    const expected: Array<[string, string]> = [
      ['token RS256', 'jose RS256 signing on all cores'],
      ['token ES256', 'jose ES256 signing on all cores'],
      ['term deposit initiation', depositBaseline],
      ['retrieve', 'Fastify hello-world'],
      ['401 malformed token', 'Fastify hello-world'],
      ['400 invalid body', 'Fastify hello-world'],
    ];
    assert.deepEqual(run?.judged.map((judged) => [judged.scenario, judged.baseline]), expected, `${store}: the judged paths and their baselines`);
    for (const judged of run?.judged ?? []) assert.ok(judged.before > 0 && judged.after > 0, `${store} ${judged.scenario}: ${judged.baseline} measured before and after`);
    // hello-world around each of its three paths: four measurements, shared between neighbours.
    assert.equal(run?.baselines.filter((baseline) => baseline.name === 'Fastify hello-world').length, 4);
    if (process.platform === 'linux') {
      // Beside every closed-loop throughput, the CPU a request cost the server (and PostgreSQL).
      for (const scenario of run?.scenarios ?? []) {
        if (scenario.name.endsWith('at half rate')) continue;
        assert.ok(scenario.cpu && scenario.cpu.serverUsPerRequest > 0, `${store} ${scenario.name}: the server's CPU a request`);
        if (store === 'postgres') assert.ok(scenario.cpu.postgresUsPerRequest !== undefined, `${store} ${scenario.name}: PostgreSQL's CPU a request`);
      }
    }
  }
  const ratioRows = result.table.filter((row) => row.ratio !== undefined);
  assert.ok(ratioRows.length >= 6 * stores.length, 'a ratio for every path against its baseline');
  for (const row of ratioRows) assert.ok(Number.isFinite(row.ratio) && (row.ratio ?? 0) > 0, row.path);
  assert.ok(existsSync(join(out, `${date}.md`)));
  assert.match(readFileSync(join(out, `${date}.svg`), 'utf8'), /^<svg /);
  assert.match(readFileSync(join(out, `${date}.md`), 'utf8'), /\| token, RS256 \(SQLite\) \|/);
  // FAPI 2.0's paths (docs/auth.md), each judged by its CPU a request against its bearer path's plus N verifications (issue 42).
  const report = readFileSync(join(out, `${date}.md`), 'utf8');
  assert.match(report, /\| token, private_key_jwt \+ DPoP, ES256 \(SQLite\) \| .* \| the secret-and-bearer ES256 token [\d.,]+ µs \+ 3 × [\d.,]+ µs = [\d.,]+ µs .* \| CPU ≤ the secret-and-bearer ES256 token \+ 3 verifications \| /);
  assert.match(report, /\| retrieve, DPoP-bound token, a proof each \(SQLite\) \| .* \| the bearer retrieve [\d.,]+ µs \+ 2 × [\d.,]+ µs = [\d.,]+ µs .* \| CPU ≤ the bearer retrieve \+ 2 verifications \| /);
  if (withOpenssl) assert.match(report, /\| retrieve, mTLS-bound token, TLS kept per connection \(SQLite\) \| .* \| the bearer retrieve [\d.,]+ µs \+ 1 × [\d.,]+ µs = [\d.,]+ µs .* \| CPU ≤ the bearer retrieve \+ 1 verification \| /);
  assert.match(stdout, /ratio\s+target/, 'the summary table is printed');
  // Each ratio to hello-world is given with its range against the baseline before and after, and what bounded the run.
  assert.match(readFileSync(join(out, `${date}.md`), 'utf8'), /\| retrieve, reused token \(SQLite\) \| .* µs \| Fastify hello-world, .* before, .* after \| [\d.]+ % \([\d.]+ %–[\d.]+ %\) \| ≥ 40 % \| (met|\*\*missed\*\*) \| [a-z'’ ]+/);
  assert.match(readFileSync(join(out, `${date}.md`), 'utf8'), /\| 403 scope \(SQLite\) \| .* \| the retrieve's CPU, .* µs a request \|/);
});
