/**
 * The CoreBankingPort over the remote core protocol (docs/core-protocol.md), with undici: what the
 * API uses with `--core-url`. Not a TransactionalCore: the API claims an operation, calls the core,
 * and settles it after (src/operations/execution.ts).
 *
 * Every call has a time-out covering the headers and the body (CoreTimeout, 504). A refused or
 * reset connection and any 5xx are CoreUnavailable (502); so is an answer that breaks the protocol
 * — wrong status, not JSON, a body that fails the protocol's schema, an amount that is not strict
 * minor units, a result for another reference — as a CoreProtocolViolation: the API then holds the
 * outcome as unknown and reconciles by reference. A Rejected answer is the core's final word even
 * when coregate cannot name its refusal (a name the catalogue does not know, a code of the other
 * family or of another entry): it stays a refusal, an UnrecognisedRefusal (codec.ts). Every
 * violation, those refusals included, is told to `onProtocolViolation` (the log and the metrics).
 * A circuit breaker stops calling a core whose transport keeps failing (time-outs, refused or
 * reset connections, 5xx): while it is open every call is CoreUnavailable at once. An answer that
 * breaks the protocol is an answer: it never opens the breaker.
 */
import type { Clock } from '../core/clock.js';
import { systemClock } from '../clock/system-clock.js';
import { context, propagation, ROOT_CONTEXT, trace, TraceFlags, type Span, type Tracer } from '@opentelemetry/api';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { ValueErrorType, type ValueError } from '@sinclair/typebox/errors';
import { randomBytes } from 'node:crypto';
import type { TSchema } from '@sinclair/typebox';
import { Pool, type Dispatcher } from 'undici';
import type { BusinessRefusal, Family } from '../core/error-catalogue.js';
import {
  BusinessDateBackwards,
  CoreDataRefused,
  CoreSideNotServed,
  CoreTimeout,
  CoreUnavailable,
  type AccountKind,
  type AccountRecord,
  type CoreBankingPort,
  type CoreDataDocument,
  type CoreDataLoad,
  type CoreLoadSummary,
  type CoreRecords,
  type CustomerRecord,
  type UserRecord,
  type WorkstationRecord,
  type LedgerReport,
  type LoanFacilityRecord,
  type Page,
  type PageRequest,
  type PostingRecord,
  type TermDepositRecord,
  type CoreEvent,
  type EndOfDayReport,
  type CoreLookup,
  type CoreOutcome,
  type DirectoryStatus,
  type TermDeposit,
} from '../core/port.js';
import { operationMethods, partsOf, type OperationPortMethods } from '../operations/registry.js';
import { attribute } from '../tracing/attributes.js';
import { inClientSpan } from '../tracing/client-span.js';
import { CircuitBreaker, CircuitOpen, type CircuitState } from './circuit-breaker.js';
import {
  accountFromWire,
  loanFacilityFromWire,
  postingFromWire,
  signedMinorFromWire,
  termDepositRecordFromWire,
  eventsFromWire,
  reportFromWire,
  outcomeFromWire,
  coreText,
  refusalFromWire,
  ProtocolViolation,
  UnrecognisedRefusal,
  type ProtocolViolationKind,
  termDepositFromWire,
  type OutcomeWire,
} from './codec.js';
import type { OperationWire } from './operation-wire.js';
import {
  AccountSchema,
  AccountsPageSchema,
  CustomersPageSchema,
  UsersPageSchema,
  WorkstationsPageSchema,
  DataRefusedSchema,
  LedgerReportSchema,
  LoadSummarySchema,
  LoanFacilitiesPageSchema,
  PostedReferencesSchema,
  PostingsPageSchema,
  recordPaths,
  recordsPageMax,
  TermDepositsPageSchema,
  type AccountWire,
  type LedgerReportWire,
  type LoanFacilityWire,
  type PostingWire,
  type TermDepositRecordWire,
  BackwardsSchema,
  BusinessDateSchema,
  EndOfDayReportSchema,
  EventsPageSchema,
  eventsPageMax,
  type BackwardsWire,
  type EndOfDayReportWire,
  DirectoryEntrySchema,
  FencedSchema,
  NotFoundSchema,
  paths,
  protocolPrefix,
  ReadySchema,
  refusalCodePattern,
  refusalNamePattern,
  textLengthMax,
  TermDepositSchema,
  type DirectoryEntryWire,
  type TermDepositWire,
} from './protocol.js';

/** Keep-alive connections to the core, at most; further calls queue (under their time-out). */
export const coreConnectionsMax = 16;
/** Consecutive failed calls that open the circuit breaker. */
export const circuitFailuresMax = 5;
/** How long an open breaker answers CoreUnavailable at once before a trial call. */
export const circuitCoolDownMs = 5_000;
/** The largest answer read from the core; a bigger one breaks the protocol. */
export const coreResponseBytesMax = 256 * 1024;
/** An idle keep-alive connection is closed after this long (unless the core says sooner). */
const keepAliveIdleMs = 4_000;
/**
 * An advance runs end of day for every business day passed: it may take longer than an operation,
 * so it waits at least this long (the core server cuts a request at 30 s; the work it started goes
 * on, and an advance asked again resumes where it stands).
 */
