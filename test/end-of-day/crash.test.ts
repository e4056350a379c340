/**
 * End of day resumes after a crash without a double repayment (docs/business-days.md, "Idempotence
 * and crashes"), with real processes: `coregate core advance` over many days with many maturing
 * deposits, killed with SIGKILL in the middle of a day (COREGATE_TEST_EOD_DAY_DELAY_MS, a test-only
 * hook, holds each day's transaction open), then run again; every deposit is repaid exactly once
 * and `coregate check` passes. Also the CLI against a remote core (--core-url) and its errors.
 */
// @lane process: starts coregate processes (docs/testing.md, "Lanes")
// @starts-early: among the slowest files of a quiet run
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { openReferenceCore } from '../../src/core-http/core-service.js';
import { createLogger } from '../../src/log.js';
import { findAccount } from '../../src/reference-core/storage/banking.js';
import { runCli } from '../helpers/cli.js';
import { startTestCoreServer, type TestCoreServer } from '../helpers/core-server.js';
import { readDemoData, writeTempDataFile } from '../helpers/data-files.js';
import { cliPath, repoRoot } from '../helpers/server.js';
import { embedded, storeTargets, withDb, withStore } from '../helpers/stores.js';
import { waitFor } from '../helpers/wait.js';
import { coreTablesOf } from '../../src/reference-core/storage/core-db.js';

const silent = createLogger({ level: 'silent' });
const deposits = 40;
const source = '1000000888';
const interestAccount = '1000000889';

function dataFile(): string {
  const data = readDemoData<Record<string, any>>();
  data.accounts.push({ accountNumber: source, customerReference: 'C0001', currency: 'USD', balance: 4_000_000, status: 'Active' });
  data.accounts.push({ accountNumber: interestAccount, customerReference: 'C0001', currency: 'USD', balance: 0, status: 'Active' });
  return writeTempDataFile(data, 'coregate-eod-crash-');
}

