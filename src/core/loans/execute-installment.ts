/**
 * The reference core's installment execution (CONTRACT §7): the rules that need stored data, then
 * one balanced movement: the payment account pays the amount to the facility, the expense account
 * pays commission, fee and tax to the bank's income accounts. Installment and facility totals are
 * updated by guarded statements, so concurrent executions can never overpay either.
 */
import { randomInt, randomUUID } from 'node:crypto';
import { findAccount, type AccountRecord } from '../../store/banking.js';
import { ensureInternalAccount, InsufficientFunds, postMovement, type PostingLine } from '../../store/ledger.js';
import {
  addExecutedAmount,
  findFacility,
  findInstallment,
  insertLoanExecution,
  lockInstallment,
  payInstallment,
  type LoanExecutionRecord,
  type LoanFacilityRecord,
} from '../../store/loans.js';
import type { BusinessCalendar } from '../business-calendar.js';
import { toEpochDay } from '../calendar-date.js';
import { errorCatalogue as E, BusinessRefusal } from '../error-catalogue.js';
import { formatMinor } from '../money.js';
import type { UnitOfWork } from '../port.js';
import { chargesFor } from './charges.js';
import type { LoanInstallmentExecution } from './execution-request.js';

/** SPEC: reserved parameter types, refused until the core supports them. */
export const reservedParameterTypes = ['LetterOfCredit', 'BankerAcceptance'];
const activeStatus = 'Active';

export const incomeAccounts = {
  commission: (currency: string) => `INCOME-COMMISSION-${currency}`,
  fee: (currency: string) => `INCOME-FEE-${currency}`,
  tax: (currency: string) => `TAX-PAYABLE-${currency}`,
};