export const advanceTimeoutMs = 30_000;

/**
 * An answer of the core that broke the protocol (docs/core-protocol.md, "What the API's adapter
 * makes of it"): CoreUnavailable, so the outcome is held unknown, but not a failure of the core's
 * transport, so the circuit breaker does not count it.
 */
export class CoreProtocolViolation extends CoreUnavailable {
  override name = 'CoreProtocolViolation';

  constructor(
    message: string,
    readonly violation: ProtocolViolation,
  ) {
    super(message, { cause: violation });
  }
}

/** What `onProtocolViolation` is told: enough for an operator to find the field, never a whole answer. */
export interface ProtocolViolationReport {
  kind: ProtocolViolationKind;
  /** The protocol's route, e.g. `GET /core/v1/term-deposit-constitutions/:reference`. */
  call: string;
  /** The operation reference the call was about, when it was about one. */
  reference: string | undefined;
  /** Where in the answer: `refusal.name`, `refusal.code`, `status`, a schema path (`/result/principalMinor`), `body`. */
  field: string;
  /** What was there, bounded (at most 64 characters) and without control characters; absent when it says nothing (a body that is not JSON). */
  value: string | undefined;
  /** What the adapter made of it, in words. */
  message: string;
  /** Whether the outcome was settled as the core said (a refusal coregate cannot name) or held unknown (CoreProtocolViolation, 502). */
  settled: boolean;
}

/** The most of a value from the core's answer a report quotes. */
const reportedValueCharsMax = 64;

export interface HttpCoreOptions {
  /** The core's base URL, e.g. http://core.internal:8081 (a path prefix is kept). */
  url: string;
  /** Per call, headers and body together. */
  timeoutMs: number;
  connectionsMax?: number;
  circuit?: { failuresMax: number; coolDownMs: number };
  /** Told of every breaker state change (metrics). */
  onCircuitStateChange?: (state: CircuitState) => void;
  /** Told of every answer that broke the protocol, a refusal coregate cannot name included (the log and the metrics). */
  onProtocolViolation?: (violation: ProtocolViolationReport) => void;
  /**
   * Whose time runs each call's time-out and the breaker's cool-down (src/core/clock.ts): the
   * system's by default; the API hands it its own, so a test's fake clock decides when a call
   * times out.
   */
  clock?: Clock;
  /**
   * A client span per call, its trace context sent as `traceparent` so that the core's spans join
   * the caller's trace (src/tracing); no span, and no header, when absent.
   */
  tracer?: Tracer | undefined;
}

/** A traced call's span and the headers that carry its context to the core. */
interface CallTrace {
  span: Span | undefined;
  headers: Record<string, string>;
}

/** An answer: its status and its parsed JSON body. */
interface Answer {
  status: number;
  body: unknown;
}

const check = {
  termDeposit: TypeCompiler.Compile(TermDepositSchema),
  notFound: TypeCompiler.Compile(NotFoundSchema),
  directoryEntry: TypeCompiler.Compile(DirectoryEntrySchema),
  ready: TypeCompiler.Compile(ReadySchema),
  fenced: TypeCompiler.Compile(FencedSchema),
  businessDate: TypeCompiler.Compile(BusinessDateSchema),
  report: TypeCompiler.Compile(EndOfDayReportSchema),
  backwards: TypeCompiler.Compile(BackwardsSchema),
  events: TypeCompiler.Compile(EventsPageSchema),
  customers: TypeCompiler.Compile(CustomersPageSchema),
  users: TypeCompiler.Compile(UsersPageSchema),
  workstations: TypeCompiler.Compile(WorkstationsPageSchema),
  accounts: TypeCompiler.Compile(AccountsPageSchema),
  account: TypeCompiler.Compile(AccountSchema),
  postings: TypeCompiler.Compile(PostingsPageSchema),
  termDeposits: TypeCompiler.Compile(TermDepositsPageSchema),
  loanFacilities: TypeCompiler.Compile(LoanFacilitiesPageSchema),
  ledger: TypeCompiler.Compile(LedgerReportSchema),
  posted: TypeCompiler.Compile(PostedReferencesSchema),
  loadSummary: TypeCompiler.Compile(LoadSummarySchema),
  dataRefused: TypeCompiler.Compile(DataRefusedSchema),
};

/** An operation's protocol (its folder's wire.ts) with its outcome's compiled check. */
interface WiredOperation {
  family: Family;
  wire: OperationWire;
  outcome: TypeCheck<TSchema>;
}

/** Each registered operation's protocol, by name, loaded once with this module (src/operations/registry.ts). */
const wiredOperations: ReadonlyMap<string, WiredOperation> = new Map(
  (await partsOf('wire')).map(({ operation, part: { wire } }) => [operation.name, { family: operation.family, wire, outcome: TypeCompiler.Compile(wire.outcomeSchema) }]),
);

