/** The retrieve answers the initiation response's fields (docs/term-deposits.md, "Decisions"), plus the deposit's status and expected interest. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { TermDeposit } from '../../src/core/port.js';
import { initiationResponse, retrieveResponse } from '../../src/operations/term-deposit-initiation/presenter.js';

const deposit: TermDeposit = {
  contractNumber: 'TD000000000000001',
  customerReference: 'C0001',
  productCode: 'TDFIX',
  componentCode: 'TD30-365',
  principalMinor: 1_000_000n,
  currency: 'USD',
  ratePercent: '5.25',
  dayCount: 'ACT/360',
  valueDate: '2026-03-02',
  maturityDate: '2026-06-01',
  numberOfDays: 91,
  sourceAccount: '1000000001',
  interestAccount: '1000000002',
  description: 'A deposit',
  operationReference: '01a20f3b-d306-733e-9776-0fe70408addc',
  status: 'Active',
  expectedInterestMinor: 13271n,
};

test('the retrieve holds every field of the initiation response, unchanged, plus status, rate and expected interest', () => {
  const retrieved = retrieveResponse(deposit);
  assert.deepEqual({ ...retrieved, termDepositStatus: undefined, interestRate: undefined, expectedInterestAmount: undefined }, { ...initiationResponse(deposit), termDepositStatus: undefined, interestRate: undefined, expectedInterestAmount: undefined });
  assert.equal(retrieved.termDepositStatus, 'Active');
  assert.deepEqual(retrieved.interestRate, { rateValue: 5.25, rateType: 'Nominal' });
  assert.deepEqual(retrieved.expectedInterestAmount, { amountValue: 132.71, amountCurrency: { currencycode: 'USD' } });
});
