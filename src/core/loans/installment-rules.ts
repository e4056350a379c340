/**
 * The installment execution's rules that need the core's records (docs/loans.md, "Checks, in
 * order"), as a pure function: facility, installment and accounts in, the amount, the charges and
 * one balanced movement out (the payment account pays the amount to the facility, the expense
 * account pays commission, fee and tax to the bank's income accounts), or the first broken rule.
 */
import { accept, refuse, type Decision } from '../decision.js';
import { activeStatus, type Account, type Installment, type LoanFacility } from '../domain.js';
import { toEpochDay } from '../calendar-date.js';
import { errorCatalogue as E } from '../error-catalogue.js';
import { canPost, customerAccountKind, mergeSameAccount, type PostingLine } from '../ledger/movement.js';
import { formatMinor } from '../money.js';
import { chargesFor, type Charges } from './charges.js';
import type { LoanInstallmentExecution } from './execution-request.js';

/** Reserved parameter types, refused until the core supports them (docs/loans.md, "Checks, in order"). */
export const reservedParameterTypes = ['LetterOfCredit', 'BankerAcceptance'];

/** The bank's income accounts of the charges, one per currency. */
export const incomeAccounts = {
  commission: (currency: string) => `INCOME-COMMISSION-${currency}`,
  fee: (currency: string) => `INCOME-FEE-${currency}`,
  tax: (currency: string) => `TAX-PAYABLE-${currency}`,
};

export interface InstallmentFacts {
  facility: LoanFacility | undefined;
  installment: Installment | undefined;
  payment: Account | undefined;
  expense: Account | undefined;
}

export interface InstallmentPlan extends Charges {
  loanId: string;
  sequence: number;
  currency: string;
  amountMinor: bigint;
  /** The facility's status after the execution. */
  facilityStatus: 'Executed' | 'PartiallyExecuted';
  /** Merged per account: one account paying amount and charges is one debit. */
  lines: PostingLine[];
  /** Internal accounts the lines credit, created on first use. */
  incomeAccounts: string[];
}