/** A route the core does not have: it does not serve that side of the port (not a failure of the core). */
const notServed = Symbol('notServed');

function isNoRoute(answer: Answer): boolean {
  return answer.status === 404 && typeof answer.body === 'object' && answer.body !== null && (answer.body as { error?: unknown }).error === 'NO_ROUTE';
}

/** A page request as query text, bounded by the protocol. */
function pageQuery(page: PageRequest, extra: Record<string, string | undefined> = {}): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(extra)) if (value !== undefined) query.set(name, value);
  query.set('limit', String(Math.min(Math.max(1, Math.trunc(page.limit)), recordsPageMax)));
  query.set('offset', String(Math.max(0, Math.trunc(page.offset))));
  return `?${query.toString()}`;
}

/** The port's operation members (constituteTermDeposit, findTermDepositConstitution, ...), made per registered operation in the constructor. */
export interface HttpCore extends OperationPortMethods {}

export class HttpCore implements CoreBankingPort, CoreRecords, CoreDataLoad {
  readonly #pool: Pool;
  readonly #prefix: string;
  readonly #timeoutMs: number;
  readonly #clock: Clock;
  readonly #breaker: CircuitBreaker;
  readonly #tracer: Tracer | undefined;
  readonly #server: { address: string; port: number };
  readonly #onProtocolViolation: ((violation: ProtocolViolationReport) => void) | undefined;

