/**
 * The bank as operators see it (the console, the operator API, the operator toolkit): the core's
 * records, read through the port's read side (CoreRecords), turned into views whose amounts are
 * exact decimal strings with their currency, formatted from minor units. The same views whether
 * the core is embedded or remote (`--core-url`): nothing here reads a table.
 */
import { maturedStatus } from '../core/end-of-day/maturity.js';
import { formatMinor } from '../core/money.js';
import type { AccountRecord, CoreRecords, LoanFacilityRecord, PostingRecord, TermDepositRecord } from '../core/port.js';

/** An exact amount: a decimal string in the currency's major unit. */
export interface Money {
  amount: string;
  currency: string;
}

export function money(minor: bigint, currency: string): Money {
  return { amount: formatMinor(minor, currency), currency };
}

/** Rows answered per list at most (each list's own `limit` is bounded by it). */
export const bankRowsMax = 500;
/** Postings a balance chart shows at most: the newest ones. */
export const balancePointsMax = 500;
/** How deep a postings page may start: the running balance sums every newer posting. */
export const postingsOffsetMax = 10_000;

export interface AccountView {
  accountNumber: string;
  customerReference: string | null;
  kind: string;
  status: string;
  currency: string;
  balance: Money;
  createdAt: string;
}

export function accountView(account: AccountRecord): AccountView {
  return {
    accountNumber: account.accountNumber,
    customerReference: account.customerReference,
    kind: account.kind,
    status: account.status,
    currency: account.currency,
    balance: money(account.balanceMinor, account.currency),
    createdAt: account.createdAt,
  };
}

export function postingView(posting: PostingRecord) {
  return {
    movementId: posting.movementId,
    line: posting.line,
    reference: posting.reference,
    kind: posting.kind,
    description: posting.description,
    businessDate: posting.businessDate,
    createdAt: posting.createdAt,
    amount: money(posting.amountMinor, posting.currency),
    balanceAfter: money(posting.balanceAfterMinor, posting.currency),
  };
}

export function termDepositView(deposit: TermDepositRecord) {
  return {
    termDepositAccount: deposit.contractNumber,
    customerReference: deposit.customerReference,
    product: { productCode: deposit.productCode, componentCode: deposit.componentCode },
    principal: money(deposit.principalMinor, deposit.currency),
    ratePercent: deposit.ratePercent,
    dayCount: deposit.dayCount,
    valueDate: deposit.valueDate,
    maturityDate: deposit.maturityDate,
    numberOfDays: deposit.numberOfDays,
    expectedInterest: money(deposit.expectedInterestMinor, deposit.currency),
    /**
     * What the maturity paid to the interest settlement account; null until the deposit matured.
     * The maturity pays exactly the expected interest (src/core/end-of-day/maturity.ts computes
     * both with interestAtMaturityMinor): a Matured deposit's interest is a fact, no longer an
     * expectation, and the console labels it so.
     */
    interestPaid: deposit.status === maturedStatus ? money(deposit.expectedInterestMinor, deposit.currency) : null,
    sourceAccount: deposit.sourceAccount,
    interestSettlementAccount: deposit.interestAccount,
    operationReference: deposit.operationReference,
    status: deposit.status,
    createdAt: deposit.createdAt,
  };
}

/** A facility with its installments, outstanding and how much of the limit is used. */
export function loanFacilityView(facility: LoanFacilityRecord) {
  const { currency } = facility;
  let outstandingMinor = 0n;
  const installments = facility.installments.map((installment) => {
    const owed = installment.amountMinor - installment.paidMinor;
    outstandingMinor += owed;
    return {
      sequence: installment.sequence,
      dueDate: installment.dueDate,
      amount: money(installment.amountMinor, currency),
      paid: money(installment.paidMinor, currency),
      outstanding: money(owed, currency),
      status: installment.status,
    };
  });
  const limitMinor = facility.approvedLimitMinor;
  const usedMinor = facility.executedTotalMinor;
  return {
    merchandisingLoanId: facility.loanId,
    customerReference: facility.customerReference,
    loanType: facility.loanType,
    parameterType: facility.parameterType,
    status: facility.status,
    finalMaturityDate: facility.finalMaturityDate,
    approvedLimit: money(limitMinor, currency),
    limitUsed: money(usedMinor, currency),
    /** Percent of the approved limit executed, two decimals, rounded down (exact integer arithmetic). */
    limitUsedPercent: limitMinor === 0n ? '0.00' : formatMinor((usedMinor * 10_000n) / limitMinor, 'USD'),
    outstanding: money(outstandingMinor, currency),
    installments,
  };
}

/** A page of an account's postings, newest first, each with the balance just after it. */
export async function postingsPage(records: CoreRecords, accountNumber: string, limit: number, offset: number) {
  const page = await records.listPostings(accountNumber, { limit, offset });
  return { postings: (page?.items ?? []).map(postingView), limit, offset, more: page?.more ?? false };
}

/** The account's balance after each of its newest postings, oldest first: the points of a chart. */
export async function balanceHistory(records: CoreRecords, account: AccountView) {
  const page = await records.listPostings(account.accountNumber, { limit: balancePointsMax, offset: 0 });
  const points = (page?.items ?? []).map((posting) => ({ at: posting.createdAt, businessDate: posting.businessDate, reference: posting.reference, balance: money(posting.balanceAfterMinor, account.currency) }));
  return { accountNumber: account.accountNumber, currency: account.currency, points: points.reverse(), truncated: page?.more ?? false };
}