export function decideInstallment(command: LoanInstallmentExecution, facts: InstallmentFacts): Decision<InstallmentPlan> {
  const { facility, installment, payment, expense } = facts;
  if (!facility) return refuse(E.facilityNotFound, `merchandising loan facility ${command.loanId} not found`);
  if (!installment) return refuse(E.installmentNotFound, `facility ${facility.loanId} has no installment ${command.sequence}`);
  if (!payment) return refuse(E.paymentAccountNotFound, `payment account ${command.paymentAccount} not found`);
  if (!expense) return refuse(E.expenseAccountNotFound, `expense account ${command.expenseAccount} not found`);

  if (command.maturityDate !== undefined && toEpochDay(command.maturityDate) > toEpochDay(facility.finalMaturityDate)) {
    return refuse(E.maturityAfterFinalMaturity, `loanMaturityDate ${command.maturityDate} is after the facility's final maturity ${facility.finalMaturityDate}`);
  }
  if (facility.status !== activeStatus) return refuse(E.facilityClosed, `facility ${facility.loanId} is ${facility.status.toLowerCase()}`);
  const outstanding = installment.amountMinor - installment.paidMinor;
  if (outstanding <= 0n) return refuse(E.installmentPaid, `installment ${installment.sequence} of facility ${facility.loanId} is already paid`);

  if (reservedParameterTypes.includes(command.parameterType)) {
    return refuse(E.parameterTypeNotSupported, `merchandisingLoanFacilityParameterType ${command.parameterType} is not supported yet`);
  }
  if (command.parameterType !== facility.parameterType) return refuse(E.parameterTypeMismatch, `facility ${facility.loanId} is ${facility.parameterType}, not ${command.parameterType}`);
  if (command.loanType !== facility.loanType) return refuse(E.loanTypeMismatch, `facility ${facility.loanId} has loan type ${facility.loanType}, not ${command.loanType}`);
  if (command.currency !== undefined && command.currency !== facility.currency) {
    return refuse(E.loanCurrencyMismatch, `the amount is in ${command.currency}, facility ${facility.loanId} in ${facility.currency}`);
  }
  const accountProblem = facilityAccountProblem(payment, 'payment', facility) ?? facilityAccountProblem(expense, 'expense', facility);
  if (accountProblem) return accountProblem;

  const amountMinor = command.amountMinor ?? outstanding;
  const money = (minor: bigint) => `${formatMinor(minor, facility.currency)} ${facility.currency}`;
  if (amountMinor > outstanding) {
    return refuse(E.amountAboveOutstanding, `amount ${money(amountMinor)} is above installment ${installment.sequence}'s outstanding ${money(outstanding)}`);
  }
  if (facility.executedTotalMinor + amountMinor > facility.approvedLimitMinor) {
    return refuse(E.approvedLimitExceeded, `amount ${money(amountMinor)} would take facility ${facility.loanId} above its approved limit ${money(facility.approvedLimitMinor)}`);
  }

  const charges = chargesFor(amountMinor, facility);
  const { currency } = facility;
  const chargesTotal = charges.commissionMinor + charges.feeMinor + charges.taxMinor;
  const credits: Array<[string, bigint]> = [
    [incomeAccounts.commission(currency), charges.commissionMinor],
    [incomeAccounts.fee(currency), charges.feeMinor],
    [incomeAccounts.tax(currency), charges.taxMinor],
  ].filter((credit): credit is [string, bigint] => credit[1] !== 0n);
  const lines = mergeSameAccount([
    { accountNumber: payment.accountNumber, amountMinor: -amountMinor, currency },
    { accountNumber: facility.loanId, amountMinor, currency },
    { accountNumber: expense.accountNumber, amountMinor: -chargesTotal, currency },
    ...credits.map(([accountNumber, value]) => ({ accountNumber, amountMinor: value, currency })),
  ]);

  // The first customer account, in account-number order, that cannot pay its line is refused:
  // the same account a guarded ledger update would have stopped at.
  const accounts = new Map([payment, expense].map((account) => [account.accountNumber, account]));
  for (const line of [...lines].sort((a, b) => (a.accountNumber < b.accountNumber ? -1 : a.accountNumber > b.accountNumber ? 1 : 0))) {
    const account = accounts.get(line.accountNumber);
    if (!account || canPost(account, line.amountMinor)) continue;
    if (account.accountNumber === payment.accountNumber) {
      const alsoCharges = payment.accountNumber === expense.accountNumber ? ` plus charges of ${money(chargesTotal)}` : '';
      return refuse(E.insufficientFundsPayment, `payment account ${payment.accountNumber} cannot cover ${money(amountMinor)}${alsoCharges}`);
    }
    return refuse(E.insufficientFundsExpense, `expense account ${expense.accountNumber} cannot cover charges of ${money(chargesTotal)}`);
  }

  return accept({
    loanId: facility.loanId,
    sequence: installment.sequence,
    currency,
    amountMinor,
    ...charges,
    facilityStatus: amountMinor === outstanding ? 'Executed' : 'PartiallyExecuted',
    lines,
    incomeAccounts: credits.map(([accountNumber]) => accountNumber),
  });
}

function facilityAccountProblem(account: Account, role: string, facility: LoanFacility): Decision<never> | undefined {
  if (account.currency !== facility.currency) {
    return refuse(E.loanCurrencyMismatch, `${role} account ${account.accountNumber} is in ${account.currency}, facility ${facility.loanId} in ${facility.currency}`);
  }
  if (account.status !== activeStatus) return refuse(E.loanAccountNotActive, `${role} account ${account.accountNumber} is ${account.status.toLowerCase()}`);
  if (account.kind !== customerAccountKind || account.customerReference !== facility.customerReference) {
    return refuse(E.loanAccountNotCustomers, `${role} account ${account.accountNumber} does not belong to customer ${facility.customerReference}`);
  }
  return undefined;
}
