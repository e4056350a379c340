/**
 * The reference core against numbers worked out by hand (docs/term-deposits.md "Decisions",
 * docs/loans.md "The execution", docs/business-days.md), over the demo data (demo/sandbox.json:
 * business date Monday 2026-03-02, holidays 2026-04-03, 2026-05-01, 2026-12-25). The kit's money
 * rules (src/conformance/money-and-date-rules.ts) compute their expectations with the reference
 * core's own functions — right for checking a bank's core, blind to a mistake in those functions
 * here — so these tests pin the reference core to the written numbers: 1000.00 at 5.25 % for 91 days
 * is 13.27, a maturity on Good Friday rolls to Monday, 12,345.67 pays 18.52 + 25.00 + 6.96. The
 * tests run in order on one core: each starts from what the one before left.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { errorCatalogue as E, type ErrorEntry } from '../../src/core/error-catalogue.js';
import type { LoanInstallmentExecution } from '../../src/core/loans/execution-request.js';
import { BusinessDateBackwards, hasDataLoad, hasRecords, type CoreBankingPort, type CoreLookup, type CoreOutcome, type LoanInstallmentResult, type TermDeposit } from '../../src/core/port.js';
import { deposit } from './conformance.js';

export interface ReferenceCoreUnderTest {
  port: CoreBankingPort;
  /** An account's balance in minor units, from the core's own store. */
  balanceOf(accountNumber: string): Promise<bigint>;
  close(): Promise<void>;
}

const source = '1000000001';
/** The demo customer's second account: interest, and the loan charges. */
const interest = '1000000002';
const expense = '1000000002';

function installment(terms: Partial<LoanInstallmentExecution> = {}): LoanInstallmentExecution {
  return {
    loanId: '7000000001',
    sequence: 1,
    loanType: 'CRDE',
    parameterType: 'DocumentaryRemittance',
    maturityDate: undefined,
    amountMinor: undefined,
    currency: undefined,
    paymentAccount: source,
    expenseAccount: expense,
    ...terms,
  };
}

const usd = (amountMinor: bigint) => ({ amountMinor, currency: 'USD' });

function executed<T>(outcome: CoreOutcome<T> | CoreLookup<T>): T {
  assert.equal(outcome.status, 'Executed', JSON.stringify(outcome, (_key, value: unknown) => (typeof value === 'bigint' ? `${value}n` : value)));
  return (outcome as { result: T }).result;
}

function rejected(outcome: CoreOutcome<unknown>, entry: ErrorEntry): void {
  assert.equal(outcome.status, 'Rejected');
  assert.equal((outcome as { refusal: { entry: ErrorEntry } }).refusal.entry, entry);
}

