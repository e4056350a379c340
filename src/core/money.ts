/**
 * Exact money: amounts travel as JSON numbers but live as bigint minor units. A JSON number with
 * at most 15 significant digits round-trips exactly through its shortest decimal form, which is
 * what `String(number)` gives, so the decimal the client wrote is recovered without error.
 */
import { currencyExponent } from './currencies.js';

/** CONTRACT §5: beyond 15 significant digits a double no longer holds the decimal exactly. */
export const significantDigitsMax = 15;

export type AmountProblem = 'not_positive' | 'too_many_decimals' | 'too_many_digits' | 'not_a_number' | 'unknown_currency';

export type AmountParse = { ok: true; minor: bigint } | { ok: false; problem: AmountProblem };

export interface Decimal {
  /** All digits, without sign or point. */
  digits: bigint;
  /** How many of them are after the point. */
  scale: number;
  negative: boolean;
}

/** The exact decimal written by a JSON number (shortest round-trip form). */
export function decimalOf(value: number): Decimal | undefined {
  if (!Number.isFinite(value)) return undefined;
  const text = String(Math.abs(value));
  const match = /^(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(text);
  if (!match) return undefined;
  const integerPart = match[1] ?? '0';
  const fraction = match[2] ?? '';
  const exponent = Number(match[3] ?? '0');
  let digits = (integerPart + fraction).replace(/^0+(?=\d)/, '');
  let scale = fraction.length - exponent;
  if (scale < 0) {
    digits += '0'.repeat(-scale);
    scale = 0;
  }
  return { digits: BigInt(digits), scale, negative: value < 0 };
}

export function significantDigits(decimal: Decimal): number {
  if (decimal.digits === 0n) return 1;
  return decimal.digits.toString().replace(/0+$/, '').length;
}

/** Converts a positive amount in the currency's major unit into minor units, refusing any rounding. */
export function parseAmount(value: number, currency: string): AmountParse {
  const exponent = currencyExponent(currency);
  if (exponent === undefined) return { ok: false, problem: 'unknown_currency' };
  const decimal = decimalOf(value);
  if (!decimal) return { ok: false, problem: 'not_a_number' };
  if (decimal.negative || decimal.digits === 0n) return { ok: false, problem: 'not_positive' };
  if (significantDigits(decimal) > significantDigitsMax) return { ok: false, problem: 'too_many_digits' };
  const trimmed = trimTrailingZeros(decimal);
  if (trimmed.scale > exponent) return { ok: false, problem: 'too_many_decimals' };
  return { ok: true, minor: trimmed.digits * 10n ** BigInt(exponent - trimmed.scale) };
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

/** The JSON number for an amount: exact, since minor units never exceed 15 significant digits. */
export function minorToNumber(minor: bigint, currency: string): number {
  return Number(formatMinor(minor, currency));
}

/** Rounds numerator / denominator half-up (away from zero at .5) for non-negative operands. */
export function divideHalfUp(numerator: bigint, denominator: bigint): bigint {
  if (denominator <= 0n || numerator < 0n) throw new Error('divideHalfUp takes a non-negative numerator and a positive denominator');
  return (numerator * 2n + denominator) / (denominator * 2n);
}

function trimTrailingZeros(decimal: Decimal): Decimal {
  let { digits, scale } = decimal;
  while (scale > 0 && digits % 10n === 0n) {
    digits /= 10n;
    scale -= 1;
  }
  return { ...decimal, digits, scale };
}