  constructor(options: HttpCoreOptions) {
    const url = new URL(options.url);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`the core URL must be http(s), got ${url.protocol}`);
    if (!(options.timeoutMs > 0)) throw new Error('the core time-out must be positive');
    this.#prefix = url.pathname.replace(/\/+$/, '');
    this.#timeoutMs = options.timeoutMs;
    this.#clock = options.clock ?? systemClock;
    this.#tracer = options.tracer;
    this.#onProtocolViolation = options.onProtocolViolation;
    this.#server = { address: url.hostname, port: Number(url.port || (url.protocol === 'https:' ? 443 : 80)) };
    this.#pool = new Pool(url.origin, {
      connections: options.connectionsMax ?? coreConnectionsMax,
      keepAliveTimeout: keepAliveIdleMs,
      // One clock per call, the exchange's own (#exchange): undici's head and body timers, set to
      // the same time-out, raced it — a late answer came out as 502 instead of 504 when undici's
      // fired first — and cut the end of day's longer time-out (advanceTimeoutMs) short. 0 turns
      // them off; the connect time-out stays (nothing was sent: the core is unavailable, 502).
      headersTimeout: 0,
      bodyTimeout: 0,
      connectTimeout: options.timeoutMs,
    });
    this.#breaker = new CircuitBreaker({
      failuresMax: options.circuit?.failuresMax ?? circuitFailuresMax,
      coolDownMs: options.circuit?.coolDownMs ?? circuitCoolDownMs,
      now: () => this.#clock.now(),
      ...(options.onCircuitStateChange ? { onStateChange: options.onCircuitStateChange } : {}),
    });
    // Each operation's command and lookup, over its reference's path (its folder's wire.ts).
    Object.assign(
      this,
      operationMethods((operation) => {
        const wired = wiredOperations.get(operation.name);
        if (wired === undefined) throw new Error(`no protocol for operation ${operation.name}`);
        return { execute: (reference, command) => this.#execute(wired, reference, command), lookup: (reference) => this.#lookup(wired, reference) };
      }),
    );
  }

  /** The breaker's state, for metrics and readiness: closed, open or half-open. */
  get circuitState(): CircuitState {
    return this.#breaker.state;
  }

  /** An operation's command under its reference: POST on the reference's path. */
  #execute(wired: WiredOperation, reference: string, command: unknown): Promise<CoreOutcome<unknown>> {
    return this.#call('POST', wired.wire.path, referencePath(wired.wire, reference), wired.wire.commandToWire(command), (answer) => operationOutcome(answer, wired, reference, false));
  }

  /** An operation's outcome by reference: GET on the reference's path. */
  #lookup(wired: WiredOperation, reference: string): Promise<CoreLookup<unknown>> {
    return this.#call('GET', wired.wire.path, referencePath(wired.wire, reference), undefined, (answer) => operationOutcome(answer, wired, reference, true));
  }

  fenceOperation(reference: string): Promise<void> {
    return this.#call('POST', paths.fence, `/fences/${encodeURIComponent(reference)}`, {}, (answer) => {
      expect(answer, 200, check.fenced);
    });
  }

  retrieveTermDeposit(contractNumber: string): Promise<TermDeposit | undefined> {
    return this.#call('GET', paths.termDeposit, `/term-deposits/${encodeURIComponent(contractNumber)}`, undefined, (answer) => {
      if (isNotFound(answer)) return undefined;
      const deposit = termDepositFromWire(expect<TermDepositWire>(answer, 200, check.termDeposit));
      if (deposit.contractNumber !== contractNumber) throw new ProtocolViolation(`asked for contract ${contractNumber}, got ${deposit.contractNumber}`, 'foreign_answer', '/contractNumber', deposit.contractNumber);
      return deposit;
    });
  }

  userStatus(login: string): Promise<DirectoryStatus> {
    return this.#call('GET', paths.user, `/directory/users/${encodeURIComponent(login)}`, undefined, directoryStatus);
  }

  workstationStatus(id: string): Promise<DirectoryStatus> {
    return this.#call('GET', paths.workstation, `/directory/workstations/${encodeURIComponent(id)}`, undefined, directoryStatus);
  }

  businessDate(): Promise<string> {
    return this.#call('GET', paths.businessDate, '/business-date', undefined, (answer) => expect<{ businessDate: string }>(answer, 200, check.businessDate).businessDate);
  }

  async advanceBusinessDate(to: string): Promise<EndOfDayReport> {
    // Optional (docs/core-protocol.md, "What a core must serve"): a core without it answers NO_ROUTE.
    const answer = await this.#side(
      'advance',
      'POST',
      paths.businessDateAdvance,
      '/business-date/advance',
      { to },
      (answer): { report: EndOfDayReport } | { refused: BackwardsWire } => {
        // A refusal is an answer, not a failure of the core: it leaves the breaker closed.
        if (answer.status === 409 && check.backwards.Check(answer.body)) return { refused: answer.body as BackwardsWire };
        return { report: reportFromWire(expect<EndOfDayReportWire>(answer, 200, check.report), to) };
      },
      Math.max(this.#timeoutMs, advanceTimeoutMs),
    );
    if ('refused' in answer) throw new BusinessDateBackwards(answer.refused.businessDate, answer.refused.requested);
    return answer.report;
  }

  eventsAfter(sequence: number, limit: number): Promise<CoreEvent[]> {
    if (!Number.isSafeInteger(sequence) || sequence < 0) throw new RangeError(`sequence must be a non-negative integer, got ${sequence}`);
    const asked = Math.min(Math.max(1, Math.trunc(limit)), eventsPageMax);
    return this.#call('GET', paths.events, `/events?after=${sequence}&limit=${asked}`, undefined, (answer) =>
      eventsFromWire(expect<{ events: CoreEvent[] }>(answer, 200, check.events).events, sequence, asked),
    );
  }

  // ----- The read side for operators (docs/core-protocol.md): a core that lacks it answers 404 NO_ROUTE -----

  listCustomers(page: PageRequest): Promise<Page<CustomerRecord>> {
    return this.#side('records', 'GET', recordPaths.customers, `/customers${pageQuery(page)}`, undefined, (answer) => {
      const wire = expect<{ customers: CustomerRecord[]; more: boolean }>(answer, 200, check.customers);
      return { items: wire.customers, more: wire.more };
    });
  }

  listUsers(page: PageRequest): Promise<Page<UserRecord>> {
    return this.#side('records', 'GET', recordPaths.users, `/directory/users${pageQuery(page)}`, undefined, (answer) => {
      const wire = expect<{ users: UserRecord[]; more: boolean }>(answer, 200, check.users);
      return { items: wire.users, more: wire.more };
    });
  }

  listWorkstations(page: PageRequest): Promise<Page<WorkstationRecord>> {
    return this.#side('records', 'GET', recordPaths.workstations, `/directory/workstations${pageQuery(page)}`, undefined, (answer) => {
      const wire = expect<{ workstations: WorkstationRecord[]; more: boolean }>(answer, 200, check.workstations);
      return { items: wire.workstations, more: wire.more };
    });
  }

  listAccounts(filter: { customerReference?: string | undefined; kind?: AccountKind | undefined }, page: PageRequest): Promise<Page<AccountRecord>> {
    return this.#side('records', 'GET', recordPaths.accounts, `/accounts${pageQuery(page, filter)}`, undefined, (answer) => {
      const wire = expect<{ accounts: AccountWire[]; more: boolean }>(answer, 200, check.accounts);
      return { items: wire.accounts.map(accountFromWire), more: wire.more };
    });
  }

  findAccount(accountNumber: string): Promise<AccountRecord | undefined> {
    return this.#side('records', 'GET', recordPaths.account, `/accounts/${encodeURIComponent(accountNumber)}`, undefined, (answer) => {
      if (isNotFound(answer)) return undefined;
      const account = accountFromWire(expect<AccountWire>(answer, 200, check.account));
      if (account.accountNumber !== accountNumber) throw new ProtocolViolation(`asked for account ${accountNumber}, got ${account.accountNumber}`, 'foreign_answer', '/accountNumber', account.accountNumber);
      return account;
    });
  }

  listPostings(accountNumber: string, page: PageRequest): Promise<Page<PostingRecord> | undefined> {
    return this.#side('records', 'GET', recordPaths.postings, `/accounts/${encodeURIComponent(accountNumber)}/postings${pageQuery(page)}`, undefined, (answer) => {
      if (isNotFound(answer)) return undefined;
      const wire = expect<{ postings: PostingWire[]; more: boolean }>(answer, 200, check.postings);
      return { items: wire.postings.map(postingFromWire), more: wire.more };
    });
  }

  listTermDeposits(filter: { status?: string | undefined; contractNumber?: string | undefined }, page: PageRequest): Promise<Page<TermDepositRecord>> {
    return this.#side('records', 'GET', recordPaths.termDeposits, `/term-deposits${pageQuery(page, filter)}`, undefined, (answer) => {
      const wire = expect<{ termDeposits: TermDepositRecordWire[]; more: boolean }>(answer, 200, check.termDeposits);
      return { items: wire.termDeposits.map(termDepositRecordFromWire), more: wire.more };
    });
  }

  listLoanFacilities(filter: { loanId?: string | undefined }, page: PageRequest): Promise<Page<LoanFacilityRecord>> {
    return this.#side('records', 'GET', recordPaths.loanFacilities, `/loan-facilities${pageQuery(page, filter)}`, undefined, (answer) => {
      const wire = expect<{ loanFacilities: LoanFacilityWire[]; more: boolean }>(answer, 200, check.loanFacilities);
      return { items: wire.loanFacilities.map(loanFacilityFromWire), more: wire.more };
    });
  }

  checkLedger(listedMax: number): Promise<LedgerReport> {
    const asked = Math.min(Math.max(1, Math.trunc(listedMax)), recordsPageMax);
    return this.#side('records', 'GET', recordPaths.ledgerCheck, `/ledger-check?listedMax=${asked}`, undefined, (answer) => {
      const report = expect<LedgerReportWire>(answer, 200, check.ledger);
      // Every amount is checked as strict minor units, as everywhere in the protocol.
      for (const row of report.unbalancedMovements) signedMinorFromWire(row.totalMinor);
      for (const row of report.balanceMismatches) [row.storedMinor, row.postedMinor].forEach(signedMinorFromWire);
      for (const row of report.negativeCustomerAccounts) signedMinorFromWire(row.balanceMinor);
      return report;
    });
  }

  async postedReferences(references: readonly string[]): Promise<string[]> {
    const posted: string[] = [];
    // The protocol carries at most recordsPageMax references per question.
    for (let start = 0; start < references.length; start += recordsPageMax) {
      const batch = references.slice(start, start + recordsPageMax);
      const asked = new Set(batch);
      const answer = await this.#side('records', 'POST', recordPaths.postedReferences, '/posted-references', { references: batch }, (answer) => {
        const wire = expect<{ posted: string[] }>(answer, 200, check.posted);
        const stranger = wire.posted.find((reference) => !asked.has(reference));
        if (stranger !== undefined) throw new ProtocolViolation(`the core answered reference ${stranger}, which was not asked`, 'foreign_answer', '/posted', stranger);
        return wire.posted;
      });
      posted.push(...answer);
    }
    return posted;
  }

  // ----- The load side for sandbox data -----

  async loadData(document: CoreDataDocument): Promise<CoreLoadSummary> {
    const answer = await this.#side('data', 'POST', recordPaths.data, '/data', document, (answer): CoreLoadSummary | { refused: { field: string; message: string } } => {
      if (answer.status === 400 && check.dataRefused.Check(answer.body)) return { refused: answer.body as { field: string; message: string } };
      return expect<CoreLoadSummary>(answer, 200, check.loadSummary);
    });
    if ('refused' in answer) throw new CoreDataRefused(answer.refused.field, answer.refused.message);
    return answer;
  }

  /**
   * A call to a side beyond operations: a core without it answers 404 NO_ROUTE, which is said as
   * such. Its failures do not count toward the breaker: an operator's slow ledger check or a core
   * that serves no read side must not open the circuit that the business operations go through.
   */
  async #side<T>(side: 'records' | 'data' | 'advance', method: 'GET' | 'POST', template: string, path: string, body: unknown, read: (answer: Answer) => T, timeoutMs = this.#timeoutMs): Promise<T> {
    const answer = await this.#call(method, template, path, body, (answer) => (isNoRoute(answer) ? notServed : read(answer)), protocolPrefix, timeoutMs, false);
    if (answer === notServed) {
      const what = side === 'records' ? 'the read side for operators' : side === 'data' ? 'the load side for sandbox data' : 'the business-date advance';
      throw new CoreSideNotServed(side, `the core does not serve ${what} (${method} ${template} answered 404 NO_ROUTE): see docs/core-protocol.md`);
    }
    return answer as T;
  }

  /** Readiness: the core's /health/ready answers 200, through the breaker (an open one fails at once). */
  async ping(): Promise<void> {
    await this.#call('GET', paths.ready, '/health/ready', undefined, (answer) => {
      expect(answer, 200, check.ready);
    }, '');
  }

  /** Closes the keep-alive connections once the calls in flight have ended. */
  async close(): Promise<void> {
    await this.#pool.close();
  }

  /** One call: `template` is the protocol's route (paths in protocol.ts), `path` the same with its identifiers. */
  #call<T>(
    method: 'GET' | 'POST',
    template: string,
    path: string,
    body: unknown,
    read: (answer: Answer) => T,
    prefix: string = protocolPrefix,
    timeoutMs: number = this.#timeoutMs,
    countsForBreaker = true,
  ): Promise<T> {
    const tracer = this.#tracer;
    const call = { method, template, path, countsForBreaker };
    if (tracer === undefined) return this.#guarded(call, body, read, prefix, timeoutMs, undefined);
    // A call outside any trace (the webhook relay's polls, the reconciler, the readiness probe)
    // gets no span, and tells the core not to trace it either: a trace per poll would bury the
    // requests worth following.
    if (trace.getSpan(context.active()) === undefined) {
      return this.#guarded(call, body, read, prefix, timeoutMs, { span: undefined, headers: unsampledTraceHeaders() });
    }
    const attributes = {
      [attribute.httpRequestMethod]: method,
      [attribute.urlTemplate]: template,
      [attribute.serverAddress]: this.#server.address,
      [attribute.serverPort]: this.#server.port,
    };
    return inClientSpan(tracer, `${method} ${template}`, attributes, (span) => {
      const headers: Record<string, string> = {};
      propagation.inject(context.active(), headers);
      return this.#guarded(call, body, read, prefix, timeoutMs, { span, headers });
    });
  }

  /**
   * The call through the breaker, which counts only what says the core cannot be reached (a
   * time-out, a refused or reset connection, a 5xx): an answer that breaks the protocol is the
   * core answering. Every violation is reported, the refusals coregate cannot name included.
   */
  async #guarded<T>(
    call: { method: 'GET' | 'POST'; template: string; path: string; countsForBreaker: boolean },
    body: unknown,
    read: (answer: Answer) => T,
    prefix: string,
    timeoutMs: number,
    callTrace: CallTrace | undefined,
  ): Promise<T> {
    const { method, path } = call;
    let value: T;
    try {
      value = await this.#breaker.run(() => this.#exchange(method, `${this.#prefix}${prefix}${path}`, body, read, timeoutMs, callTrace), call.countsForBreaker ? isTransportFailure : neverCounted);
    } catch (error) {
      if (error instanceof CircuitOpen) throw new CoreUnavailable(error.message, { cause: error });
      if (error instanceof CoreProtocolViolation) this.#report(call, error.violation, error.message, false);
      throw error;
    }
    const refusal = unrecognisedRefusalOf(value);
    if (refusal !== undefined) this.#report(call, new ProtocolViolation(refusal.message, refusal.kind, refusal.field, refusal.value), refusal.message, true);
    return value;
  }

  #report(call: { method: string; template: string; path: string }, violation: ProtocolViolation, message: string, settled: boolean): void {
    const report = this.#onProtocolViolation;
    if (report === undefined) return;
    // The reference is the last segment of the path of a call about one (paths in protocol.ts).
    const reference = call.template.endsWith('/:reference') ? decodeURIComponent(call.path.slice(call.path.lastIndexOf('/') + 1)) : undefined;
    report({
      kind: violation.kind,
      call: `${call.method} ${call.template}`,
      reference,
      field: violation.field,
      value: violation.value === undefined ? undefined : coreText(violation.value, reportedValueCharsMax),
      message,
      settled,
    });
  }

  /**
   * Sends once more, at once, when the connection was closed under the request (a kept-alive
   * connection the core had just closed): every request of the protocol is idempotent by its
   * operation reference (the core executes a reference at most once and answers a repeat with
   * its outcome), so the repeat is safe, and it stays within the same time-out.
   */
  async #send(method: 'GET' | 'POST', path: string, body: unknown, signal: AbortSignal, traceHeaders: Record<string, string> | undefined): Promise<Dispatcher.ResponseData> {
    const headers: Record<string, string> = body === undefined ? { accept: 'application/json' } : { accept: 'application/json', 'content-type': 'application/json' };
    if (traceHeaders !== undefined) Object.assign(headers, traceHeaders);
    const request = () =>
      this.#pool.request({
        method,
        path,
        headers,
        body: body === undefined ? null : JSON.stringify(body),
        signal,
      });
    try {
      return await request();
    } catch (error) {
      if (signal.aborted || !isClosedConnection(error)) throw error;
      return request();
    }
  }

  /** One HTTP exchange under the time-out; every failure leaves as CoreTimeout or CoreUnavailable. */
  async #exchange<T>(method: 'GET' | 'POST', path: string, body: unknown, read: (answer: Answer) => T, timeoutMs: number, callTrace: CallTrace | undefined): Promise<T> {
    const controller = new AbortController();
    const timer = this.#clock.setTimeout(() => controller.abort(), timeoutMs);
    const what = `${method} ${path}`;
    try {
      const response = await this.#send(method, path, body, controller.signal, callTrace?.headers);
      callTrace?.span?.setAttribute(attribute.httpResponseStatusCode, response.statusCode);
      const text = await readBounded(response.body);
      if (response.statusCode >= 500) throw new CoreUnavailable(`the core answered ${what} with ${response.statusCode}: ${coreText(text, 200)}`);
      const contentType = String(response.headers['content-type'] ?? '');
      if (!/^application\/json\b/i.test(contentType)) {
        throw new ProtocolViolation(`${response.statusCode} with Content-Type "${coreText(contentType, reportedValueCharsMax)}"`, 'malformed_answer', 'content-type', contentType);
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        throw new ProtocolViolation(`${response.statusCode} with a body that is not JSON`, 'malformed_answer', 'body');
      }
      return read({ status: response.statusCode, body: parsed });
    } catch (error) {
      if (controller.signal.aborted) throw new CoreTimeout(`the core did not answer ${what} within ${timeoutMs} ms`, { cause: error });
      if (error instanceof CoreUnavailable) throw error;
      if (error instanceof ProtocolViolation) throw new CoreProtocolViolation(`the core's answer to ${what} breaks the protocol: ${error.message}`, error);
      throw new CoreUnavailable(`the core could not be reached (${what}): ${(error as Error).message}`, { cause: error });
    } finally {
      timer.clear();
    }
  }
}