export function describeReferenceCoreExpectations(name: string, setup: () => Promise<ReferenceCoreUnderTest>, options: { skip?: string | undefined } = {}): void {
  describe(`the reference core against hand-computed numbers: ${name}`, { skip: options.skip }, () => {
    let subject: ReferenceCoreUnderTest | undefined;
    before(async () => {
      subject = await setup();
    });
    after(async () => subject?.close());
    const core = (): ReferenceCoreUnderTest => {
      if (!subject) throw new Error('the core under test was not set up');
      return subject;
    };
    /** What `work` moved on each account, read from the core's store. */
    async function moved(accounts: string[], work: () => Promise<void>): Promise<bigint[]> {
      const balances = () => Promise.all(accounts.map((account) => core().balanceOf(account)));
      const earlier = await balances();
      await work();
      return (await balances()).map((balance, index) => balance - (earlier[index] ?? 0n));
    }

    test('interest: 1000.00 at 5.25 % for 90 days from 2026-03-02 ends on Sunday 2026-05-31, rolls to Monday 2026-06-01: 91 days, 1000.00 × 5.25 % × 91 / 360 = 13.2708… → 13.27 (1327n); the source account is debited 1000.00', async () => {
      let contract: TermDeposit | undefined;
      const [debit] = await moved([source], async () => {
        contract = executed(await core().port.constituteTermDeposit(randomUUID(), deposit({ numberOfDays: 90 })));
      });
      assert.equal(contract?.maturityDate, '2026-06-01');
      assert.equal(contract?.numberOfDays, 91);
      assert.equal(contract?.expectedInterestMinor, 1327n);
      assert.equal(debit, -100_000n);
    });

    test('a maturity on a holiday rolls past it and the weekend: 32 days from 2026-03-02 is Good Friday 2026-04-03 → Monday 2026-04-06, 35 days, 1000.00 × 5.25 % × 35 / 360 = 5.1041… → 5.10 (510n)', async () => {
      const contract = executed(await core().port.constituteTermDeposit(randomUUID(), deposit({ numberOfDays: 32 })));
      assert.equal(contract.maturityDate, '2026-04-06');
      assert.equal(contract.numberOfDays, 35);
      assert.equal(contract.expectedInterestMinor, 510n);
    });

    test('an explicit maturity on a business day is kept: 2026-04-30, 59 days', async () => {
      const contract = executed(await core().port.constituteTermDeposit(randomUUID(), deposit({ numberOfDays: undefined, maturityDate: '2026-04-30' })));
      assert.equal(contract.maturityDate, '2026-04-30');
      assert.equal(contract.numberOfDays, 59);
    });

    test('charges: 12,345.67 × 0.15 % = 18.5185… → 18.52 (above the 10.00 minimum), fee 25.00, (18.52 + 25.00) × 16 % = 6.9632 → 6.96: 1852n, 2500n, 696n, PartiallyExecuted; the payment account pays the amount, the expense account the charges', async () => {
      let paid: LoanInstallmentResult | undefined;
      const [payment, charges] = await moved([source, expense], async () => {
        paid = executed(await core().port.executeLoanInstallment(randomUUID(), installment({ ...usd(1_234_567n) })));
      });
      assert.deepEqual([paid?.commissionMinor, paid?.feeMinor, paid?.taxMinor, paid?.facilityStatus], [1852n, 2500n, 696n, 'PartiallyExecuted']);
      assert.deepEqual([payment, charges], [-1_234_567n, -(1852n + 2500n + 696n)]);
    });

    test('the amount omitted pays the whole outstanding, 20,000.00 − 12,345.67 = 7,654.33: 11.4814… → 11.48, (11.48 + 25.00) × 16 % = 5.8368 → 5.84, Executed; paying it again is installmentPaid', async () => {
      const paid = executed(await core().port.executeLoanInstallment(randomUUID(), installment()));
      assert.deepEqual([paid.amountMinor, paid.commissionMinor, paid.taxMinor, paid.facilityStatus], [765_433n, 1148n, 584n, 'Executed']);
      rejected(await core().port.executeLoanInstallment(randomUUID(), installment()), E.installmentPaid);
    });

    test('the minimum commission: 1,000.00 × 0.15 % = 1.50, below the 10.00 minimum; (10.00 + 25.00) × 16 % = 5.60', async () => {
      const paid = executed(await core().port.executeLoanInstallment(randomUUID(), installment({ sequence: 2, ...usd(100_000n) })));
      assert.deepEqual([paid.commissionMinor, paid.feeMinor, paid.taxMinor], [1000n, 2500n, 560n]);
    });

    test('end of day: 2500.00 for 30 days matures on Wednesday 2026-04-01 with 2500.00 × 5.25 % × 30 / 360 = 10.9375 → 10.94; advancing to 2026-04-02 closes 2026-03-02 to 2026-04-01 (no Saturday), repays principal and interest, one termDeposit.matured event', async () => {
      const reference = randomUUID();
      const contract = executed(await core().port.constituteTermDeposit(reference, deposit({ numberOfDays: 30, principalMinor: 250_000n })));
      assert.deepEqual([contract.maturityDate, contract.expectedInterestMinor], ['2026-04-01', 1094n]);
      let report: Awaited<ReturnType<CoreBankingPort['advanceBusinessDate']>> | undefined;
      const [principal, paidInterest] = await moved([source, interest], async () => {
        report = await core().port.advanceBusinessDate('2026-04-02');
      });
      assert.deepEqual([report?.from, report?.to, report?.daysClosed[0], report?.daysClosed.at(-1), report?.maturedDeposits], ['2026-03-02', '2026-04-02', '2026-03-02', '2026-04-01', 1]);
      assert.equal(report?.daysClosed.includes('2026-03-07'), false, 'a Saturday has no end of day');
      assert.deepEqual([principal, paidInterest], [250_000n, 1094n]);
      const events = (await core().port.eventsAfter(0, 100)).filter((event) => event.type === 'termDeposit.matured');
      assert.equal(events.length, 1);
      assert.deepEqual([events[0]?.operationReference, events[0]?.businessDate, events[0]?.data.interest, events[0]?.data.principal], [reference, '2026-04-01', { amount: '10.94', currency: 'USD' }, { amount: '2500.00', currency: 'USD' }]);
    });

    test('a maturity rolled over Good Friday to Monday 2026-04-06 is repaid by the end of day of 2026-04-06, not before: two steps', async () => {
      const first = await core().port.advanceBusinessDate('2026-04-06');
      assert.deepEqual(first.daysClosed, ['2026-04-02'], 'Good Friday and the weekend have no end of day');
      const maturedOn = async (day: string) => (await core().port.eventsAfter(0, 100)).filter((event) => event.type === 'termDeposit.matured' && event.businessDate === day);
      assert.deepEqual(await maturedOn('2026-04-06'), [], 'the new business date is open: 2026-04-06 has not closed');
      const second = await core().port.advanceBusinessDate('2026-04-07');
      assert.deepEqual(second.daysClosed, ['2026-04-06']);
      assert.equal(second.maturedDeposits, 1, 'the deposit of 32 days');
      const [event] = await maturedOn('2026-04-06');
      assert.equal((await core().port.retrieveTermDeposit(String(event?.data.contractNumber)))?.status, 'Matured');
    });

    test('the business date never goes backwards (naming 2026-04-07 and 2026-04-01), and a value date before it is refused', async () => {
      await assert.rejects(core().port.advanceBusinessDate('2026-04-01'), (error: unknown) => {
        assert.ok(error instanceof BusinessDateBackwards, String(error));
        assert.deepEqual([error.current, error.requested], ['2026-04-07', '2026-04-01']);
        return true;
      });
      rejected(await core().port.constituteTermDeposit(randomUUID(), deposit({ valueDate: '2026-04-06' })), E.valueDateBeforeBusinessDate);
      executed(await core().port.constituteTermDeposit(randomUUID(), deposit({ valueDate: '2026-04-07' })));
    });

    test('the load side keeps what exists as loaded: the demo customer C0001 renamed in a document keeps its name, its account its balance; only the new account is added', async () => {
      const { port } = core();
      assert.ok(hasDataLoad(port) && hasRecords(port), 'the reference core serves the load and read sides');
      const balance = await core().balanceOf(source);
      const document = {
        customers: [
          { customerReference: 'C0100', name: 'Loaded Ltd', status: 'Active' },
          { customerReference: 'C0001', name: 'Renamed in the file', status: 'Active' },
        ],
        accounts: [
          { accountNumber: '3000000001', customerReference: 'C0100', currency: 'USD', balance: 12.34, status: 'Active' },
          { accountNumber: source, customerReference: 'C0001', currency: 'USD', balance: 1, status: 'Active' },
        ],
      };
      assert.deepEqual(await port.loadData(document), { accountsAdded: 1 });
      assert.equal(await core().balanceOf('3000000001'), 1234n);
      assert.equal(await core().balanceOf(source), balance, 'an existing account keeps its balance');
      const customers = (await port.listCustomers({ limit: 10, offset: 0 })).items;
      assert.equal(customers.find((customer) => customer.customerReference === 'C0001')?.name, 'Acme Exports Ltd', 'an existing customer is kept as loaded');
    });
  });
}
