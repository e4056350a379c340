/**
 * The port between the business API and a core banking system (docs/core-port.md): the contract a
 * bank implements for its own core. It speaks domain values only: commands and results with money
 * as bigint minor units plus an ISO 4217 currency, calendar dates as YYYY-MM-DD strings, and the
 * operation's reference, a UUID the API assigns before it calls the core.
 *
 * Rules every implementation keeps (the conformance kit, src/conformance and docs/conformance.md, checks them):
 * - **At most once per reference.** A core executes an operation at most once per reference and
 *   keeps the reference with its postings; the same reference again answers the original
 *   outcome, executed or rejected, without a second movement.
 * - **Lookup by reference.** `find...` answers the outcome of a reference, or NotFound when the
 *   core never executed it: the API's reconciler settles unknown outcomes with it.
 * - **Fencing.** `fenceOperation` closes a reference the API gave up on: from then on the core
 *   refuses to execute it (Rejected, NOT_EXECUTED), unless it executed it already; a lookup after
 *   the fence is definitive. The reconciler fences an unknown outcome nobody repeated, so that a
 *   request still on its way to the core can never execute after the client was told it did not.
 * - **Refusals are values.** A broken business rule is `{ status: 'Rejected', refusal }` with a
 *   catalogue entry (docs/errors.md); it is final for that reference.
 * - **Failures throw.** `CoreUnavailable` (unreachable, reset, 5xx, an answer that breaks the
 *   protocol: the API answers 502) and `CoreTimeout` (504) leave the outcome unknown.
 *
 * coregate ships two implementations: the embedded reference core (src/reference-core) and an
 * HTTP adapter for a remote core (src/core-http). A core that shares the API's database may also
 * implement `TransactionalCore`, so that its postings commit in the API's own transaction.
 */
import type { LoanExecution, TermDepositContract } from './domain.js';
import type { BusinessRefusal } from './error-catalogue.js';
import type { LoanInstallmentExecution } from './loans/execution-request.js';
import type { TermDepositInitiation } from './term-deposits/initiation.js';
import type { UnitOfWork } from './unit-of-work.js';

/** A term deposit contract with the interest expected at maturity (docs/term-deposits.md, "Decisions"). */
export interface TermDeposit extends TermDepositContract {
  expectedInterestMinor: bigint;
}

/** What a loan installment execution answers (docs/loans.md, "The execution"). */
export interface LoanInstallmentResult extends LoanExecution {
  currency: string;
}

/** The final outcome of one operation reference. */
export type CoreOutcome<T> = { readonly status: 'Executed'; readonly result: T } | { readonly status: 'Rejected'; readonly refusal: BusinessRefusal };

/** A lookup by reference: the outcome, or NotFound when the core never executed the reference. */
export type CoreLookup<T> = CoreOutcome<T> | { readonly status: 'NotFound' };

/** What one advance of the business date did (docs/business-days.md). */
export interface EndOfDayReport {
  /** The business date before the advance. */
  from: string;
  /** The business date after it (the one asked for). */
  to: string;
  /** The business days whose end of day ran in this call, in order (none when all had run before). */
  daysClosed: string[];
  /** Term deposits that matured, and installments that became overdue, in this call. */
  maturedDeposits: number;
  overdueInstallments: number;
}

/**
 * An event of the core's own making (docs/business-days.md, "Events"), written in the transaction
 * of the change (the core's outbox) and read in order by the API, which turns it into webhook
 * events.
 */
export interface CoreEvent {
  /** Position in the core's event log: strictly increasing (gaps allowed). */
  sequence: number;
  /** Stable UUID: the same event read twice has the same id. */
  id: string;
  type: 'termDeposit.matured' | 'loanInstallment.overdue';
  /** The business day whose end of day made it. */
  businessDate: string;
  /** The reference of the operation that made the contract (a deposit's constitution), when there is one. */
  operationReference: string | null;
  /** JSON-safe details: amounts as decimal strings with their currency. */
  data: Record<string, unknown>;
}

/** A user's or workstation's status in the core's directory; undefined when unknown. */
export type DirectoryStatus = 'Active' | 'Disabled' | 'Blocked' | undefined;

