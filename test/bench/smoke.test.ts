/**
 * `npm run bench -- --smoke`: the benchmark runs end to end (servers, scenarios, baselines,
 * report) in a few seconds. It checks that it works, never how fast anything is.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
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
  'retrieve DPoP',
  '401 malformed token',
  '400 invalid body',
];

test('npm run bench --smoke: every scenario on both stores, every baseline, the report files', { timeout: 240_000 }, async () => {
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
    assert.deepEqual(run.scenarios.map((scenario) => scenario.name), scenarioNames);
    for (const scenario of run.scenarios) {
      assert.ok(scenario.requests > 0, `${store} ${scenario.name} answered requests`);
      assert.equal(scenario.unexpected, 0, `${store} ${scenario.name} got only its intended answers: ${JSON.stringify(scenario.statuses)}`);
    }
    assert.ok(run.peakRssMiB > 0);
  }
  // Each store's run measures the baselines of its own ratios, just before the scenarios they judge.
  for (const store of stores) {
    const baselines = result.stores[store as 'sqlite' | 'postgres']?.baselines ?? {};
    const names = ['joseRs256PerSecond', 'joseEs256PerSecond', store === 'sqlite' ? 'sqliteTransfersPerSecond' : 'pgbenchTps', 'helloWorldPerSecond'] as const;
    for (const name of names) assert.ok((baselines[name] ?? 0) > 0, `${store}: baseline ${name} measured`);
  }
  const ratioRows = result.table.filter((row) => row.ratio !== undefined);
  assert.ok(ratioRows.length >= 6 * stores.length, 'a ratio for every path against its baseline');
  for (const row of ratioRows) assert.ok(Number.isFinite(row.ratio) && (row.ratio ?? 0) > 0, row.path);
  assert.ok(existsSync(join(out, `${date}.md`)));
  assert.match(readFileSync(join(out, `${date}.svg`), 'utf8'), /^<svg /);
  assert.match(readFileSync(join(out, `${date}.md`), 'utf8'), /\| token, RS256 \(SQLite\) \|/);
  // CONTRACT §13's paths beside their bearer figures.
  assert.match(readFileSync(join(out, `${date}.md`), 'utf8'), /\| token, private_key_jwt \+ DPoP, ES256 \(SQLite\) \| .* \| the secret-and-bearer ES256 token, /);
  assert.match(readFileSync(join(out, `${date}.md`), 'utf8'), /\| retrieve, DPoP-bound token, a proof each \(SQLite\) \| .* \| the bearer retrieve, /);
  assert.match(stdout, /ratio\s+target/, 'the summary table is printed');
});
