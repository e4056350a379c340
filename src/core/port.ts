/**
 * The port through which the business API reaches a core banking system. coregate ships a
 * reference core (reference-core.ts); a bank plugs in an adapter for its own core by implementing
 * this interface.
 *
 * Write operations take the caller's unit of work: the reference core writes its postings and
 * contract in it, so they commit in one transaction with the API's correlation and audit records.
 * An adapter for a remote core calls its system and may ignore the unit of work; the API then
 * reconciles unknown outcomes through the `find...ByReference` methods.
 */
import type { Transaction } from 'kysely';
import type { Database } from '../store/schema.js';
import type { BusinessCalendar } from './business-calendar.js';
import type { TermDepositInitiation } from './term-deposits/initiation.js';
import type { TermDepositRecord } from '../store/banking.js';
import type { LoanInstallmentExecution } from './loans/execution-request.js';

export type UnitOfWork = Transaction<Database>;

/** A term deposit contract as the core keeps it, with the interest expected at maturity. */
export interface TermDeposit extends Omit<TermDepositRecord, 'createdAt'> {
  expectedInterestMinor: bigint;
}

export interface LoanInstallmentResult {
  merchandisingLoanOperationId: string;
  executionReference: string;
  executionDateTime: string;
  /** The facility's status after the execution: Executed or PartiallyExecuted. */
  facilityStatus: 'Executed' | 'PartiallyExecuted';
  loanId: string;
  sequence: number;
  currency: string;
  amountMinor: bigint;
  commissionMinor: bigint;
  feeMinor: bigint;
  taxMinor: bigint;
}

export type DirectoryStatus = 'Active' | 'Disabled' | 'Blocked' | undefined;

export interface CoreBankingPort {
  /** Debits the source account and creates the contract; throws BusinessRefusal for a broken rule. */
  initiateTermDeposit(uow: UnitOfWork, reference: string, command: TermDepositInitiation): Promise<TermDeposit>;
  retrieveTermDeposit(contractNumber: string): Promise<TermDeposit | undefined>;
  /** Reconciliation: the term deposit an operation reference created, if it happened. */
  findTermDepositByReference(reference: string): Promise<TermDeposit | undefined>;
  /** Pays an installment from the payment account and the charges from the expense account. */
  executeLoanInstallment(uow: UnitOfWork, reference: string, command: LoanInstallmentExecution, executedAt: Date): Promise<LoanInstallmentResult>;
  /** Reconciliation: the execution an operation reference made, if it happened. */
  findLoanExecutionByReference(reference: string): Promise<LoanInstallmentResult | undefined>;
  userStatus(login: string): Promise<DirectoryStatus>;
  workstationStatus(id: string): Promise<DirectoryStatus>;
  calendar(): BusinessCalendar;
}

/** The core could not be reached or answered nonsense: the outcome is unknown (502). */
export class CoreUnavailable extends Error {
  override name = 'CoreUnavailable';
}
