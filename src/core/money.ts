/**
 * Exact money: amounts travel as JSON numbers but live as bigint minor units. A JSON number with
 * at most 15 significant digits round-trips exactly through its shortest decimal form, which is
 * what `String(number)` gives, so the decimal the client wrote is recovered without error.
 */
import { currencyExponent } from './currencies.js';

/** Beyond 15 significant digits a double no longer holds the decimal exactly (docs/api.md, "Money"). */
export const significantDigitsMax = 15;

/**
 * Minor units are below 10^15 too: "1e17" has one significant digit, but as 10^19 cents it would
 * overflow a 64-bit ledger column and no longer print as an exact JSON number.
 */
export const minorUnitsLimit = 10n ** BigInt(significantDigitsMax);

export type AmountProblem = 'not_positive' | 'too_many_decimals' | 'too_many_digits' | 'too_large' | 'not_a_number' | 'unknown_currency';

export type AmountParse = { ok: true; minor: bigint } | { ok: false; problem: AmountProblem };

export interface Decimal {
  /** All digits, without sign or point. */
  digits: bigint;
  /** How many of them are after the point. */
  scale: number;
  negative: boolean;
  /** Digits as written, from the first non-zero one (trailing zeros count: "1000.00" has 6). */
  written?: number;
}

/**
 * Where the text a JSON number was written with can be found: the business API reads numbers
 * from the JSON text (docs/api.md, "Money"), so an amount is checked as written, not as a double.
 */
export type NumberSource = (container: object, member: string) => string | undefined;

/** The decimal text of a number member: as written when the source knows it, else its shortest round-trip form. */
export function writtenNumber(container: object, member: string, source: NumberSource | undefined): string {
  return source?.(container, member) ?? String((container as Record<string, unknown>)[member]);
}

/** Exponents beyond this are refused rather than expanded (a "1e-999999" would be a million digits). */
const exponentMax = 400;

/** The exact decimal written by a JSON number: its source text, or a double's shortest round-trip form. */
export function decimalOf(value: number | string): Decimal | undefined {
  if (typeof value === 'number' && !Number.isFinite(value)) return undefined;
  const text = String(value);
  const match = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (!match) return undefined;
  const negative = match[1] === '-';
  const integerPart = match[2] ?? '0';
  const fraction = match[3] ?? '';
  const written = (integerPart + fraction).replace(/^0+(?=\d)/, '');
  if (/^0+$/.test(written)) return { digits: 0n, scale: 0, negative };
  const exponentText = match[4] ?? '0';
  if (exponentText.replace(/^[+-]?0*/, '').length > 3 || Math.abs(Number(exponentText)) > exponentMax) return undefined;
  let digits = written;
  let scale = fraction.length - Number(exponentText);
  if (scale < 0) {
    digits += '0'.repeat(-scale);
    scale = 0;
  }
  return { digits: BigInt(digits), scale, negative, written: written.length };
}

export function significantDigits(decimal: Decimal): number {
  if (decimal.digits === 0n) return 1;
  return decimal.written ?? decimal.digits.toString().replace(/0+$/, '').length;
}

/**
 * Converts a positive amount in the currency's major unit into minor units, refusing any
 * rounding. `value` is the decimal text as written (or a number): its decimals are counted as
 * written, so "1000.000" has three, more than USD allows, and "1000.0000000000000001" is refused
 * where a double would have read 1000.
 */
export function parseAmount(value: number | string, currency: string): AmountParse {
  const exponent = currencyExponent(currency);
  if (exponent === undefined) return { ok: false, problem: 'unknown_currency' };
  const decimal = decimalOf(value);
  if (!decimal) return { ok: false, problem: 'not_a_number' };
  if (decimal.negative || decimal.digits === 0n) return { ok: false, problem: 'not_positive' };
  if (significantDigits(decimal) > significantDigitsMax) return { ok: false, problem: 'too_many_digits' };
  if (decimal.scale > exponent) return { ok: false, problem: 'too_many_decimals' };
  const minor = decimal.digits * 10n ** BigInt(exponent - decimal.scale);
  if (minor >= minorUnitsLimit) return { ok: false, problem: 'too_large' };
  return { ok: true, minor };
}

/** Minor units of a non-negative amount from a trusted source (the sandbox data file). */
export function toMinorUnits(value: number, currency: string): bigint {
  if (value === 0) return 0n;
  const parsed = parseAmount(value, currency);
  if (!parsed.ok) throw new Error(`amount ${value} ${currency} is not exact in minor units (${parsed.problem})`);
  return parsed.minor;
}

/** "1500.00" for 150000n USD; "-0.05" for -5n USD. */
export function formatMinor(minor: bigint, currency: string): string {
  const exponent = currencyExponent(currency);
  if (exponent === undefined) throw new Error(`unknown currency ${currency}`);
  const negative = minor < 0n;
  const digits = (negative ? -minor : minor).toString().padStart(exponent + 1, '0');
  const whole = exponent === 0 ? digits : `${digits.slice(0, -exponent)}.${digits.slice(-exponent)}`;
  return negative ? `-${whole}` : whole;
}

/** 10^e as an exact double, for the ISO 4217 exponents (0 to 4). */
const powersOfTen = [1, 10, 100, 1000, 10000];
const safeIntegerLimit = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * The JSON number for an amount: the double nearest its decimal value, which is what the decimal
 * text parses to. Below 2^53 both operands of the division are exact doubles and IEEE 754 rounds
 * a quotient correctly, so `minor / 10^e` is that same double without making the text (a
 * property test compares the two).
 */
export function minorToNumber(minor: bigint, currency: string): number {
  const exponent = currencyExponent(currency);
  const divisor = exponent === undefined ? undefined : powersOfTen[exponent];
  if (divisor !== undefined && minor <= safeIntegerLimit && minor >= -safeIntegerLimit) return Number(minor) / divisor;
  return Number(formatMinor(minor, currency));
}

/** Rounds numerator / denominator half-up (away from zero at .5) for non-negative operands. */
export function divideHalfUp(numerator: bigint, denominator: bigint): bigint {
  if (denominator <= 0n || numerator < 0n) throw new Error('divideHalfUp takes a non-negative numerator and a positive denominator');
  return (numerator * 2n + denominator) / (denominator * 2n);
}

/** A decimal as plain text without exponent, digits as written: "5.250", "0.05". */
export function plainDecimal(decimal: Decimal): string {
  const digits = decimal.digits.toString().padStart(decimal.scale + 1, '0');
  const whole = decimal.scale === 0 ? digits : `${digits.slice(0, -decimal.scale)}.${digits.slice(-decimal.scale)}`;
  return decimal.negative && decimal.digits !== 0n ? `-${whole}` : whole;
}

/** Whether a decimal is greater than a whole number, exactly. */
export function decimalExceeds(decimal: Decimal, whole: number): boolean {
  return (decimal.negative ? -decimal.digits : decimal.digits) > BigInt(whole) * 10n ** BigInt(decimal.scale);
}
