/**
 * The reference core's own storage, as the core sees it. The store implements it over the
 * coregate database (src/reference-core/storage/reference-core-repository.ts); the reference core never sees SQL.
 *
 * Reads that decide a rule happen after the rows they read are locked (`lock...`), so that the
 * facts a rule decides on are the facts the writes change: the rules stay pure functions.
 *
 * A write answers nothing the core reads, and inside a caller's unit of work the store may defer
 * it (on PostgreSQL, so that the caller's next statements leave with it): its promise then
 * resolves once it is issued, statements issued later still see its effect, and its failure
 * fails the unit of work before it commits.
 */
import type { Installment, TermDepositContract } from '../core/domain.js';
import type { ErrorName } from '../core/error-catalogue.js';
import type { InstallmentStatus } from '../core/end-of-day/overdue.js';
import type { CoreEvent, DirectoryStatus } from '../core/port.js';
import type { UnitOfWork } from '../core/unit-of-work.js';
import type { OperationExecuteMethod } from '../operations/registry.js';
import type { OperationRepository } from './operation-repository.js';

/**
 * What a reference's outcome record says it was: the port method that executed it (one per
 * registered operation: src/operations/registry.ts), or `fenced`, a reference closed before it
 * executed (CoreBankingPort.fenceOperation).
 */
export type CoreOperationKind = OperationExecuteMethod | 'fenced';

/** What the core remembers of a reference: the proof of at most once. */
export type CoreOperationRecord =
  | { reference: string; kind: CoreOperationKind; status: 'Executed' }
  | { reference: string; kind: CoreOperationKind; status: 'Rejected'; refusalName: ErrorName; refusalMessage: string };

/**
 * The core's whole storage: the records an operation reads and writes (OperationRepository), each
 * reference's outcome, the directory, and the business days with their events.
 */
export interface CoreRepository extends OperationRepository {
  /** Records a reference's outcome; false when the reference already has one (a concurrent repeat). */
  recordOperation(record: CoreOperationRecord): Promise<boolean>;
  findOperation(reference: string): Promise<CoreOperationRecord | undefined>;

  userStatus(login: string): Promise<DirectoryStatus>;
  workstationStatus(id: string): Promise<DirectoryStatus>;
  ping(): Promise<void>;

  // ----- Business days and end of day (docs/business-days.md) -----

  /** The business date as stored: one read by primary key, inside the caller's transaction when there is one. */
  businessDate(): Promise<string>;
  /** Sets the business date to `to` if that is later than the stored one (never backwards). */
  moveBusinessDateForward(to: string): Promise<void>;
  /** Claims the day's end of day; false when it ran already (or a concurrent one committed it). */
  claimBusinessDay(day: string): Promise<boolean>;
  recordBusinessDayCounts(day: string, counts: { maturedDeposits: number; overdueInstallments: number }): Promise<void>;
  /** Active contracts maturing on or before `day`. */
  listMaturingDeposits(day: string): Promise<TermDepositContract[]>;
  /** Active → Matured; false when it was not Active. */
  markDepositMatured(contractNumber: string): Promise<boolean>;
  setAccountStatus(accountNumber: string, status: string): Promise<void>;
  /** Pending installments due on or before `day` and not fully paid, with their facility's currency. */
  listInstallmentsPastDue(day: string): Promise<Array<Installment & { status: InstallmentStatus; currency: string }>>;
  /** Pending → Overdue; false when it was paid in full or changed meanwhile. */
  markInstallmentOverdue(loanId: string, sequence: number): Promise<boolean>;
  /** Writes an event to the core's outbox, in the current transaction. */
  appendEvent(event: Omit<CoreEvent, 'sequence'>): Promise<void>;
  eventsAfter(sequence: number, limit: number): Promise<CoreEvent[]>;
}

export interface CoreStorage {
  /** Reads outside a transaction. */
  readonly reader: CoreRepository;
  /** Runs `work` in a transaction of the core's own; a throw rolls it back. */
  transaction<T>(work: (repository: CoreRepository) => Promise<T>): Promise<T>;
  /** The repository inside the caller's unit of work (a store the API shares with the core). */
  within(unitOfWork: UnitOfWork): CoreRepository;
}