/**
 * A W3C `traceparent` for a call outside any trace, marked not sampled: a core that samples by
 * its parent (the default) records nothing for it.
 */
function unsampledTraceHeaders(): Record<string, string> {
  const ids = randomBytes(24).toString('hex');
  const unsampled = trace.setSpanContext(ROOT_CONTEXT, { traceId: ids.slice(0, 32), spanId: ids.slice(32), traceFlags: TraceFlags.NONE, isRemote: false });
  const headers: Record<string, string> = {};
  propagation.inject(unsampled, headers);
  return headers;
}

/** What the breaker counts: the core could not be reached or did not answer in time, not an answer that broke the protocol. */
/** An optional side's failure (#side): never a breaker failure. */
function neverCounted(): boolean {
  return false;
}

function isTransportFailure(error: unknown): boolean {
  return !(error instanceof CoreProtocolViolation);
}

/** The refusal of an outcome that coregate could not name, when the value is one. */
function unrecognisedRefusalOf(value: unknown): UnrecognisedRefusal | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const refusal = (value as { status?: unknown; refusal?: unknown }).refusal;
  return (value as { status?: unknown }).status === 'Rejected' && refusal instanceof UnrecognisedRefusal ? refusal : undefined;
}

/** A connection closed or reset before the answer began: nothing but the socket failed. */
function isClosedConnection(error: unknown): boolean {
  const code = (error as { code?: string }).code;
  return code === 'UND_ERR_SOCKET' || code === 'ECONNRESET' || code === 'EPIPE';
}

