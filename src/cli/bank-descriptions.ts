/**
 * What `coregate accounts show`, `term-deposits show` and `facilities show` print for a person:
 * a record as aligned labelled lines, and its lists (postings, installments) as tables. With
 * `--json` the commands print the views themselves (src/operator/bank-views.ts), unchanged.
 * Amounts are the views' exact decimal strings followed by their currency, as `accounts list` and
 * the client commands print them; nothing is converted to a number on the way.
 */
import type { AccountView, Money, loanFacilityView, postingView, termDepositView } from '../operator/bank-views.js';
import { fields, table } from './command-io.js';

type PostingView = ReturnType<typeof postingView>;
type TermDepositView = ReturnType<typeof termDepositView>;
type LoanFacilityView = ReturnType<typeof loanFacilityView>;

/** An exact amount with its currency: "1500.50 USD". */
export function formatMoney(money: Money): string {
  return `${money.amount} ${money.currency}`;
}

export function describeAccount(shown: { account: AccountView; postings: PostingView[]; more: boolean }): string {
  const { account, postings, more } = shown;
  const record = fields([
    ['Account', account.accountNumber],
    ['Customer', account.customerReference ?? '-'],
    ['Kind', account.kind],
    ['Status', account.status],
    ['Balance', formatMoney(account.balance)],
    ['Opened', account.createdAt],
  ]);
  if (postings.length === 0) return `${record}\n\nNo postings.`;
  const rows = postings.map((posting) => [
    posting.businessDate,
    posting.reference,
    posting.kind,
    posting.description ?? '-',
    formatMoney(posting.amount),
    formatMoney(posting.balanceAfter),
  ]);
  // The page is the newest postings: say so when older ones were left out, and how to see them.
  const older = more ? `\n(older postings not shown: --limit N shows up to 500)` : '';
  return `${record}\n\nLatest postings (newest first):\n${table(['BUSINESS DATE', 'REFERENCE', 'KIND', 'DESCRIPTION', 'AMOUNT', 'BALANCE AFTER'], rows)}${older}`;
}

export function describeTermDeposit(deposit: TermDepositView): string {
  return fields([
    ['Term deposit', deposit.termDepositAccount],
    ['Customer', deposit.customerReference],
    ['Status', deposit.status],
    ['Product', `${deposit.product.productCode} / ${deposit.product.componentCode}`],
    ['Principal', formatMoney(deposit.principal)],
    ['Rate', `${deposit.ratePercent} % (${deposit.dayCount})`],
    ['Value date', deposit.valueDate],
    ['Maturity date', `${deposit.maturityDate} (${deposit.numberOfDays} days)`],
    ['Expected interest', formatMoney(deposit.expectedInterest)],
    ['Source account', deposit.sourceAccount],
    ['Interest account', deposit.interestSettlementAccount],
    ['Operation', deposit.operationReference],
    ['Created', deposit.createdAt],
  ]);
}

export function describeFacility(facility: LoanFacilityView): string {
  const record = fields([
    ['Loan facility', facility.merchandisingLoanId],
    ['Customer', facility.customerReference],
    ['Type', `${facility.loanType} (${facility.parameterType})`],
    ['Status', facility.status],
    ['Final maturity', facility.finalMaturityDate],
    ['Approved limit', formatMoney(facility.approvedLimit)],
    ['Limit used', `${formatMoney(facility.limitUsed)} (${facility.limitUsedPercent} %)`],
    ['Outstanding', formatMoney(facility.outstanding)],
  ]);
  if (facility.installments.length === 0) return `${record}\n\nNo installments.`;
  const rows = facility.installments.map((installment) => [
    String(installment.sequence),
    installment.dueDate,
    installment.status,
    formatMoney(installment.amount),
    formatMoney(installment.paid),
    formatMoney(installment.outstanding),
  ]);
  return `${record}\n\nInstallments:\n${table(['SEQUENCE', 'DUE DATE', 'STATUS', 'AMOUNT', 'PAID', 'OUTSTANDING'], rows)}`;
}
