/** Term deposit constitution rules as a pure function: facts in, a contract and movement or a refusal out. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { BusinessCalendar } from '../../src/core/business-calendar.js';
import type { Account, Customer, TermDepositProduct } from '../../src/core/domain.js';
import { errorCatalogue as E, type ErrorEntry } from '../../src/core/error-catalogue.js';
import { decideConstitution, type ConstitutionFacts } from '../../src/core/term-deposits/constitution-rules.js';
import type { TermDepositInitiation } from '../../src/core/term-deposits/initiation.js';

// 2026-01-05 is a Monday; 2026-01-10/11 a weekend; 2026-02-04 a Wednesday.
const calendar = new BusinessCalendar(['SATURDAY', 'SUNDAY'], ['2026-02-06'], '2026-01-05');
const customer: Customer = { customerReference: 'C1', name: 'Ana', status: 'Active' };
const source: Account = { accountNumber: 'A1', customerReference: 'C1', currency: 'EUR', status: 'Active', kind: 'customer', balanceMinor: 1_000_000n };
const interest: Account = { ...source, accountNumber: 'A2', balanceMinor: 0n };
const product: TermDepositProduct = {
  productCode: 'TD',
  componentCode: 'STD',
  active: true,
  currencies: ['EUR'],
  minAmount: '1000.00',
  maxAmount: '50000.00',
  minDays: 30,
  maxDays: 365,
  dayCount: 'ACT/360',
};
const command: TermDepositInitiation = {
  customerReference: 'C1',
  productCode: 'TD',
  componentCode: 'STD',
  principalMinor: 500_000n,
  currency: 'EUR',
  ratePercent: '5.25',
  numberOfDays: 30,
  maturityDate: undefined,
  valueDate: '2026-01-05',
  sourceAccount: 'A1',
  interestAccount: 'A2',
  description: null,
};
const facts: ConstitutionFacts = { customer, source, interestAccount: interest, product, calendar, contractNumber: 'TD000000000000001' };

function refusedWith(entry: ErrorEntry, change: Partial<TermDepositInitiation> = {}, factChange: Partial<ConstitutionFacts> = {}): string {
  const decision = decideConstitution('ref-1', { ...command, ...change }, { ...facts, ...factChange });
  assert.equal(decision.ok, false, 'refused');
  if (decision.ok) throw new Error('unreachable');
  assert.equal(decision.refusal.entry, entry, decision.refusal.message);
  return decision.refusal.message;
}

describe('term deposit constitution rules (pure)', () => {
  test('accepted: one balanced movement from the source account to the new contract, maturity rolled to a business day', () => {
    const decision = decideConstitution('ref-1', command, facts);
    assert.ok(decision.ok);
    const { contract, lines } = decision.value;
    // 2026-01-05 + 30 days = 2026-02-04 (a Wednesday, a business day).
    assert.equal(contract.maturityDate, '2026-02-04');
    assert.equal(contract.numberOfDays, 30);
    assert.equal(contract.operationReference, 'ref-1');
    assert.equal(contract.description, 'Term deposit TD000000000000001');
    assert.deepEqual(lines, [
      { accountNumber: 'A1', amountMinor: -500_000n, currency: 'EUR' },
      { accountNumber: 'TD000000000000001', amountMinor: 500_000n, currency: 'EUR' },
    ]);
    assert.equal(lines.reduce((sum, line) => sum + line.amountMinor, 0n), 0n);
  });

  test('maturity from numberOfDays on a holiday rolls forward to the next business day', () => {
    // 2026-01-07 + 30 = 2026-02-06 (a holiday, Friday) → Monday 2026-02-09.
    const decision = decideConstitution('ref-1', { ...command, valueDate: '2026-01-07' }, facts);
    assert.ok(decision.ok);
    assert.equal(decision.value.contract.maturityDate, '2026-02-09');
    assert.equal(decision.value.contract.numberOfDays, 33);
  });

  test('TD 404: customer, source account, interest settlement account not found', () => {
    refusedWith(E.customerNotFound, {}, { customer: undefined });
    refusedWith(E.sourceAccountNotFound, {}, { source: undefined });
    refusedWith(E.interestAccountNotFound, {}, { interestAccount: undefined });
  });

  test('TD 422: blocked customer, unknown or inactive product, currency not offered', () => {
    refusedWith(E.customerBlocked, {}, { customer: { ...customer, status: 'Blocked' } });
    refusedWith(E.productNotAvailable, {}, { product: undefined });
    refusedWith(E.productNotAvailable, {}, { product: { ...product, active: false } });
    refusedWith(E.currencyNotOffered, { currency: 'USD' });
  });

  test('TD 422: amount and term outside the product limits', () => {
    refusedWith(E.amountOutsideProductLimits, { principalMinor: 99_999n });
    refusedWith(E.amountOutsideProductLimits, { principalMinor: 5_000_001n });
    refusedWith(E.termOutsideProductLimits, { numberOfDays: 10 });
  });

  test('TD 422: accounts not active, not the customer\'s, or in another currency', () => {
    refusedWith(E.accountNotActive, {}, { source: { ...source, status: 'Closed' } });
    refusedWith(E.accountNotCustomers, {}, { interestAccount: { ...interest, customerReference: 'C2' } });
    refusedWith(E.accountNotCustomers, {}, { source: { ...source, kind: 'internal' } });
    refusedWith(E.currencyMismatchSource, {}, { source: { ...source, currency: 'USD' }, product: { ...product, currencies: ['EUR', 'USD'] } });
  });

  test('TD 422: value date before the business date or not a business day; explicit maturity not a business day', () => {
    refusedWith(E.valueDateBeforeBusinessDate, { valueDate: '2026-01-02' });
    refusedWith(E.valueDateNotBusinessDay, { valueDate: '2026-01-10' });
    refusedWith(E.maturityNotBusinessDay, { numberOfDays: undefined, maturityDate: '2026-02-07' });
  });

  test('TD 400: numberOfDays and maturityDate disagree (neither the plain nor the rolled date)', () => {
    refusedWith(E.termMismatch, { numberOfDays: 30, maturityDate: '2026-02-05' });
  });

  test('TD-422-002: insufficient funds in the source account, the amount quoted exactly', () => {
    const message = refusedWith(E.insufficientFundsSource, { principalMinor: 1_000_001n, numberOfDays: 30 }, { product: { ...product, maxAmount: '50000.00' } });
    assert.match(message, /10000\.01 EUR/);
  });

  test('the whole balance can be constituted (a balance of exactly the principal is enough)', () => {
    assert.ok(decideConstitution('ref-1', { ...command, principalMinor: 1_000_000n }, facts).ok);
  });
});