/** The body as UTF-8 text, refusing more than coreResponseBytesMax and bytes that are not UTF-8. */
export async function readBounded(body: Dispatcher.ResponseData['body']): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > coreResponseBytesMax) {
      body.destroy();
      throw new ProtocolViolation(`an answer larger than ${coreResponseBytesMax} bytes`, 'malformed_answer', 'body');
    }
    chunks.push(chunk);
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks));
  } catch {
    throw new ProtocolViolation('an answer that is not UTF-8', 'malformed_answer', 'body');
  }
}

function expect<W>(answer: Answer, status: number, schema: TypeCheck<TSchema>): W {
  if (answer.status !== status) {
    throw new ProtocolViolation(`status ${answer.status} where ${status} was expected: ${coreText(JSON.stringify(answer.body), 200)}`, 'unexpected_status', 'status', String(answer.status));
  }
  if (!schema.Check(answer.body)) {
    const error = deepestError(schema.Errors(answer.body));
    const field = error ? error.path || '/' : 'body';
    const value = error === undefined || error.value === undefined ? undefined : typeof error.value === 'string' ? error.value : JSON.stringify(error.value);
    throw new ProtocolViolation(`the body fails the protocol's schema${error ? ` at ${field}: ${error.message}` : ''}`, 'malformed_answer', field, value === undefined ? undefined : coreText(value, reportedValueCharsMax));
  }
  return answer.body as W;
}

