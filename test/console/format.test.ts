/** The console's amount formatting groups the exact decimal strings as text, never through a float. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { repoRoot } from '../helpers/repo-root.js';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const { groupDigits, formatMoney, plural } = (await import(pathToFileURL(join(repoRoot, 'src/console/static/format.js')).href)) as {
  groupDigits(amount: string): string;
  formatMoney(money: { amount: string; currency: string } | null): string;
  plural(count: number, noun: string, pluralNoun?: string): string;
};

test('amounts are grouped by thousands as text, exactly, whatever their size or sign', () => {
  assert.equal(groupDigits('240000.00'), '240,000.00');
  assert.equal(groupDigits('-10000.00'), '-10,000.00');
  assert.equal(groupDigits('999.99'), '999.99');
  assert.equal(groupDigits('1000'), '1,000');
  assert.equal(groupDigits('0.05'), '0.05');
  // Beyond a double's 15-16 significant digits: still exact.
  assert.equal(groupDigits('999999999999999.99'), '999,999,999,999,999.99');
  assert.equal(formatMoney({ amount: '1543.75', currency: 'USD' }), '1,543.75 USD');
  assert.equal(formatMoney(null), '–');
});

test('a count is singular for exactly one and plural otherwise: "1 installment", never "1 installments"', () => {
  assert.equal(plural(1, 'installment'), '1 installment');
  assert.equal(plural(0, 'installment'), '0 installments');
  assert.equal(plural(2, 'deposit'), '2 deposits');
  assert.equal(plural(1, 'business day'), '1 business day');
  assert.equal(plural(31, 'business day'), '31 business days');
  assert.equal(plural(1, 'entry', 'entries'), '1 entry');
  assert.equal(plural(3, 'entry', 'entries'), '3 entries');
});
