/**
 * coregate's PostgreSQL driver (src/store/postgres-driver.ts, postgres-batch-run.ts,
 * postgres-named-run.ts) uses members of pg, pg-pool and pg-protocol that are not their public API
 * (a query's `_result`, a connection's `parsedStatements` and protocol writers, the pool's
 * client bookkeeping). STYLE.md allows that only with an exact pin and a test: a routine
 * `npm update` must not change how a transaction commits with no test noticing. The pins are
 * here; the behaviour behind them is tested by the store suites (postgres-batch-run,
 * postgres-named-run, statement-queue, the connection-loss tests). To upgrade: change the three
 * versions together, `npm install`, and run those suites.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  dependencies: Record<string, string>;
  overrides?: Record<string, string>;
};

const installedVersion = (name: string): string =>
  (JSON.parse(readFileSync(new URL(`../../node_modules/${name}/package.json`, import.meta.url), 'utf8')) as { version: string }).version;

const exactVersion = /^\d+\.\d+\.\d+$/;

test('pg is pinned to an exact version (its private members are used), and that version is installed', () => {
  const pin = manifest.dependencies.pg ?? '';
  assert.match(pin, exactVersion, `package.json must pin pg exactly, not "${pin}"`);
  assert.equal(installedVersion('pg'), pin);
});

test('pg-pool and pg-protocol, which pg depends on with ranges, are pinned by overrides, and those versions are installed', () => {
  for (const name of ['pg-pool', 'pg-protocol']) {
    const pin = manifest.overrides?.[name] ?? '';
    assert.match(pin, exactVersion, `package.json's overrides must pin ${name} exactly, not "${pin}"`);
    assert.equal(installedVersion(name), pin, name);
  }
});
