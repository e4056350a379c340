/**
 * Exact money (docs/api.md, "Money"): amounts are checked as the decimal text the client wrote,
 * never as the binary double a JSON parser would make of it; trailing zeros count as written
 * decimals; exponents are read exactly and bounded.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { decimalExceeds, decimalOf, formatMinor, minorToNumber, parseAmount, plainDecimal, significantDigits } from '../../src/core/money.js';

test('amount text: as written, 1000.10 USD is 100010 minor units; 1.0001e3 is 1000.1; 250 JPY is 250', () => {
  assert.deepEqual(parseAmount('1000.10', 'USD'), { ok: true, minor: 100010n });
  assert.deepEqual(parseAmount('1.0001e3', 'USD'), { ok: true, minor: 100010n });
  assert.deepEqual(parseAmount('250', 'JPY'), { ok: true, minor: 250n });
  assert.deepEqual(parseAmount('0.001', 'BHD'), { ok: true, minor: 1n });
});

test('amount text: more decimals than the currency allows is refused even where a double would round it away', () => {
  assert.deepEqual(parseAmount('1000.0000000000000001', 'USD'), { ok: false, problem: 'too_many_digits' });
  assert.deepEqual(parseAmount('1000.001', 'USD'), { ok: false, problem: 'too_many_decimals' });
  assert.deepEqual(parseAmount('1000.000', 'USD'), { ok: false, problem: 'too_many_decimals' }, 'trailing zeros are written decimals');
  assert.deepEqual(parseAmount('1.5', 'JPY'), { ok: false, problem: 'too_many_decimals' });
  assert.deepEqual(parseAmount('12345e-3', 'USD'), { ok: false, problem: 'too_many_decimals' });
});

test('amount text: at most 15 significant digits, counted as written (9007199254740993 has 16)', () => {
  assert.deepEqual(parseAmount('9007199254740993', 'USD'), { ok: false, problem: 'too_many_digits' });
  assert.deepEqual(parseAmount('9999999999999.99', 'USD'), { ok: true, minor: 999999999999999n });
  assert.deepEqual(parseAmount('1e12', 'USD'), { ok: true, minor: 10n ** 14n }, 'one significant digit, exactly');
});

test('amount text: minor units stay below 10^15, so "1e17" (one significant digit) cannot overflow a 64-bit column', () => {
  assert.deepEqual(parseAmount('1e13', 'USD'), { ok: false, problem: 'too_large' });
  assert.deepEqual(parseAmount('1e17', 'USD'), { ok: false, problem: 'too_large' });
  assert.deepEqual(parseAmount('999999999999999', 'JPY'), { ok: true, minor: 999999999999999n });
  assert.deepEqual(parseAmount('1e15', 'JPY'), { ok: false, problem: 'too_large' });
});

test('amount text: zero, negative and malformed amounts; exponents beyond 400 are refused, not expanded', () => {
  assert.deepEqual(parseAmount('0', 'USD'), { ok: false, problem: 'not_positive' });
  assert.deepEqual(parseAmount('0e999999999', 'USD'), { ok: false, problem: 'not_positive' });
  assert.deepEqual(parseAmount('-1', 'USD'), { ok: false, problem: 'not_positive' });
  assert.deepEqual(parseAmount('1e-999999', 'USD'), { ok: false, problem: 'not_a_number' });
  assert.deepEqual(parseAmount('1e401', 'USD'), { ok: false, problem: 'not_a_number' });
  assert.deepEqual(parseAmount('12abc', 'USD'), { ok: false, problem: 'not_a_number' });
  assert.deepEqual(parseAmount(Number.POSITIVE_INFINITY, 'USD'), { ok: false, problem: 'not_a_number' });
});

test('numbers (not text) still take their shortest round-trip form: 1500.5 is 150050 minor units', () => {
  assert.deepEqual(parseAmount(1500.5, 'USD'), { ok: true, minor: 150050n });
});

test('rates: compared exactly and shown as written (100.0000000000000001 exceeds 100; 5.250 stays 5.250)', () => {
  const over = decimalOf('100.0000000000000001');
  assert.ok(over);
  assert.equal(decimalExceeds(over, 100), true);
  const hundred = decimalOf('100');
  assert.ok(hundred);
  assert.equal(decimalExceeds(hundred, 100), false);
  const rate = decimalOf('5.250');
  assert.ok(rate);
  assert.equal(plainDecimal(rate), '5.250');
  assert.equal(significantDigits(rate), 4);
  const small = decimalOf('5e-2');
  assert.ok(small);
  assert.equal(plainDecimal(small), '0.05');
});

test('amounts to JSON numbers: minor units over 10^e give the same double as their decimal text, for every ISO exponent (0 JPY, 2 USD, 3 BHD, 4 CLF)', () => {
  const currencies = ['JPY', 'USD', 'BHD', 'CLF'];
  fc.assert(
    fc.property(fc.bigInt({ min: -(10n ** 15n), max: 10n ** 15n }), fc.constantFrom(...currencies), (minor, currency) => {
      assert.equal(minorToNumber(minor, currency), Number(formatMinor(minor, currency)));
    }),
    { numRuns: 20_000 },
  );
  assert.equal(minorToNumber(12345n, 'USD'), 123.45);
  assert.equal(minorToNumber(999999999999999n, 'USD'), 9999999999999.99);
  assert.equal(minorToNumber(1n, 'CLF'), 0.0001);
  // Beyond 2^53 (never an amount coregate keeps) the text is still the way.
  assert.equal(minorToNumber(2n ** 60n + 1n, 'USD'), Number(formatMinor(2n ** 60n + 1n, 'USD')));
});