export async function executeInstallment(
  uow: UnitOfWork,
  calendar: BusinessCalendar,
  reference: string,
  command: LoanInstallmentExecution,
  executedAt: Date,
): Promise<LoanExecutionRecord> {
  const facility = await findFacility(uow, command.loanId);
  if (!facility) throw new BusinessRefusal(E.facilityNotFound, `merchandising loan facility ${command.loanId} not found`);
  await lockInstallment(uow, facility.loanId, command.sequence);
  const installment = await findInstallment(uow, facility.loanId, command.sequence);
  if (!installment) throw new BusinessRefusal(E.installmentNotFound, `facility ${facility.loanId} has no installment ${command.sequence}`);
  const payment = await findAccount(uow, command.paymentAccount);
  if (!payment) throw new BusinessRefusal(E.paymentAccountNotFound, `payment account ${command.paymentAccount} not found`);
  const expense = await findAccount(uow, command.expenseAccount);
  if (!expense) throw new BusinessRefusal(E.expenseAccountNotFound, `expense account ${command.expenseAccount} not found`);

  if (command.maturityDate !== undefined && toEpochDay(command.maturityDate) > toEpochDay(facility.finalMaturityDate)) {
    throw new BusinessRefusal(
      E.maturityAfterFinalMaturity,
      `loanMaturityDate ${command.maturityDate} is after the facility's final maturity ${facility.finalMaturityDate}`,
    );
  }
  if (facility.status !== activeStatus) throw new BusinessRefusal(E.facilityClosed, `facility ${facility.loanId} is ${facility.status.toLowerCase()}`);
  const outstanding = installment.amountMinor - installment.paidMinor;
  if (outstanding <= 0n) throw new BusinessRefusal(E.installmentPaid, `installment ${installment.sequence} of facility ${facility.loanId} is already paid`);

  if (reservedParameterTypes.includes(command.parameterType)) {
    throw new BusinessRefusal(E.parameterTypeNotSupported, `merchandisingLoanFacilityParameterType ${command.parameterType} is not supported yet`);
  }
  if (command.parameterType !== facility.parameterType) {
    throw new BusinessRefusal(E.parameterTypeMismatch, `facility ${facility.loanId} is ${facility.parameterType}, not ${command.parameterType}`);
  }
  if (command.loanType !== facility.loanType) {
    throw new BusinessRefusal(E.loanTypeMismatch, `facility ${facility.loanId} has loan type ${facility.loanType}, not ${command.loanType}`);
  }
  if (command.currency !== undefined && command.currency !== facility.currency) {
    throw new BusinessRefusal(E.loanCurrencyMismatch, `the amount is in ${command.currency}, facility ${facility.loanId} in ${facility.currency}`);
  }
  checkAccount(payment, 'payment', facility);
  checkAccount(expense, 'expense', facility);

  const amountMinor = command.amountMinor ?? outstanding;
  if (amountMinor > outstanding) {
    throw new BusinessRefusal(
      E.amountAboveOutstanding,
      `amount ${money(amountMinor, facility)} is above installment ${installment.sequence}'s outstanding ${money(outstanding, facility)}`,
    );
  }
  if (!(await addExecutedAmount(uow, facility.loanId, amountMinor))) {
    throw new BusinessRefusal(E.approvedLimitExceeded, `amount ${money(amountMinor, facility)} would take facility ${facility.loanId} above its approved limit ${money(facility.approvedLimitMinor, facility)}`);
  }
  if (!(await payInstallment(uow, facility.loanId, installment.sequence, amountMinor))) {
    // A concurrent execution paid part of it since we read it.
    const now = await findInstallment(uow, facility.loanId, installment.sequence);
    const left = now ? now.amountMinor - now.paidMinor : 0n;
    if (left <= 0n) throw new BusinessRefusal(E.installmentPaid, `installment ${installment.sequence} of facility ${facility.loanId} is already paid`);
    throw new BusinessRefusal(E.amountAboveOutstanding, `amount ${money(amountMinor, facility)} is above installment ${installment.sequence}'s outstanding ${money(left, facility)}`);
  }

  const charges = chargesFor(amountMinor, facility);
  const { currency } = facility;
  const chargeLines: Array<[string, bigint]> = [
    [incomeAccounts.commission(currency), charges.commissionMinor],
    [incomeAccounts.fee(currency), charges.feeMinor],
    [incomeAccounts.tax(currency), charges.taxMinor],
  ];
  const chargesTotal = charges.commissionMinor + charges.feeMinor + charges.taxMinor;
  const lines: PostingLine[] = [
    { accountNumber: payment.accountNumber, amountMinor: -amountMinor, currency },
    { accountNumber: facility.loanId, amountMinor, currency },
  ];
  if (chargesTotal > 0n) lines.push({ accountNumber: expense.accountNumber, amountMinor: -chargesTotal, currency });
  for (const [account, value] of chargeLines) {
    if (value === 0n) continue;
    await ensureInternalAccount(uow, account, currency);
    lines.push({ accountNumber: account, amountMinor: value, currency });
  }
  try {
    await postMovement(uow, {
      id: randomUUID(),
      reference,
      kind: 'loan_installment_execution',
      description: `Installment ${installment.sequence} of merchandising loan ${facility.loanId}`,
      businessDate: calendar.businessDate,
      lines: mergeSameAccount(lines),
    });
  } catch (error) {
    if (error instanceof InsufficientFunds) {
      const isPayment = error.accountNumber === payment.accountNumber;
      throw new BusinessRefusal(
        isPayment ? E.insufficientFundsPayment : E.insufficientFundsExpense,
        isPayment
          ? `payment account ${payment.accountNumber} cannot cover ${money(amountMinor, facility)}${payment.accountNumber === expense.accountNumber ? ` plus charges of ${money(chargesTotal, facility)}` : ''}`
          : `expense account ${expense.accountNumber} cannot cover charges of ${money(chargesTotal, facility)}`,
      );
    }
    throw error;
  }
  const execution: LoanExecutionRecord = {
    operationId: `MLO${String(randomInt(0, 2 ** 47)).padStart(15, '0')}`,
    executionReference: reference,
    loanId: facility.loanId,
    sequence: installment.sequence,
    amountMinor,
    ...charges,
    paymentAccount: payment.accountNumber,
    expenseAccount: expense.accountNumber,
    facilityStatus: amountMinor === outstanding ? 'Executed' : 'PartiallyExecuted',
    executedAt: executedAt.toISOString(),
  };
  await insertLoanExecution(uow, execution);
  return execution;
}

function checkAccount(account: AccountRecord, role: string, facility: LoanFacilityRecord): void {
  if (account.currency !== facility.currency) {
    throw new BusinessRefusal(E.loanCurrencyMismatch, `${role} account ${account.accountNumber} is in ${account.currency}, facility ${facility.loanId} in ${facility.currency}`);
  }
  if (account.status !== activeStatus) {
    throw new BusinessRefusal(E.loanAccountNotActive, `${role} account ${account.accountNumber} is ${account.status.toLowerCase()}`);
  }
  if (account.kind !== 'customer' || account.customerReference !== facility.customerReference) {
    throw new BusinessRefusal(E.loanAccountNotCustomers, `${role} account ${account.accountNumber} does not belong to customer ${facility.customerReference}`);
  }
}

/** One account paying both the amount and the charges is one debit of their sum. */
function mergeSameAccount(lines: PostingLine[]): PostingLine[] {
  const merged = new Map<string, PostingLine>();
  for (const line of lines) {
    const existing = merged.get(line.accountNumber);
    merged.set(line.accountNumber, existing ? { ...existing, amountMinor: existing.amountMinor + line.amountMinor } : { ...line });
  }
  return [...merged.values()];
}

function money(minor: bigint, facility: LoanFacilityRecord): string {
  return `${formatMinor(minor, facility.currency)} ${facility.currency}`;
}
