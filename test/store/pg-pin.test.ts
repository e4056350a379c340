/**
 * coregate's PostgreSQL driver (src/store/engine/postgres-driver.ts, postgres-batch-run.ts,
 * postgres-named-run.ts) uses members of pg, pg-pool and pg-protocol that are not their public API
 * (a query's `_result`, a connection's `parsedStatements` and protocol writers, the pool's
 * client bookkeeping). docs/architecture.md, "How the code is written", allows that only with an
 * exact pin and a test: a routine
 * `npm update` must not change how a transaction commits with no test noticing. The pins are
 * here; the behaviour behind them is tested by the store suites (postgres-batch-run,
 * postgres-named-run, statement-queue, the connection-loss tests). To upgrade: change the three
 * versions together, `npm install`, and run those suites.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { test } from 'node:test';
import pg from 'pg';
import { repoRoot } from '../helpers/repo-root.js';
import { join } from 'node:path';

const manifest = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  overrides?: Record<string, string>;
};

const installedVersion = (name: string): string =>
  (JSON.parse(readFileSync(join(repoRoot, `node_modules/${name}/package.json`), 'utf8')) as { version: string }).version;

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

/** Each private member the driver relies on, with what it is used for: a test names the one an upgrade changed. */
test('the private members of pg the driver relies on are there, each named', () => {
  const require = createRequire(import.meta.url);
  const query = new pg.Query({ text: 'select 1' }) as unknown as Record<string, unknown>;
  const result = query._result as Record<string, unknown> | undefined;
  assert.ok(result !== undefined && typeof result === 'object', 'pg.Query#_result (the rows a named run builds: postgres-named-run.ts, postgres-batch-run.ts)');
  assert.ok(Array.isArray(result._parsers) || result._parsers === undefined, 'pg.Result#_parsers (the column parsers a row shape reuses: postgres-named-run.ts)');
  assert.equal(query._canceledDueToError, false, 'pg.Query#_canceledDueToError (a row that fails to parse: postgres-named-run.ts)');
  const querySource = readFileSync(require.resolve('pg/lib/query.js'), 'utf8');
  assert.match(querySource, /this\._accumulateRows\b/, 'pg.Query#_accumulateRows (rows kept for the callback: postgres-named-run.ts)');
  const client = new pg.Client({ pipeline: true } as pg.ClientConfig) as unknown as { pipeline: unknown; connection: Record<string, unknown> & { stream: Record<string, unknown> } };
  assert.equal(client.pipeline, true, 'pg.Client pipeline mode (postgres-driver.ts)');
  assert.deepEqual(client.connection.parsedStatements, {}, 'pg.Connection#parsedStatements (which named statements a connection has parsed: postgres-driver.ts)');
  assert.equal(typeof client.connection.stream.cork, 'function', 'pg.Connection#stream.cork (one socket write per batch: postgres-driver.ts)');
  assert.equal(typeof (require('pg/lib/utils') as { prepareValue?: unknown }).prepareValue, 'function', 'pg/lib/utils prepareValue (a batch binds its values as pg would: postgres-batch-run.ts)');
});