/** The schema errors read, at most, to name the field at fault: an answer's errors are few, a hostile one's need not be. */
const schemaErrorsReadMax = 50;

/**
 * The error that names the field at fault, its deepest. An outcome is a union (Executed or
 * Rejected) whose own error is at the root: the variant whose discriminator (its `status` literal)
 * the answer has names the field (`/result/principalMinor`); when the answer has neither, the
 * discriminator does (`/status`).
 */
function deepestError(errors: Iterable<ValueError>, budget = { left: schemaErrorsReadMax }): ValueError | undefined {
  let deepest: ValueError | undefined;
  for (const error of errors) {
    if (budget.left-- <= 0) break;
    let candidate: ValueError | undefined = error;
    if (error.errors.length > 0) {
      const variants = error.errors.map((variant) => [...take(variant, budget)]);
      const chosen = variants.find((variant) => !variant.some((inner) => inner.type === ValueErrorType.Literal));
      candidate = chosen === undefined ? variants.flat().find((inner) => inner.type === ValueErrorType.Literal) ?? error : deepestError(chosen, budget) ?? error;
    }
    if (deepest === undefined || depth(candidate) > depth(deepest)) deepest = candidate;
  }
  return deepest;
}

/** How deep in the answer an error is: `/result/principalMinor` is 2, the root 0. */
function depth(error: ValueError): number {
  return error.path.split('/').length - 1;
}

