/**
 * Charges of an installment execution (docs/loans.md, "The execution"), each rounded half-up to the
 * minor unit: commission = max(amount × commissionRate, minimumCommission), fee = fixedFee, tax =
 * (commission + fee) × taxRate.
 */
import { decimalOf, divideHalfUp } from '../money.js';

export interface ChargeTerms {
  commissionRate: string;
  minimumCommissionMinor: bigint;
  fixedFeeMinor: bigint;
  taxRate: string;
}

export interface Charges {
  commissionMinor: bigint;
  feeMinor: bigint;
  taxMinor: bigint;
}

export function chargesFor(amountMinor: bigint, terms: ChargeTerms): Charges {
  const proportional = multiplyHalfUp(amountMinor, terms.commissionRate);
  const commissionMinor = proportional > terms.minimumCommissionMinor ? proportional : terms.minimumCommissionMinor;
  const feeMinor = terms.fixedFeeMinor;
  const taxMinor = multiplyHalfUp(commissionMinor + feeMinor, terms.taxRate);
  return { commissionMinor, feeMinor, taxMinor };
}

/** minor × rate, exactly, then half-up to the minor unit. */
export function multiplyHalfUp(minor: bigint, rate: string): bigint {
  const decimal = decimalOf(Number(rate));
  if (!decimal || decimal.negative) throw new Error(`invalid rate ${rate}`);
  return divideHalfUp(minor * decimal.digits, 10n ** BigInt(decimal.scale));
}
