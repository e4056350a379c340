/**
 * coregate's reference core banking system: the CoreBankingPort over the core's own storage
 * (CoreStorage). At most once per reference: the reference's outcome is recorded with its
 * postings, a repeat answers it. Standing alone (the remote core, `coregate core serve`) it runs
 * each operation in a transaction of its own; `within(unitOfWork)` joins the API's transaction
 * when both share one database (the embedded default), and then a Rejected answer leaves the unit
 * of work for the caller to roll back.
 *
 * What each operation decides and writes, and how what it made is found, is its folder's
 * core-handler.ts (src/operations/<operation>/, loaded here for every registered operation); what
 * every operation shares is here: the reference's claim and outcome record, the transaction, the
 * fence.
 */
import type { Clock } from '../core/clock.js';
import type { BusinessCalendar } from '../core/business-calendar.js';
import type { Decision } from '../core/decision.js';
import { BusinessRefusal, errorCatalogue, errorNameOf } from '../core/error-catalogue.js';
import {
  BusinessDateBackwards,
  type CoreBankingPort,
  type CoreDataDocument,
  type CoreDataLoad,
  type CoreEvent,
  type CoreLoadSummary,
  type CoreRecords,
  type CoreLookup,
  type CoreOutcome,
  type DirectoryStatus,
  type EndOfDayReport,
  type TermDeposit,
  type TransactionalCore,
} from '../core/port.js';
import { isCalendarDate } from '../core/calendar-date.js';
import { advanceDaysMax, businessDaysToClose, goesBackwards, spansTooFar } from '../core/end-of-day/days.js';
import type { UnitOfWork } from '../core/unit-of-work.js';
import { operationMethods, partsOf, type OperationPortMethods } from '../operations/registry.js';
import type { RegisteredOperation } from '../operations/operation-definition.js';
import { closeBusinessDay } from './end-of-day.js';
import type { OperationHandler } from './operation-handler.js';
import type { CoreOperationKind, CoreRepository, CoreStorage } from './repository.js';
import { withInterest } from './term-deposit-interest.js';
import { writesAfterRecord } from './writes-after-record.js';

/** Each registered operation's handler (its folder's core-handler.ts), by name, loaded once with this module. */
const handlers: ReadonlyMap<string, OperationHandler> = new Map((await partsOf('coreHandler')).map(({ operation, part }) => [operation.name, part.handler]));

export interface ReferenceCoreOptions {
  storage: CoreStorage;
  /** The read side for operators over the core's own tables (src/reference-core/storage/core-records.ts). */
  records: CoreRecords;
  /** The load side for sandbox data (src/reference-core/storage/core-data-load.ts). */
  data: CoreDataLoad;
  /** Weekend and holidays; the business date itself is read from the storage in each operation. */
  calendar: BusinessCalendar;
  /** The core's clock (src/core/clock.ts): the execution time of loan installments. */
  clock: Clock;
}

/** The refusal travels out of the transaction, which then rolls back. */
class Refused extends Error {
  constructor(readonly refusal: BusinessRefusal) {
    super(refusal.message);
  }
}

/** Another execution of the same reference recorded its outcome first. */
class AlreadyRecorded extends Error {}

/** One execution of an operation under a reference, and its lookup. */
interface OperationKind<T> {
  kind: CoreOperationKind;
  execute(repository: CoreRepository): Promise<Decision<T>>;
  lookup(repository: CoreRepository): Promise<CoreLookup<T>>;
}

/** The port's operation members (constituteTermDeposit, findTermDepositConstitution, ...), made per registered operation in the constructor. */
export interface ReferenceCore extends OperationPortMethods {}

export class ReferenceCore implements TransactionalCore, CoreRecords, CoreDataLoad {
  readonly #storage: CoreStorage;
  readonly #records: CoreRecords;
  readonly #data: CoreDataLoad;
  readonly #calendar: BusinessCalendar;
  readonly #clock: Clock;

