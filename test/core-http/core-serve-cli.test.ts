/**
 * `coregate core serve` as an operator runs it: a separate process of the compiled CLI with its
 * own SQLite store and data file, reached by the HTTP adapter; SIGTERM stops it cleanly, and a
 * restart with the same data file keeps every balance (docs/sandbox.md, "The data file").
 */
// @lane process: starts coregate processes (docs/testing.md, "Lanes")
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { test } from 'node:test';
import { HttpCore } from '../../src/core-http/http-core-adapter.js';
import { findAccount } from '../../src/reference-core/storage/banking.js';
import { runCliProcess } from '../helpers/cli.js';
import { withStore } from '../helpers/stores.js';
import { tempDirectory } from '../helpers/data-files.js';
import { spawnCoregate, type CoregateProcess } from '../helpers/processes.js';
import { coreTablesOf } from '../../src/reference-core/storage/core-db.js';

/** `coregate core serve` on a fresh port, ready once its banner is out (it follows the listen). */
function startCoreProcess(db: string): Promise<CoregateProcess> {
  return spawnCoregate(['core', 'serve', '--db', db, '--data', 'demo/sandbox.json'], {
    env: { COREGATE_SHUTDOWN_GRACE_MS: '5000', COREGATE_LOG_LEVEL: 'warn' },
    readyLog: 'coregate core is ready',
  });
}

const command = {
  customerReference: 'C0001',
  productCode: 'TDFIX',
  componentCode: 'TD30-365',
  principalMinor: 500_000n,
  currency: 'USD',
  ratePercent: '4',
  numberOfDays: 30,
  maturityDate: undefined,
  valueDate: '2026-03-02',
  sourceAccount: '1000000001',
  interestAccount: '1000000002',
  description: null,
};

test('coregate core serve: a separate process serves the protocol; SIGTERM exits 0; a restart with the same data file keeps the money and the references', { timeout: 90_000 }, async () => {
  const db = `sqlite:${join(tempDirectory('coregate-core-cli-'), 'core.db')}`;
  const reference = randomUUID();
  const first = await startCoreProcess(db);
  const core = new HttpCore({ url: first.url, timeoutMs: 10_000 });
  try {
    assert.match(first.output().stdout, /coregate core is ready on http:\/\/127\.0\.0\.1:\d+/);
    const document = (await (await fetch(`${first.url}/openapi.json`)).json()) as { openapi: string };
    assert.equal(document.openapi, '3.1.0');
    const outcome = await core.constituteTermDeposit(reference, command);
    assert.equal(outcome.status, 'Executed');
  } finally {
    await core.close();
    first.child.kill('SIGTERM');
  }
  assert.deepEqual(await first.exit, { code: 0, signal: null });

  const second = await startCoreProcess(db);
  const again = new HttpCore({ url: second.url, timeoutMs: 10_000 });
  try {
    const lookup = await again.findTermDepositConstitution(reference);
    assert.equal(lookup.status, 'Executed', 'the reference survived the restart');
    // A repeat after the restart answers the original: the data file did not reset the ledger.
    assert.equal((await again.constituteTermDeposit(reference, command)).status, 'Executed');
    const deposit = lookup.status === 'Executed' ? await again.retrieveTermDeposit(lookup.result.contractNumber) : undefined;
    assert.equal(deposit?.principalMinor, 500_000n);
  } finally {
    await again.close();
    second.child.kill('SIGTERM');
  }
  assert.deepEqual(await second.exit, { code: 0, signal: null });
  const balance = await withStore(db, async (store) => (await findAccount(coreTablesOf(store.db), '1000000001'))?.balanceMinor);
  assert.equal(balance, 25_000_000n - 500_000n, 'debited once, and not reset by loading the data file again');
});

test('coregate core serve refuses a bad setting with a message naming it', async () => {
  const result = await runCliProcess(['core', 'serve', '--business-date', '2026-02-30', '--db', 'sqlite::memory:']);
  assert.notEqual(result.code, 0);
  assert.match(result.stderr, /--business-date \/ COREGATE_CORE_BUSINESS_DATE/);
});

test('coregate core serve with a data file that does not exist names its own flag and variable (COREGATE_CORE_DATA, not serve\'s COREGATE_DATA)', async () => {
  const result = await runCliProcess(['core', 'serve', '--port', '0', '--data', 'no-such-core-data.json', '--db', 'sqlite::memory:']);
  assert.notEqual(result.code, 0);
  assert.match(result.stderr, /no-such-core-data\.json: does not exist \(looked for .*\): check --data \/ COREGATE_CORE_DATA; the demo data is demo\/sandbox\.json/);
});