for (const target of storeTargets) {
  describe(`end of day killed with SIGKILL mid-way resumes without a double repayment [${target.name}]`, { skip: target.skip }, () => {
    let created: { url: string; drop(): Promise<void> };
    const expected = new Map<string, { principal: bigint; interest: bigint }>();
    before(async () => {
      created = await target.create();
      const { store, core } = await openReferenceCore({ db: created.url, dataFile: dataFile(), businessDate: undefined }, silent);
      try {
        // 40 deposits maturing on 40 different days from 2026-04-01 on (30 + i days, rolled to business days).
        for (let index = 0; index < deposits; index += 1) {
          const outcome = await core.constituteTermDeposit(randomUUID(), {
            customerReference: 'C0001',
            productCode: 'TDFIX',
            componentCode: 'TD30-365',
            principalMinor: 100_000n + BigInt(index) * 1_013n,
            currency: 'USD',
            ratePercent: '3.7',
            numberOfDays: 30 + index,
            maturityDate: undefined,
            valueDate: '2026-03-02',
            sourceAccount: source,
            interestAccount,
            description: `crash test ${index}`,
          });
          assert.equal(outcome.status, 'Executed');
          if (outcome.status === 'Executed') expected.set(outcome.result.contractNumber, { principal: outcome.result.principalMinor, interest: outcome.result.expectedInterestMinor });
        }
      } finally {
        await store.close();
      }
    });
    after(async () => {
      await created?.drop();
    });

    test('killed during a day, run again: each deposit repaid exactly once, the balances to the cent, coregate check passes', async () => {
      const closedDays = () => withDb(created.url, async (db) => (await db.selectFrom('core_business_days').select('business_date').execute()).length);
      const child = spawn(process.execPath, [cliPath, 'core', 'advance', '--to', '2026-06-01', '--db', created.url, '--json'], {
        cwd: repoRoot,
        env: { ...process.env, COREGATE_TEST_EOD_DAY_DELAY_MS: '300' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (chunk) => (stderr += String(chunk)));
      const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
      // Some days of April committed (the maturities begin on 2026-04-01): kill inside a later day's transaction.
      // A wait that stays: the end of day runs in a spawned process (killed mid-way is the point), so
      // no loop of this test can drive it; the poll reads its committed days and ends at the first.
      await waitFor('end of day to close days in April', async () => {
        if (child.exitCode !== null) throw new Error(`the advance ended before it was killed: ${stderr}`);
        const count = await withDb(created.url, async (db) => (await db.selectFrom('core_business_days').select('business_date').where('business_date', '>=', '2026-04-03').execute()).length);
        return count >= 1 ? count : undefined;
      }, 60_000);
      child.kill('SIGKILL');
      assert.equal((await exit).signal, 'SIGKILL');
      const closedBeforeResume = await closedDays();
      const maturedBeforeResume = await withDb(created.url, async (db) => (await db.selectFrom('term_deposits').select('contract_number').where('status', '=', 'Matured').execute()).length);
      assert.ok(maturedBeforeResume >= 1 && maturedBeforeResume < deposits, `killed mid-way: ${maturedBeforeResume} of ${deposits} matured`);

      const resumed = await runCli(['core', 'advance', '--to', '2026-06-01', '--db', created.url, '--json'], { timeoutMs: 120_000 });
      assert.equal(resumed.code, 0, resumed.stderr);
      const report = JSON.parse(resumed.stdout) as { daysClosed: string[]; maturedDeposits: number; to: string };
      assert.equal(report.to, '2026-06-01');
      assert.equal(report.maturedDeposits, deposits - maturedBeforeResume, 'the rerun matures only what the killed run did not');
      assert.equal((await closedDays()) - closedBeforeResume, report.daysClosed.length);

      await withStore(created.url, async (store) => {
        const db = embedded(store.db);
        const matured = await db.selectFrom('term_deposits').select(['contract_number', 'status']).execute();
        assert.equal(matured.filter((row) => row.status === 'Matured').length, deposits);
        const movements = await db.selectFrom('movements').select('reference').where('kind', '=', 'term_deposit_maturity').execute();
        assert.equal(movements.length, deposits, 'one maturity movement per deposit');
        assert.equal(new Set(movements.map((row) => row.reference)).size, deposits, 'never two for one deposit');
        const events = await db.selectFrom('core_events').select('id').where('type', '=', 'termDeposit.matured').execute();
        assert.equal(events.length, deposits, 'one event per maturity: the killed day\'s events rolled back with it');
        let interest = 0n;
        for (const [contractNumber, amounts] of expected) {
          assert.equal((await findAccount(coreTablesOf(store.db), contractNumber))?.balanceMinor, 0n);
          interest += amounts.interest;
        }
        assert.equal((await findAccount(coreTablesOf(store.db), source))?.balanceMinor, 400_000_000n, 'every principal back, once');
        assert.equal((await findAccount(coreTablesOf(store.db), interestAccount))?.balanceMinor, interest, 'every interest to the cent, once');
      });

      const check = await runCli(['check', '--db', created.url, '--json'], { timeoutMs: 60_000 });
      assert.equal(check.code, 0, check.stdout + check.stderr);
      assert.equal(JSON.parse(check.stdout).ledger.ok, true);
    });
  });
}

describe('coregate core advance / core date against a remote core (--core-url)', { skip: storeTargets[0]?.skip }, () => {
  let created: { url: string; drop(): Promise<void> } | undefined;
  let core: TestCoreServer | undefined;
  before(async () => {
    created = await storeTargets[0]?.create();
    if (!created) throw new Error('no store');
    core = await startTestCoreServer({ db: created.url });
  });
  after(async () => {
    await core?.close();
    await created?.drop();
  });

  test('date, advance (JSON and text), backwards refused with exit 2 naming both dates, a bad date refused before any call', async () => {
    const url = (core as TestCoreServer).url;
    const date = await runCli(['core', 'date', '--core-url', url]);
    assert.equal(date.code, 0, date.stderr);
    assert.equal(date.stdout.trim(), '2026-03-02');
    const advanced = await runCli(['core', 'advance', '--to', '2026-04-02', '--core-url', url, '--json']);
    assert.equal(advanced.code, 0, advanced.stderr);
    const report = JSON.parse(advanced.stdout);
    assert.equal(report.from, '2026-03-02');
    assert.equal(report.daysClosed.length, 23, 'the business days 2026-03-02 … 2026-04-01');
    assert.equal(report.overdueInstallments, 1, 'the demo facility\'s installment due 2026-03-31');
    const text = await runCli(['core', 'advance', '--to', '2026-04-07', '--core-url', url]);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /Business date 2026-04-02 → 2026-04-07\.\nEnd of day ran for 2 business days \(2026-04-02 … 2026-04-06\)\.\nTerm deposits matured: 0\. Installments overdue: 0\./);
    const backwards = await runCli(['core', 'advance', '--to', '2026-04-01', '--core-url', url]);
    assert.equal(backwards.code, 2);
    assert.match(backwards.stderr, /2026-04-07/);
    assert.match(backwards.stderr, /2026-04-01/);
    const invalid = await runCli(['core', 'advance', '--to', '2026-02-30', '--core-url', url]);
    assert.equal(invalid.code, 2);
    assert.match(invalid.stderr, /--to must be a YYYY-MM-DD calendar date/);
    assert.equal((await runCli(['core', 'date', '--core-url', url, '--json'])).stdout.includes('"businessDate": "2026-04-07"'), true);
  });
});