  constructor(options: ReferenceCoreOptions) {
    this.#storage = options.storage;
    this.#records = options.records;
    this.#data = options.data;
    this.#calendar = options.calendar;
    this.#clock = options.clock;
    Object.assign(
      this,
      operationMethods((operation) => ({
        execute: (reference, command) => this.#atMostOnce(this.#operation(operation, reference, command), reference),
        lookup: (reference) => operationLookup(this.#storage.reader, operation, reference),
      })),
    );
  }

  get calendar(): BusinessCalendar {
    return this.#calendar;
  }

  within(unitOfWork: UnitOfWork): CoreBankingPort {
    const repository = this.#storage.within(unitOfWork);
    return {
      ...operationMethods((operation) => ({
        execute: (reference, command) => this.#inUnitOfWork(repository, this.#operation(operation, reference, command), reference),
        lookup: (reference) => operationLookup(repository, operation, reference),
      })),
      fenceOperation: (reference) => fence(repository, reference),
      retrieveTermDeposit: (contractNumber) => retrieve(repository, contractNumber),
      userStatus: (login) => repository.userStatus(login),
      workstationStatus: (id) => repository.workstationStatus(id),
      ping: () => repository.ping(),
      businessDate: () => repository.businessDate(),
      // End of day runs in transactions of its own, one per day, never in the caller's.
      advanceBusinessDate: (to) => this.advanceBusinessDate(to),
      eventsAfter: (sequence, limit) => repository.eventsAfter(sequence, limit),
    };
  }

  // ----- The read side for operators and the load side for sandbox data: outside any unit of work. -----

  listCustomers(...args: Parameters<CoreRecords['listCustomers']>) {
    return this.#records.listCustomers(...args);
  }

  listUsers(...args: Parameters<CoreRecords['listUsers']>) {
    return this.#records.listUsers(...args);
  }

  listWorkstations(...args: Parameters<CoreRecords['listWorkstations']>) {
    return this.#records.listWorkstations(...args);
  }

  listAccounts(...args: Parameters<CoreRecords['listAccounts']>) {
    return this.#records.listAccounts(...args);
  }

  findAccount(accountNumber: string) {
    return this.#records.findAccount(accountNumber);
  }

  listPostings(...args: Parameters<CoreRecords['listPostings']>) {
    return this.#records.listPostings(...args);
  }

  listTermDeposits(...args: Parameters<CoreRecords['listTermDeposits']>) {
    return this.#records.listTermDeposits(...args);
  }

  listLoanFacilities(...args: Parameters<CoreRecords['listLoanFacilities']>) {
    return this.#records.listLoanFacilities(...args);
  }

  checkLedger(listedMax: number) {
    return this.#records.checkLedger(listedMax);
  }

  postedReferences(references: readonly string[]) {
    return this.#records.postedReferences(references);
  }

  loadData(document: CoreDataDocument): Promise<CoreLoadSummary> {
    return this.#data.loadData(document);
  }

  fenceOperation(reference: string): Promise<void> {
    return this.#storage.transaction((repository) => fence(repository, reference));
  }

  retrieveTermDeposit(contractNumber: string): Promise<TermDeposit | undefined> {
    return retrieve(this.#storage.reader, contractNumber);
  }

  userStatus(login: string): Promise<DirectoryStatus> {
    return this.#storage.reader.userStatus(login);
  }

  workstationStatus(id: string): Promise<DirectoryStatus> {
    return this.#storage.reader.workstationStatus(id);
  }

  ping(): Promise<void> {
    return this.#storage.reader.ping();
  }

  businessDate(): Promise<string> {
    return this.#storage.reader.businessDate();
  }

  /**
   * Closes every business day b with current <= b < to, in order, one transaction per day
   * (closeBusinessDay), then sets the date to `to`. A day closed before (an earlier call, a
   * concurrent one, a run that crashed after it) is skipped: running again resumes.
   */
  async advanceBusinessDate(to: string): Promise<EndOfDayReport> {
    if (!isCalendarDate(to)) throw new TypeError(`"${to}" is not a calendar date (YYYY-MM-DD)`);
    const from = await this.#storage.reader.businessDate();
    if (goesBackwards(from, to)) throw new BusinessDateBackwards(from, to);
    if (spansTooFar(from, to)) throw new RangeError(`an advance spans at most ${advanceDaysMax} days: from ${from}, advance in steps`);
    const report: EndOfDayReport = { from, to, daysClosed: [], maturedDeposits: 0, overdueInstallments: 0 };
    for (const day of businessDaysToClose(this.#calendar, from, to)) {
      const closed = await this.#storage.transaction((repository) => closeBusinessDay(repository, day, this.#clock));
      if (!closed) continue;
      report.daysClosed.push(day);
      report.maturedDeposits += closed.maturedDeposits;
      report.overdueInstallments += closed.overdueInstallments;
    }
    await this.#storage.transaction((repository) => repository.moveBusinessDateForward(to));
    return report;
  }

  eventsAfter(sequence: number, limit: number): Promise<CoreEvent[]> {
    return this.#storage.reader.eventsAfter(sequence, limit);
  }

  /** The calendar on the business date as stored now, read in the operation's transaction. */
  async #calendarIn(repository: CoreRepository): Promise<BusinessCalendar> {
    return this.#calendar.withBusinessDate(await repository.businessDate());
  }

  /** An operation's execution under `reference`, by its folder's handler, recorded under the port method that executes it. */
  #operation(operation: RegisteredOperation, reference: string, command: unknown): OperationKind<unknown> {
    const handler = handlerOf(operation);
    return {
      kind: operation.port.execute as CoreOperationKind,
      execute: (repository) => handler.execute(repository, { calendar: this.#calendarIn(repository), clock: this.#clock }, reference, command),
      lookup: (repository) => operationLookup(repository, operation, reference),
    };
  }

  /** Standing alone: the reference is claimed first, so a repeat (concurrent or later) reads the outcome it claimed. */
  async #atMostOnce<T>(operation: OperationKind<T>, reference: string): Promise<CoreOutcome<T>> {
    try {
      return await this.#storage.transaction(async (repository) => {
        if (!(await repository.recordOperation({ reference, kind: operation.kind, status: 'Executed' }))) throw new AlreadyRecorded();
        const decision = await operation.execute(repository);
        if (!decision.ok) throw new Refused(decision.refusal);
        return { status: 'Executed', result: decision.value };
      });
    } catch (error) {
      if (error instanceof AlreadyRecorded) return settledLookup(await operation.lookup(this.#storage.reader), reference);
      if (!(error instanceof Refused)) throw error;
      const { refusal } = error;
      const recorded = await this.#storage.transaction((repository) =>
        repository.recordOperation({ reference, kind: operation.kind, status: 'Rejected', refusalName: errorNameOf(refusal.entry), refusalMessage: refusal.message }),
      );
      if (!recorded) return settledLookup(await operation.lookup(this.#storage.reader), reference);
      return { status: 'Rejected', refusal };
    }
  }

  /**
   * Inside the caller's unit of work: the reference is claimed first, as standing alone (the
   * operation's reads beside the claim, its writes only after it); a reference with an outcome
   * (a repeat, a fence) answers it. A Rejected answer leaves the unit of work, claim included,
   * for the caller to roll back.
   */
  async #inUnitOfWork<T>(repository: CoreRepository, operation: OperationKind<T>, reference: string): Promise<CoreOutcome<T>> {
    const recorded = repository.recordOperation({ reference, kind: operation.kind, status: 'Executed' });
    // The operation's reads and locks travel with the record's insert; its writes wait for the
    // record to be new (writes-after-record.ts). Its failure is reported below, or is moot.
    const executing = operation.execute(writesAfterRecord(repository, recorded));
    const settled = executing.then(
      () => undefined,
      () => undefined,
    );
    let isNew: boolean;
    try {
      isNew = await recorded;
    } catch (error) {
      await settled;
      throw error;
    }
    if (!isNew) {
      // No statement of the operation is left in flight when the lookup answers.
      await settled;
      return settledLookup(await operation.lookup(repository), reference);
    }
    const decision = await executing;
    if (!decision.ok) return { status: 'Rejected', refusal: decision.refusal };
    return { status: 'Executed', result: decision.value };
  }
}

function settledLookup<T>(lookup: CoreLookup<T>, reference: string): CoreOutcome<T> {
  // Recorded by a concurrent execution that has committed: a lookup must find it.
  if (lookup.status === 'NotFound') throw new Error(`operation ${reference} is recorded but not found`);
  return lookup;
}

async function outcomeRecord(repository: CoreRepository, reference: string, kind: CoreOperationKind) {
  const record = await repository.findOperation(reference);
  if (record && record.kind !== kind && record.kind !== 'fenced') throw new Error(`reference ${reference} belongs to a ${record.kind}, not a ${kind}`);
  return record;
}

/** Records the reference as never to execute, unless it has an outcome already. */
async function fence(repository: CoreRepository, reference: string): Promise<void> {
  await repository.recordOperation({
    reference,
    kind: 'fenced',
    status: 'Rejected',
    refusalName: 'notExecuted',
    refusalMessage: `operation ${reference} was closed by the reconciler before the core executed it; nothing was posted`,
  });
}

function handlerOf(operation: RegisteredOperation): OperationHandler {
  const handler = handlers.get(operation.name);
  if (handler === undefined) throw new Error(`no core handler for operation ${operation.name}`);
  return handler;
}

/** A reference's outcome: its record's refusal, or what the operation made under it, or NotFound. */
async function operationLookup(repository: CoreRepository, operation: RegisteredOperation, reference: string): Promise<CoreLookup<unknown>> {
  const record = await outcomeRecord(repository, reference, operation.port.execute as CoreOperationKind);
  if (record?.status === 'Rejected') return { status: 'Rejected', refusal: new BusinessRefusal(errorCatalogue[record.refusalName], record.refusalMessage) };
  const handler = handlerOf(operation);
  const result = await handler.find(repository, reference);
  if (result !== undefined) return { status: 'Executed', result };
  if (record) throw new Error(`operation ${reference} is recorded as executed but has no ${handler.made}`);
  return { status: 'NotFound' };
}

async function retrieve(repository: CoreRepository, contractNumber: string): Promise<TermDeposit | undefined> {
  const contract = await repository.findTermDeposit(contractNumber);
  return contract && withInterest(contract);
}
