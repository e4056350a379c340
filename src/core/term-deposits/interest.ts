/** Interest expected at maturity (docs/term-deposits.md, "Decisions"): principal × rate/100 × days / basis, half-up. */
import { decimalOf, divideHalfUp } from '../money.js';

export type DayCount = 'ACT/360' | 'ACT/365';

const basisDays: Record<DayCount, bigint> = { 'ACT/360': 360n, 'ACT/365': 365n };

export function interestAtMaturityMinor(principalMinor: bigint, ratePercent: string, numberOfDays: number, dayCount: DayCount): bigint {
  const rate = decimalOf(Number(ratePercent));
  if (!rate || rate.negative) throw new Error(`invalid stored rate ${ratePercent}`);
  const numerator = principalMinor * rate.digits * BigInt(numberOfDays);
  const denominator = 100n * 10n ** BigInt(rate.scale) * basisDays[dayCount];
  return divideHalfUp(numerator, denominator);
}