export interface CoreBankingPort {
  /** Debits the source account and creates the contract (docs/term-deposits.md). */
  constituteTermDeposit(reference: string, command: TermDepositInitiation): Promise<CoreOutcome<TermDeposit>>;
  findTermDepositConstitution(reference: string): Promise<CoreLookup<TermDeposit>>;
  /** Pays an installment from the payment account and the charges from the expense account (docs/loans.md, "The execution"). */
  executeLoanInstallment(reference: string, command: LoanInstallmentExecution): Promise<CoreOutcome<LoanInstallmentResult>>;
  findLoanInstallmentExecution(reference: string): Promise<CoreLookup<LoanInstallmentResult>>;
  /** Closes a reference that has not executed: it never will (see Fencing above). */
  fenceOperation(reference: string): Promise<void>;
  retrieveTermDeposit(contractNumber: string): Promise<TermDeposit | undefined>;
  userStatus(login: string): Promise<DirectoryStatus>;
  workstationStatus(id: string): Promise<DirectoryStatus>;
  /** Readiness: resolves when the core answers, rejects with the reason otherwise. */
  ping(): Promise<void>;
  /** The core's business date (YYYY-MM-DD). */
  businessDate(): Promise<string>;
  /**
   * Moves the business date forward to `to`, running end of day once for every business day
   * passed (docs/business-days.md): idempotent per date, resumable after a crash, never backwards.
   */
  advanceBusinessDate(to: string): Promise<EndOfDayReport>;
  /** The core's events after `sequence`, in order, at most `limit` of them. */
  eventsAfter(sequence: number, limit: number): Promise<CoreEvent[]>;
}

/** A page of a list: at most `limit` items from `offset`, and whether more follow. */
export interface PageRequest {
  limit: number;
  offset: number;
}

export interface Page<T> {
  items: T[];
  /** True when items follow this page. */
  more: boolean;
}

/** A customer of the core, with how many customer accounts it holds. */
export interface CustomerRecord {
  customerReference: string;
  name: string | null;
  status: string;
  accounts: number;
}

/** A technical user (the `backbone_user` claim names one) in the core's directory. */
export interface UserRecord {
  login: string;
  status: string;
}

/** A workstation (the `workstation` claim names one) in the core's directory. */
export interface WorkstationRecord {
  id: string;
  status: string;
}

/** The kinds of account a core keeps: a customer's, a term deposit's, a loan's, the bank's own. */
export type AccountKind = 'customer' | 'term_deposit' | 'loan' | 'internal';

/** An account with its live balance in minor units. */
export interface AccountRecord {
  accountNumber: string;
  customerReference: string | null;
  kind: string;
  status: string;
  currency: string;
  balanceMinor: bigint;
  createdAt: string;
}

/** One posting of an account, with the account's balance just after it. */
export interface PostingRecord {
  movementId: string;
  line: number;
  /** The reference of the operation (or end of day, or opening) that made the movement. */
  reference: string;
  kind: string;
  description: string | null;
  businessDate: string;
  createdAt: string;
  amountMinor: bigint;
  balanceAfterMinor: bigint;
  currency: string;
}

/** A term deposit as an operator lists it: the contract, its expected interest, when it was made. */
export interface TermDepositRecord extends TermDeposit {
  createdAt: string;
}

export interface InstallmentRecord {
  sequence: number;
  dueDate: string;
  amountMinor: bigint;
  paidMinor: bigint;
  /** Paid, Due or Overdue (end of day marks overdue ones). */
  status: string;
}

/** A merchandising loan facility with its installments (docs/loans.md, "The facility"). */
export interface LoanFacilityRecord {
  loanId: string;
  customerReference: string;
  loanType: string;
  parameterType: string;
  status: string;
  finalMaturityDate: string;
  currency: string;
  approvedLimitMinor: bigint;
  /** How much of the limit installments executed so far. */
  executedTotalMinor: bigint;
  installments: InstallmentRecord[];
}

/** What `coregate check` proves of a core's ledger: the findings are listed, at most `listedMax` of each kind. */
export interface LedgerReport {
  movements: number;
  accounts: number;
  unbalancedMovements: Array<{ movementId: string; currency: string; totalMinor: string }>;
  balanceMismatches: Array<{ accountNumber: string; storedMinor: string; postedMinor: string }>;
  negativeCustomerAccounts: Array<{ accountNumber: string; balanceMinor: string }>;
  /** Term deposits whose account disagrees with their status (Active: the principal; Matured: zero). */
  termDepositMismatches: Array<{ contractNumber: string; status: string; principalMinor: string; accountBalanceMinor: string | null }>;
}

/**
 * The read side for operators (the console, the operator API and toolkit, `coregate check`): what
 * the core holds, in domain values. Lists are ordered (customers and accounts by their number,
 * term deposits newest first, facilities by id) and paged with `limit` and `offset`. A core that
 * serves it lets every operator view work against it; the reference core does, embedded or over
 * HTTP (docs/core-protocol.md).
 */