/** At most the budget's errors of an iterator. */
function* take(errors: Iterable<ValueError>, budget: { left: number }): Iterable<ValueError> {
  for (const error of errors) {
    if (budget.left-- <= 0) return;
    yield error;
  }
}

function isNotFound(answer: Answer): boolean {
  return answer.status === 404 && check.notFound.Check(answer.body);
}

function outcome<W, T>(
  answer: Answer,
  schema: TypeCheck<TSchema>,
  family: Family,
  fromWire: (wire: W) => T,
  referenceOf: (result: T) => string,
  referenceField: string,
  reference: string,
): CoreOutcome<T> {
  const loose = answer.status === 200 && !schema.Check(answer.body) ? looseRefusal(answer.body, family) : undefined;
  if (loose !== undefined) return { status: 'Rejected', refusal: loose };
  const decoded = outcomeFromWire(expect<OutcomeWire<W>>(answer, 200, schema), family, fromWire);
  if (decoded.status === 'Executed' && referenceOf(decoded.result) !== reference) {
    throw new ProtocolViolation(`asked for reference ${reference}, got the result of ${referenceOf(decoded.result)}`, 'foreign_answer', referenceField, referenceOf(decoded.result));
  }
  return decoded;
}

/** The longest refusal name or code quoted from a refusal the protocol's schema refuses. */
const looseRefusalCharsMax = 64;

/**
 * A Rejected outcome whose refusal breaks the schema's patterns or bounds (a name such as
 * `INSUFFICIENT_FUNDS_SOURCE_ACCOUNT`, a code `"422"`, a message over 2,048 characters): the core
 * still said Rejected, which is final for its reference, so it is settled as what the core said,
 * an unrecognised refusal quoting it (docs/core-protocol.md, "What the API's adapter makes of it").
 * Undefined for anything else: an outcome without a refusal object is malformed, and the schema's
 * own check then names the field.
 */
function looseRefusal(body: unknown, family: Family): BusinessRefusal | undefined {
  if (typeof body !== 'object' || body === null || (body as { status?: unknown }).status !== 'Rejected') return undefined;
  const refusal = (body as { refusal?: unknown }).refusal;
  if (typeof refusal !== 'object' || refusal === null || Array.isArray(refusal)) return undefined;
  const { name, code, message } = refusal as Record<string, unknown>;
  const text = (value: unknown) => (typeof value === 'string' ? coreText(value, looseRefusalCharsMax) : JSON.stringify(value ?? null).slice(0, looseRefusalCharsMax));
  const wire = { name: text(name), code: text(code), message: typeof message === 'string' ? coreText(message, textLengthMax) : '' };
  const nameFits = typeof name === 'string' && refusalNamePattern.test(name);
  const codeFits = typeof code === 'string' && refusalCodePattern.test(code);
  // Name and code of the protocol's shape (a message too long, or missing): mapped as any refusal.
  if (nameFits && codeFits) return refusalFromWire({ name, code, message: wire.message }, family);
  return nameFits
    ? new UnrecognisedRefusal('unknown_refusal', 'refusal.code', wire.code, wire, `its code ${wire.code} is not a code of the protocol`)
    : new UnrecognisedRefusal('unknown_refusal', 'refusal.name', wire.name, wire, `its name ${wire.name} is not a name of the protocol`);
}

/** An operation's reference path below the protocol's prefix, with the reference in it. */
function referencePath(wire: OperationWire, reference: string): string {
  return wire.path.slice(protocolPrefix.length).replace(':reference', encodeURIComponent(reference));
}

function operationOutcome(answer: Answer, wired: WiredOperation, reference: string, lookup: true): CoreLookup<unknown>;
function operationOutcome(answer: Answer, wired: WiredOperation, reference: string, lookup: false): CoreOutcome<unknown>;
function operationOutcome(answer: Answer, wired: WiredOperation, reference: string, lookup: boolean): CoreLookup<unknown> {
  if (lookup && isNotFound(answer)) return { status: 'NotFound' };
  const { wire } = wired;
  return outcome<unknown, unknown>(answer, wired.outcome, wired.family, (result) => wire.resultFromWire(result), (result) => wire.referenceOf(result), wire.referenceField, reference);
}

function directoryStatus(answer: Answer): DirectoryStatus {
  if (isNotFound(answer)) return undefined;
  return expect<DirectoryEntryWire>(answer, 200, check.directoryEntry).status;
}
