/**
 * The records of the reference core an operation reads and writes (an operation's core-handler.ts,
 * src/operations/<operation>/): accounts and their ledger, customers and products, term deposits,
 * loan facilities and their installments. Part of the core's storage (repository.ts, whose rules
 * it keeps: reads that decide a rule follow the locks of the rows they read; a write may be
 * deferred inside a caller's unit of work).
 */
import type { Account, Customer, Installment, LoanExecution, LoanFacility, TermDepositContract, TermDepositProduct } from '../core/domain.js';
import type { Movement } from '../core/ledger/movement.js';

export interface OperationRepository {
  /**
   * Locks the accounts' rows for the rest of the transaction, in account-number order, and
   * answers them as locked (an account that does not exist is absent from the map).
   */
  lockAccounts(accountNumbers: readonly string[]): Promise<ReadonlyMap<string, Account>>;
  findCustomer(customerReference: string): Promise<Customer | undefined>;
  findAccount(accountNumber: string): Promise<Account | undefined>;
  /** Creates an account with a zero balance if it does not exist. */
  openAccount(account: Omit<Account, 'balanceMinor'>): Promise<void>;
  findProduct(productCode: string, componentCode: string): Promise<TermDepositProduct | undefined>;
  /** Applies a balanced movement; a line a guarded account cannot take is a LedgerInvariantError. */
  postMovement(movement: Movement): Promise<void>;

  insertTermDeposit(contract: TermDepositContract): Promise<void>;
  findTermDeposit(contractNumber: string): Promise<TermDepositContract | undefined>;
  findTermDepositByReference(reference: string): Promise<TermDepositContract | undefined>;

  /**
   * Locks the installment's and then the facility's row for the rest of the transaction and
   * answers them as locked (absent when they do not exist).
   */
  lockInstallment(loanId: string, sequence: number): Promise<{ installment: Installment | undefined; facility: LoanFacility | undefined }>;
  findFacility(loanId: string): Promise<LoanFacility | undefined>;
  findInstallment(loanId: string, sequence: number): Promise<Installment | undefined>;
  /** Adds a payment to the installment and to the facility's executed total. */
  recordInstallmentPayment(loanId: string, sequence: number, amountMinor: bigint): Promise<void>;
  insertLoanExecution(execution: LoanExecution): Promise<void>;
  findLoanExecutionByReference(reference: string): Promise<LoanExecution | undefined>;
}
