/**
 * End of day in the embedded reference core over each store (docs/business-days.md):
 * maturities to the cent for both day counts, a maturity day that became a holiday after the
 * constitution, overdue installments, idempotence per date (twice, in two steps, two concurrent
 * advances), never backwards, and `coregate check` (checkEverything) after it.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { checkEverything } from '../../src/cli/check.js';
import { coreRecords } from '../../src/reference-core/storage/core-records.js';
import { openReferenceCore } from '../../src/core-http/core-service.js';
import { interestExpenseAccount } from '../../src/core/end-of-day/maturity.js';
import { BusinessDateBackwards, type TermDeposit } from '../../src/core/port.js';
import type { TermDepositInitiation } from '../../src/core/term-deposits/initiation.js';
import { createLogger } from '../../src/log.js';
import type { ReferenceCore } from '../../src/reference-core/reference-core.js';
import { findAccount } from '../../src/reference-core/storage/banking.js';
import type { Store } from '../../src/store/connect.js';
import { listInstallments } from '../../src/reference-core/storage/loans.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { putCoreSetting } from '../../src/reference-core/storage/core-settings.js';
import { readDemoData, writeTempDataFile } from '../helpers/data-files.js';
import { storeTargets, withStore, embedded } from '../helpers/stores.js';
import { coreTablesOf } from '../../src/reference-core/storage/core-db.js';

const silent = createLogger({ level: 'silent' });

/** The demo data with an active ACT/365 product and a second facility whose installments the tests pay. */
function dataFile(): string {
  const data = readDemoData<Record<string, any>>();
  data.termDepositProducts.push({ productCode: 'TD365', componentCode: 'TD365-A', active: true, currencies: ['USD', 'EUR'], minAmount: 1000, maxAmount: 5_000_000, minDays: 30, maxDays: 365, dayCount: 'ACT/365' });
  data.accounts.push({ accountNumber: '1000000777', customerReference: 'C0001', currency: 'USD', balance: 500_000, status: 'Active' });
  const facility = structuredClone(data.merchandisingLoans[0]);
  facility.merchandisingLoanId = '7000000777';
  facility.installments = [
    { sequence: 1, dueDate: '2026-03-10', amount: 1000 },
    { sequence: 2, dueDate: '2026-03-10', amount: 1000, amountPaid: 400 },
    { sequence: 3, dueDate: '2026-03-10', amount: 1000, amountPaid: 1000 },
    { sequence: 4, dueDate: '2026-03-20', amount: 1000 },
  ];
  facility.approvedLimit = 100_000;
  data.merchandisingLoans.push(facility);
  return writeTempDataFile(data, 'coregate-eod-');
}

function deposit(terms: Partial<TermDepositInitiation>): TermDepositInitiation {
  return {
    customerReference: 'C0001',
    productCode: 'TDFIX',
    componentCode: 'TD30-365',
    principalMinor: 100_000n,
    currency: 'USD',
    ratePercent: '5.25',
    numberOfDays: 30,
    maturityDate: undefined,
    valueDate: '2026-03-02',
    sourceAccount: '1000000777',
    interestAccount: '1000000002',
    description: 'end of day test',
    ...terms,
  };
}

