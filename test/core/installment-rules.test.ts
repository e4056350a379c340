/** Loan installment rules as a pure function (docs/loans.md, "Checks, in order" and "The execution"), charges to the cent. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Account, Installment, LoanFacility } from '../../src/core/domain.js';
import { errorCatalogue as E, type ErrorEntry } from '../../src/core/error-catalogue.js';
import type { LoanInstallmentExecution } from '../../src/core/loans/execution-request.js';
import { decideInstallment, type InstallmentFacts } from '../../src/core/loans/installment-rules.js';

const facility: LoanFacility = {
  loanId: 'L1',
  customerReference: 'C1',
  loanType: 'CRDE',
  parameterType: 'DocumentaryRemittance',
  currency: 'USD',
  approvedLimitMinor: 10_000_000n,
  executedTotalMinor: 0n,
  status: 'Active',
  finalMaturityDate: '2026-12-31',
  fixedFeeMinor: 2_500n,
  commissionRate: '0.0015',
  minimumCommissionMinor: 1_000n,
  taxRate: '0.16',
};
const installment: Installment = { loanId: 'L1', sequence: 1, dueDate: '2026-03-01', amountMinor: 2_000_000n, paidMinor: 0n };
const payment: Account = { accountNumber: 'P1', customerReference: 'C1', currency: 'USD', status: 'Active', kind: 'customer', balanceMinor: 5_000_000n };
const expense: Account = { ...payment, accountNumber: 'X1', balanceMinor: 100_000n };
const facts: InstallmentFacts = { facility, installment, payment, expense };
const command: LoanInstallmentExecution = {
  loanId: 'L1',
  sequence: 1,
  loanType: 'CRDE',
  parameterType: 'DocumentaryRemittance',
  maturityDate: undefined,
  amountMinor: 2_000_000n,
  currency: 'USD',
  paymentAccount: 'P1',
  expenseAccount: 'X1',
};

function refusedWith(entry: ErrorEntry, change: Partial<LoanInstallmentExecution> = {}, factChange: Partial<InstallmentFacts> = {}): string {
  const decision = decideInstallment({ ...command, ...change }, { ...facts, ...factChange });
  assert.equal(decision.ok, false, 'refused');
  if (decision.ok) throw new Error('unreachable');
  assert.equal(decision.refusal.entry, entry, decision.refusal.message);
  return decision.refusal.message;
}

describe('loan installment rules (pure)', () => {
  test('20000.00 paid in full: commission 30.00, fee 25.00, tax 8.80, one balanced movement, Executed', () => {
    const decision = decideInstallment(command, facts);
    assert.ok(decision.ok);
    const plan = decision.value;
    assert.deepEqual([plan.commissionMinor, plan.feeMinor, plan.taxMinor], [3_000n, 2_500n, 880n]);
    assert.equal(plan.facilityStatus, 'Executed');
    assert.equal(plan.lines.reduce((sum, line) => sum + line.amountMinor, 0n), 0n);
    assert.deepEqual(plan.lines.find((line) => line.accountNumber === 'X1')?.amountMinor, -6_380n);
    assert.deepEqual(plan.incomeAccounts, ['INCOME-COMMISSION-USD', 'INCOME-FEE-USD', 'TAX-PAYABLE-USD']);
  });

  test('the minimum commission applies below it, and a partial payment leaves the facility PartiallyExecuted', () => {
    const decision = decideInstallment({ ...command, amountMinor: 500_000n }, facts);
    assert.ok(decision.ok);
    assert.equal(decision.value.commissionMinor, 1_000n);
    assert.equal(decision.value.facilityStatus, 'PartiallyExecuted');
  });

  test('loanAmount omitted: the installment\'s whole outstanding', () => {
    const decision = decideInstallment({ ...command, amountMinor: undefined, currency: undefined }, { ...facts, installment: { ...installment, paidMinor: 500_000n } });
    assert.ok(decision.ok);
    assert.equal(decision.value.amountMinor, 1_500_000n);
  });

  test('one account paying amount and charges is one debit of their sum', () => {
    const decision = decideInstallment({ ...command, expenseAccount: 'P1' }, { ...facts, expense: payment });
    assert.ok(decision.ok);
    assert.equal(decision.value.lines.filter((line) => line.accountNumber === 'P1').length, 1);
    assert.equal(decision.value.lines.find((line) => line.accountNumber === 'P1')?.amountMinor, -2_006_380n);
  });

  test('ML 404: facility, installment, payment or expense account not found', () => {
    refusedWith(E.facilityNotFound, {}, { facility: undefined });
    refusedWith(E.installmentNotFound, {}, { installment: undefined });
    refusedWith(E.paymentAccountNotFound, {}, { payment: undefined });
    refusedWith(E.expenseAccountNotFound, {}, { expense: undefined });
  });

  test('ML 409: facility closed, installment already paid; ML 400: maturity after the final maturity', () => {
    refusedWith(E.facilityClosed, {}, { facility: { ...facility, status: 'Closed' } });
    refusedWith(E.installmentPaid, {}, { installment: { ...installment, paidMinor: 2_000_000n } });
    refusedWith(E.maturityAfterFinalMaturity, { maturityDate: '2027-01-01' });
  });

  test('ML 422: reserved and mismatched types, currency, accounts', () => {
    refusedWith(E.parameterTypeNotSupported, { parameterType: 'LetterOfCredit' });
    refusedWith(E.parameterTypeMismatch, { parameterType: 'Other' });
    refusedWith(E.loanTypeMismatch, { loanType: 'XXXX' });
    refusedWith(E.loanCurrencyMismatch, { currency: 'EUR' });
    refusedWith(E.loanCurrencyMismatch, {}, { payment: { ...payment, currency: 'EUR' } });
    refusedWith(E.loanAccountNotActive, {}, { expense: { ...expense, status: 'Blocked' } });
    refusedWith(E.loanAccountNotCustomers, {}, { expense: { ...expense, customerReference: 'C2' } });
  });

  test('ML 422: above the outstanding, above the approved limit (the rule lives in the core, not the store)', () => {
    refusedWith(E.amountAboveOutstanding, { amountMinor: 2_000_001n });
    refusedWith(E.approvedLimitExceeded, {}, { facility: { ...facility, executedTotalMinor: 8_000_001n } });
    assert.ok(decideInstallment(command, { ...facts, facility: { ...facility, executedTotalMinor: 8_000_000n } }).ok, 'exactly up to the limit is allowed');
  });

  test('ML 422: insufficient funds in the payment account, then in the expense account', () => {
    assert.match(refusedWith(E.insufficientFundsPayment, {}, { payment: { ...payment, balanceMinor: 1_999_999n } }), /20000\.00 USD/);
    assert.match(refusedWith(E.insufficientFundsExpense, {}, { expense: { ...expense, balanceMinor: 6_379n } }), /63\.80 USD/);
  });
});