export interface CoreRecords {
  listCustomers(page: PageRequest): Promise<Page<CustomerRecord>>;
  /** The directory's technical users, by login (userStatus answers one; operators list them). */
  listUsers(page: PageRequest): Promise<Page<UserRecord>>;
  /** The directory's workstations, by id. */
  listWorkstations(page: PageRequest): Promise<Page<WorkstationRecord>>;
  /** Accounts of one kind (customer when absent), optionally of one customer. */
  listAccounts(filter: { customerReference?: string | undefined; kind?: AccountKind | undefined }, page: PageRequest): Promise<Page<AccountRecord>>;
  findAccount(accountNumber: string): Promise<AccountRecord | undefined>;
  /** An account's postings, newest first, each with the balance after it; undefined when the account does not exist. */
  listPostings(accountNumber: string, page: PageRequest): Promise<Page<PostingRecord> | undefined>;
  listTermDeposits(filter: { status?: string | undefined; contractNumber?: string | undefined }, page: PageRequest): Promise<Page<TermDepositRecord>>;
  listLoanFacilities(filter: { loanId?: string | undefined }, page: PageRequest): Promise<Page<LoanFacilityRecord>>;
  /** Proves the ledger: balanced movements, balances equal to their postings, no customer account below zero, deposits' accounts. */
  checkLedger(listedMax: number): Promise<LedgerReport>;
  /** Which of these operation references have postings (an Executed operation must). */
  postedReferences(references: readonly string[]): Promise<string[]>;
}

/**
 * The data file's core part (docs/sandbox.md, "The data file"): `businessDate`, `calendar`,
 * `users`, `workstations`, `customers`, `accounts`, `termDepositProducts`, `merchandisingLoans`, as
 * JSON. The core checks it; the API's part (realms, webhooks) never goes to the core.
 */
export type CoreDataDocument = Readonly<Record<string, unknown>>;

export const coreDataSections = ['businessDate', 'calendar', 'users', 'workstations', 'customers', 'accounts', 'termDepositProducts', 'merchandisingLoans'] as const;

export interface CoreLoadSummary {
  accountsAdded: number;
}

/**
 * The load side for sandbox data: adds what is missing (records that exist are kept as they are:
 * docs/sandbox.md, "The data file"), in one transaction. A document the core refuses throws
 * `CoreDataRefused`.
 */
export interface CoreDataLoad {
  loadData(document: CoreDataDocument): Promise<CoreLoadSummary>;
}

/** The data file's core part was refused: `field` names where (e.g. `accounts[2].currency`). */
export class CoreDataRefused extends Error {
  override name = 'CoreDataRefused';
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

/** A core with the read side for operators. */
export function hasRecords<T extends CoreBankingPort>(core: T): core is T & CoreRecords {
  return typeof (core as Partial<CoreRecords>).listAccounts === 'function';
}

/** A core with the load side for sandbox data. */
export function hasDataLoad<T extends CoreBankingPort>(core: T): core is T & CoreDataLoad {
  return typeof (core as Partial<CoreDataLoad>).loadData === 'function';
}

/**
 * A core that can join a unit of work of the caller's store: its writes then commit or roll back
 * with the API's operation record and audit record (the embedded reference core:
 * docs/architecture.md, "One transaction with the embedded core").
 */
export interface TransactionalCore extends CoreBankingPort {
  within(unitOfWork: UnitOfWork): CoreBankingPort;
}

export function isTransactional(core: CoreBankingPort): core is TransactionalCore {
  return typeof (core as Partial<TransactionalCore>).within === 'function';
}

/** The core could not be reached, failed, or answered outside its protocol: outcome unknown (502). */
export class CoreUnavailable extends Error {
  override name = 'CoreUnavailable';
}

/** The core did not answer in time: outcome unknown (504). */
export class CoreTimeout extends Error {
  override name = 'CoreTimeout';
}

/** An advance to a date before the core's business date (the date never goes backwards: docs/business-days.md, "The business date"). */
export class BusinessDateBackwards extends Error {
  override name = 'BusinessDateBackwards';
  constructor(
    readonly current: string,
    readonly requested: string,
  ) {
    super(`the business date is ${current} and never goes backwards: ${requested} is before it; ask for ${current} or a later date`);
  }
}

/**
 * The core does not serve a side of the port (a bank's core may serve operations only): the
 * operator views that need its records answer 501 naming it, and nothing is assumed.
 */
export class CoreSideNotServed extends Error {
  override name = 'CoreSideNotServed';
  constructor(
    readonly side: 'records' | 'data' | 'advance',
    message: string,
  ) {
    super(message);
  }
}
