/**
 * The reference core's records as domain values: what the rules read. Money is bigint minor units
 * with its currency beside it; dates are calendar dates (YYYY-MM-DD). No storage type leaks here:
 * the store maps its rows to these.
 */
import type { DayCount } from './term-deposits/interest.js';

export type { DayCount };

/** Customers and accounts are Active, or Blocked / Closed / Inactive as a bank's data says. */
export const activeStatus = 'Active';

export interface Customer {
  customerReference: string;
  name: string | null;
  status: string;
}

export interface Account {
  accountNumber: string;
  customerReference: string | null;
  currency: string;
  status: string;
  kind: string;
  balanceMinor: bigint;
}

export interface TermDepositProduct {
  productCode: string;
  componentCode: string;
  active: boolean;
  currencies: string[];
  /** The product's limits as the decimals of the data file, e.g. "1000.00". */
  minAmount: string;
  maxAmount: string;
  minDays: number;
  maxDays: number;
  dayCount: DayCount;
}

/** A term deposit contract as the core keeps it. */
export interface TermDepositContract {
  contractNumber: string;
  customerReference: string;
  productCode: string;
  componentCode: string;
  principalMinor: bigint;
  currency: string;
  /** Annual rate in percent, as the exact decimal the client sent ("5.25"). */
  ratePercent: string;
  dayCount: DayCount;
  valueDate: string;
  maturityDate: string;
  numberOfDays: number;
  sourceAccount: string;
  interestAccount: string;
  description: string | null;
  operationReference: string;
  status: string;
}

export interface LoanFacility {
  loanId: string;
  customerReference: string;
  loanType: string;
  parameterType: string;
  currency: string;
  approvedLimitMinor: bigint;
  executedTotalMinor: bigint;
  status: string;
  finalMaturityDate: string;
  fixedFeeMinor: bigint;
  /** Rates as decimals, e.g. "0.0015" and "0.16". */
  commissionRate: string;
  minimumCommissionMinor: bigint;
  taxRate: string;
}

export interface Installment {
  loanId: string;
  sequence: number;
  dueDate: string;
  amountMinor: bigint;
  paidMinor: bigint;
}

export interface LoanExecution {
  operationId: string;
  executionReference: string;
  loanId: string;
  sequence: number;
  amountMinor: bigint;
  commissionMinor: bigint;
  feeMinor: bigint;
  taxMinor: bigint;
  paymentAccount: string;
  expenseAccount: string;
  facilityStatus: 'Executed' | 'PartiallyExecuted';
  executedAt: string;
}
