/**
 * A term deposit's maturity at end of day (docs/business-days.md, "What the end of day of day b
 * does"): the principal goes back from the deposit's account to the source account and the
 * interest, exactly as the retrieve computes it (interest.ts), from the bank's interest expense
 * account to the interest settlement account, in one balanced movement.
 */
import type { Account, TermDepositContract } from '../domain.js';
import { LedgerInvariantError, mergeSameAccount, type PostingLine } from '../ledger/movement.js';
import { formatMinor } from '../money.js';
import { toEpochDay } from '../calendar-date.js';
import { interestAtMaturityMinor } from '../term-deposits/interest.js';

export const maturedStatus = 'Matured';
export const activeStatus = 'Active';
/** The movement kind of a maturity repayment. */
export const maturityMovementKind = 'term_deposit_maturity';

/** The bank's internal account that pays term deposit interest, one per currency. */
export function interestExpenseAccount(currency: string): string {
  return `INTEREST-EXPENSE-${currency}`;
}

/** The movement's reference: one maturity per contract (the contract number is unique). */
export function maturityReference(contractNumber: string): string {
  return `maturity-${contractNumber}`;
}

/** Whether the end of day of `closedDay` matures the contract: Active and maturing on or before it. */
export function maturesBy(contract: Pick<TermDepositContract, 'status' | 'maturityDate'>, closedDay: string): boolean {
  return contract.status === activeStatus && toEpochDay(contract.maturityDate) <= toEpochDay(closedDay);
}

export interface MaturityPlan {
  principalMinor: bigint;
  interestMinor: bigint;
  lines: PostingLine[];
}

/**
 * The repayment's lines. The deposit's account must hold exactly the principal (constitution put
 * it there and nothing else posts to it): anything else is a broken ledger, never repaid blindly.
 */
export function planMaturity(contract: TermDepositContract, depositAccount: Pick<Account, 'balanceMinor' | 'currency'> | undefined): MaturityPlan {
  const { contractNumber, currency, principalMinor } = contract;
  if (!depositAccount || depositAccount.currency !== currency || depositAccount.balanceMinor !== principalMinor) {
    throw new LedgerInvariantError(
      `term deposit ${contractNumber}: its account holds ${depositAccount ? `${depositAccount.balanceMinor} ${depositAccount.currency}` : 'nothing (no account)'}, not the principal ${principalMinor} ${currency}`,
    );
  }
  const interestMinor = interestAtMaturityMinor(principalMinor, contract.ratePercent, contract.numberOfDays, contract.dayCount);
  const lines = mergeSameAccount([
    { accountNumber: contractNumber, amountMinor: -principalMinor, currency },
    { accountNumber: contract.sourceAccount, amountMinor: principalMinor, currency },
    { accountNumber: interestExpenseAccount(currency), amountMinor: -interestMinor, currency },
    { accountNumber: contract.interestAccount, amountMinor: interestMinor, currency },
  ]);
  return { principalMinor, interestMinor, lines };
}

/** The `termDepositMatured` event's data: amounts as decimal strings with their currency. */
export function maturityEventData(contract: TermDepositContract, plan: MaturityPlan, closedDay: string): Record<string, unknown> {
  const { currency } = contract;
  return {
    contractNumber: contract.contractNumber,
    customerReference: contract.customerReference,
    maturityDate: contract.maturityDate,
    repaidOn: closedDay,
    principal: { amount: formatMinor(plan.principalMinor, currency), currency },
    interest: { amount: formatMinor(plan.interestMinor, currency), currency },
    sourceAccount: contract.sourceAccount,
    interestAccount: contract.interestAccount,
    status: maturedStatus,
  };
}