for (const target of storeTargets) {
  describe(`end of day in the reference core [${target.name}]`, { skip: target.skip }, () => {
    let created: { url: string; drop(): Promise<void> };
    let store: Store;
    let core: ReferenceCore;
    const file = dataFile();
    before(async () => {
      created = await target.create();
      // The embedded deployment's database: the API's tables too (coregate check reads its operations).
      await withStore(created.url, (api) => migrateToLatest(api));
      ({ store, core } = await openReferenceCore({ db: created.url, dataFile: file, businessDate: undefined }, silent));
    });
    after(async () => {
      await store.close();
      await created.drop();
    });
    const balance = async (account: string) => (await findAccount(coreTablesOf(store.db), account))?.balanceMinor ?? 0n;
    async function constitute(terms: Partial<TermDepositInitiation>): Promise<TermDeposit> {
      const outcome = await core.constituteTermDeposit(randomUUID(), deposit(terms));
      assert.equal(outcome.status, 'Executed', JSON.stringify(outcome, (_k, v) => (typeof v === 'bigint' ? String(v) : v)));
      return outcome.result;
    }
    async function postingsOf(reference: string) {
      return embedded(store.db)
        .selectFrom('postings')
        .innerJoin('movements', 'movements.id', 'postings.movement_id')
        .select(['postings.account_number', 'postings.amount_minor', 'movements.business_date', 'movements.kind'])
        .where('movements.reference', '=', reference)
        .orderBy('postings.line')
        .execute();
    }

    test('maturity to the cent, ACT/360 and ACT/365: principal back to the source, the retrieve\'s interest to the interest account from the interest expense account, in one balanced movement; Matured; the deposit account at zero and Closed', async () => {
      // 91 days from 2026-03-02: Monday 2026-06-01.
      const act360 = await constitute({ principalMinor: 1_234_567n, ratePercent: '4.875', numberOfDays: 91 });
      const act365 = await constitute({ productCode: 'TD365', componentCode: 'TD365-A', principalMinor: 1_234_567n, ratePercent: '4.875', numberOfDays: 91 });
      assert.equal(act360.dayCount, 'ACT/360');
      assert.equal(act365.dayCount, 'ACT/365');
      // 12 345.67 × 4.875 % × 91 / 360 = 152.1346… → 152.13; / 365 = 150.0514… → 150.05
      assert.equal(act360.expectedInterestMinor, 15_213n);
      assert.equal(act365.expectedInterestMinor, 15_005n);
      const [source, interest, expense] = await Promise.all(['1000000777', '1000000002', interestExpenseAccount('USD')].map(balance));
      const report = await core.advanceBusinessDate('2026-06-01');
      assert.equal(report.maturedDeposits, 0, 'the maturity day is open: its end of day has not run');
      assert.equal((await core.retrieveTermDeposit(act360.contractNumber))?.status, 'Active');
      const closing = await core.advanceBusinessDate('2026-06-02');
      assert.deepEqual(closing.daysClosed, ['2026-06-01']);
      assert.equal(closing.maturedDeposits, 2);
      assert.equal(await balance('1000000777'), (source ?? 0n) + 2n * 1_234_567n);
      assert.equal(await balance('1000000002'), (interest ?? 0n) + 15_213n + 15_005n);
      assert.equal(await balance(interestExpenseAccount('USD')), (expense ?? 0n) - 15_213n - 15_005n);
      for (const [contract, interestMinor] of [
        [act360, 15_213n],
        [act365, 15_005n],
      ] as const) {
        const retrieved = await core.retrieveTermDeposit(contract.contractNumber);
        assert.equal(retrieved?.status, 'Matured');
        assert.equal(retrieved?.expectedInterestMinor, interestMinor, 'the retrieve still shows the interest it paid');
        assert.equal(await balance(contract.contractNumber), 0n);
        assert.equal((await findAccount(coreTablesOf(store.db), contract.contractNumber))?.status, 'Closed');
        const lines = await postingsOf(`maturity-${contract.contractNumber}`);
        assert.deepEqual(
          lines.map((line) => [line.account_number, BigInt(line.amount_minor), line.business_date, line.kind]),
          [
            [contract.contractNumber, -1_234_567n, '2026-06-01', 'term_deposit_maturity'],
            ['1000000777', 1_234_567n, '2026-06-01', 'term_deposit_maturity'],
            [interestExpenseAccount('USD'), -interestMinor, '2026-06-01', 'term_deposit_maturity'],
            ['1000000002', interestMinor, '2026-06-01', 'term_deposit_maturity'],
          ],
        );
      }
      const report2 = await checkEverything(store, coreRecords(coreTablesOf(store.db)), 300, { masterKey: undefined });
      assert.equal(report2.ledger.ok, true, JSON.stringify(report2.ledger));
    });

    test('installments due on or before a closed day and not fully paid are Overdue (with one event each); a paid one is not; paying an overdue one in full makes it Paid', async () => {
      const statuses = async () => (await listInstallments(coreTablesOf(store.db), '7000000777')).map((installment) => installment.status);
      // The previous test closed every business day to 2026-06-01: all of 7000000777's dates passed.
      assert.deepEqual(await statuses(), ['Overdue', 'Overdue', 'Paid', 'Overdue']);
      const events = (await core.eventsAfter(0, 1000)).filter((event) => event.type === 'loanInstallment.overdue' && event.data.loanId === '7000000777');
      assert.deepEqual(
        events.map((event) => [event.data.sequence, event.businessDate]),
        [
          [1, '2026-03-10'],
          [2, '2026-03-10'],
          [4, '2026-03-20'],
        ],
      );
      assert.deepEqual(events[1]?.data.outstanding, { amount: '600.00', currency: 'USD' });
      const paid = await core.executeLoanInstallment(randomUUID(), {
        loanId: '7000000777',
        sequence: 2,
        loanType: 'CRDE',
        parameterType: 'DocumentaryRemittance',
        maturityDate: undefined,
        amountMinor: undefined,
        currency: undefined,
        paymentAccount: '1000000777',
        expenseAccount: '1000000777',
      });
      assert.equal(paid.status, 'Executed');
      assert.deepEqual(await statuses(), ['Overdue', 'Paid', 'Paid', 'Overdue']);
    });

    test('idempotent per date — advancing to the same date again, or in two steps, repays nothing twice', async () => {
      const contract = await constitute({ valueDate: '2026-06-02', numberOfDays: 30 }); // 2026-07-02, a Thursday
      const before = await balance('1000000777');
      const first = await core.advanceBusinessDate('2026-06-20');
      const again = await core.advanceBusinessDate('2026-06-20');
      assert.deepEqual(again, { from: '2026-06-20', to: '2026-06-20', daysClosed: [], maturedDeposits: 0, overdueInstallments: 0 });
      assert.equal(first.daysClosed.at(-1), '2026-06-19');
      const second = await core.advanceBusinessDate('2026-07-03');
      assert.equal(second.maturedDeposits, 1);
      assert.equal(second.daysClosed[0], '2026-06-22', 'the next business day after the first step\'s last');
      assert.equal((await core.advanceBusinessDate('2026-07-03')).maturedDeposits, 0);
      assert.equal(await balance('1000000777'), before + 100_000n, 'the principal came back once');
      const matured = (await core.eventsAfter(0, 1000)).filter((event) => event.type === 'termDeposit.matured' && event.data.contractNumber === contract.contractNumber);
      assert.equal(matured.length, 1, 'one event per maturity');
      const days = await embedded(store.db).selectFrom('core_business_days').select('business_date').execute();
      assert.equal(new Set(days.map((day) => day.business_date)).size, days.length);
    });

    test('two concurrent advances over one store close each day once: every deposit repaid exactly once', async () => {
      const contracts = [];
      for (let index = 0; index < 6; index += 1) contracts.push(await constitute({ valueDate: '2026-07-03', numberOfDays: 30 + index }));
      const before = await balance('1000000777');
      const other = await openReferenceCore({ db: created.url, dataFile: undefined, businessDate: undefined }, silent);
      try {
        const reports = await Promise.all([core.advanceBusinessDate('2026-08-31'), other.core.advanceBusinessDate('2026-08-31')]);
        assert.equal(reports[0].maturedDeposits + reports[1].maturedDeposits, 6);
        const closed = [...reports[0].daysClosed, ...reports[1].daysClosed];
        assert.equal(new Set(closed).size, closed.length, 'no day closed by both');
      } finally {
        await other.store.close();
      }
      assert.equal(await balance('1000000777'), before + 6n * 100_000n);
      for (const contract of contracts) assert.equal(await balance(contract.contractNumber), 0n);
      assert.equal(await core.businessDate(), '2026-08-31');
    });

    test('a maturity day that became a holiday after the constitution matures at the next business day\'s end of day', async () => {
      const contract = await constitute({ valueDate: '2026-08-31', numberOfDays: 31 }); // Thursday 2026-10-01
      assert.equal(contract.maturityDate, '2026-10-01');
      await putCoreSetting(coreTablesOf(store.db), 'core.calendar', JSON.stringify({ weekend: ['SATURDAY', 'SUNDAY'], holidays: ['2026-04-03', '2026-05-01', '2026-12-25', '2026-10-01'] }));
      const reopened = await openReferenceCore({ db: created.url, dataFile: undefined, businessDate: undefined }, silent);
      try {
        const report = await reopened.core.advanceBusinessDate('2026-10-03');
        assert.equal(report.daysClosed.includes('2026-10-01'), false, 'a holiday has no end of day');
        assert.equal(report.daysClosed.at(-1), '2026-10-02');
        const events = (await reopened.core.eventsAfter(0, 1000)).filter((event) => event.data.contractNumber === contract.contractNumber);
        assert.deepEqual(events.map((event) => event.businessDate), ['2026-10-02']);
        assert.equal((await reopened.core.retrieveTermDeposit(contract.contractNumber))?.status, 'Matured');
      } finally {
        await reopened.store.close();
      }
    });

    test('the business date never goes backwards: BusinessDateBackwards names both dates and nothing changes', async () => {
      const current = await core.businessDate();
      await assert.rejects(core.advanceBusinessDate('2026-03-02'), (error: unknown) => error instanceof BusinessDateBackwards && error.message.includes(current) && error.message.includes('2026-03-02'));
      assert.equal(await core.businessDate(), current);
      await assert.rejects(core.advanceBusinessDate('2026-02-30'), TypeError);
    });

    test('coregate check passes after the advances (matured deposits at zero, active ones holding their principal)', async () => {
      const report = await checkEverything(store, coreRecords(coreTablesOf(store.db)), 300, { masterKey: undefined });
      assert.equal(report.ledger.ok, true, JSON.stringify(report.ledger));
      assert.deepEqual(report.ledger.termDepositMismatches, []);
    });
  });
}
