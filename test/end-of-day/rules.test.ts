/** The pure rules of end of day (src/core/end-of-day; docs/business-days.md): which days close, the maturity movement, what is overdue. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BusinessCalendar } from '../../src/core/business-calendar.js';
import { businessDaysToClose, goesBackwards, spansTooFar } from '../../src/core/end-of-day/days.js';
import { interestExpenseAccount, maturesBy, planMaturity } from '../../src/core/end-of-day/maturity.js';
import { becomesOverdue } from '../../src/core/end-of-day/overdue.js';
import type { TermDepositContract } from '../../src/core/domain.js';
import { LedgerInvariantError } from '../../src/core/ledger/movement.js';

const calendar = new BusinessCalendar(['SATURDAY', 'SUNDAY'], ['2026-04-03'], '2026-03-02');

const contract: TermDepositContract = {
  contractNumber: 'TD000000000000001',
  customerReference: 'C0001',
  productCode: 'TDFIX',
  componentCode: 'TD30-365',
  principalMinor: 1_234_567n,
  currency: 'USD',
  ratePercent: '4.875',
  dayCount: 'ACT/365',
  valueDate: '2026-03-02',
  maturityDate: '2026-06-01',
  numberOfDays: 91,
  sourceAccount: '1000000001',
  interestAccount: '1000000002',
  description: null,
  operationReference: 'ref',
  status: 'Active',
};

test('advancing from C to D closes the business days C <= b < D, weekends and holidays skipped', () => {
  assert.deepEqual(businessDaysToClose(calendar, '2026-04-01', '2026-04-08'), ['2026-04-01', '2026-04-02', '2026-04-06', '2026-04-07']);
  assert.deepEqual(businessDaysToClose(calendar, '2026-04-04', '2026-04-06'), [], 'a weekend alone closes nothing');
  assert.deepEqual(businessDaysToClose(calendar, '2026-04-06', '2026-04-06'), [], 'to the current date: nothing');
  assert.equal(goesBackwards('2026-04-06', '2026-04-05'), true);
  assert.equal(goesBackwards('2026-04-06', '2026-04-06'), false);
  assert.equal(spansTooFar('2026-01-01', '2036-01-01'), false);
  assert.equal(spansTooFar('2026-01-01', '2040-01-01'), true);
});

test('a maturity moves principal from the deposit account to the source and the retrieve\'s interest from the interest expense account, balanced', () => {
  const plan = planMaturity(contract, { balanceMinor: 1_234_567n, currency: 'USD' });
  // 12 345.67 × 4.875 % × 91 / 365 = 150.0514… → 150.05
  assert.equal(plan.interestMinor, 15_005n);
  assert.deepEqual(plan.lines, [
    { accountNumber: 'TD000000000000001', amountMinor: -1_234_567n, currency: 'USD' },
    { accountNumber: '1000000001', amountMinor: 1_234_567n, currency: 'USD' },
    { accountNumber: interestExpenseAccount('USD'), amountMinor: -15_005n, currency: 'USD' },
    { accountNumber: '1000000002', amountMinor: 15_005n, currency: 'USD' },
  ]);
  const sameAccount = planMaturity({ ...contract, interestAccount: '1000000001', dayCount: 'ACT/360' }, { balanceMinor: 1_234_567n, currency: 'USD' });
  // ACT/360: 12 345.67 × 4.875 % × 91 / 360 = 152.1346… → 152.13, one line for the account that takes both.
  assert.deepEqual(sameAccount.lines.find((line) => line.accountNumber === '1000000001'), { accountNumber: '1000000001', amountMinor: 1_234_567n + 15_213n, currency: 'USD' });
  assert.equal(sameAccount.lines.length, 3);
});

test('a deposit account that does not hold the principal is a broken ledger, never repaid', () => {
  assert.throws(() => planMaturity(contract, { balanceMinor: 0n, currency: 'USD' }), LedgerInvariantError);
  assert.throws(() => planMaturity(contract, undefined), LedgerInvariantError);
});

test('a contract matures by the closed day when Active and maturing on or before it (a holiday added later included)', () => {
  assert.equal(maturesBy(contract, '2026-05-29'), false);
  assert.equal(maturesBy(contract, '2026-06-01'), true);
  assert.equal(maturesBy(contract, '2026-06-02'), true, 'a maturity day that became a holiday matures on the next end of day');
  assert.equal(maturesBy({ ...contract, status: 'Matured' }, '2026-06-02'), false);
});

test('an installment due on or before the closed day and not fully paid becomes Overdue; a paid one never', () => {
  const installment = { loanId: 'L1', sequence: 1, dueDate: '2026-03-31', amountMinor: 100n, paidMinor: 40n, status: 'Pending' as const };
  assert.equal(becomesOverdue(installment, '2026-03-30'), false);
  assert.equal(becomesOverdue(installment, '2026-03-31'), true);
  assert.equal(becomesOverdue({ ...installment, paidMinor: 100n, status: 'Paid' }, '2026-04-01'), false);
  assert.equal(becomesOverdue({ ...installment, status: 'Overdue' }, '2026-04-01'), false, 'once');
});
