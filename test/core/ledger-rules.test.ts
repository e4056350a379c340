/** The ledger's own rules: balanced movements, which accounts may go below zero. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertBalanced, canPost, LedgerInvariantError, mayGoNegative, mergeSameAccount } from '../../src/core/ledger/movement.js';

const movement = (lines: Array<[string, bigint, string]>) => ({
  id: 'm1',
  reference: 'r1',
  kind: 'test',
  description: null,
  businessDate: '2026-01-05',
  lines: lines.map(([accountNumber, amountMinor, currency]) => ({ accountNumber, amountMinor, currency })),
});

test('a movement balances per currency, has at least two lines and no zero line, or it is an invariant error', () => {
  assert.doesNotThrow(() => assertBalanced(movement([['A', -5n, 'EUR'], ['B', 5n, 'EUR']])));
  assert.throws(() => assertBalanced(movement([['A', -5n, 'EUR'], ['B', 4n, 'EUR']])), LedgerInvariantError);
  assert.throws(() => assertBalanced(movement([['A', -5n, 'EUR'], ['B', 5n, 'USD']])), LedgerInvariantError);
  assert.throws(() => assertBalanced(movement([['A', 0n, 'EUR'], ['B', 0n, 'EUR']])), LedgerInvariantError);
  assert.throws(() => assertBalanced(movement([['A', 0n, 'EUR']])), LedgerInvariantError);
});

test('only internal and loan accounts may go below zero; a customer account takes a debit up to its balance', () => {
  assert.equal(mayGoNegative('internal'), true);
  assert.equal(mayGoNegative('loan'), true);
  assert.equal(mayGoNegative('customer'), false);
  assert.equal(mayGoNegative('term_deposit'), false);
  assert.equal(canPost({ kind: 'customer', balanceMinor: 10n }, -10n), true);
  assert.equal(canPost({ kind: 'customer', balanceMinor: 10n }, -11n), false);
  assert.equal(canPost({ kind: 'internal', balanceMinor: 0n }, -11n), true);
  assert.equal(canPost({ kind: 'customer', balanceMinor: -5n }, 1n), true, 'a credit always posts');
});

test('lines of one account merge into one, and zero lines disappear', () => {
  assert.deepEqual(
    mergeSameAccount([
      { accountNumber: 'A', amountMinor: -5n, currency: 'EUR' },
      { accountNumber: 'A', amountMinor: -2n, currency: 'EUR' },
      { accountNumber: 'B', amountMinor: 7n, currency: 'EUR' },
      { accountNumber: 'C', amountMinor: 0n, currency: 'EUR' },
    ]),
    [
      { accountNumber: 'A', amountMinor: -7n, currency: 'EUR' },
      { accountNumber: 'B', amountMinor: 7n, currency: 'EUR' },
    ],
  );
});
