/**
 * Runs a business operation with the guarantees of docs/api.md, "Correlation ids and duplicates"
 * and "Audit", the same way for every
 * operation: validation before the correlation id is consumed, the duplicate window, a repeat of
 * an unknown outcome reconciled with the core first, 202 for `respond-async` and the batch
 * window, execution now otherwise, an audit record for every attempt. The HTTP layer maps the
 * RunOutcome to a response.
 */
import { timeOrderedUuid } from '../core/time-ordered-uuid.js';
import { BusinessRefusal, errorCatalogue as E, type ErrorEntry } from '../core/error-catalogue.js';
import { dateOf, type Clock } from '../core/clock.js';
import type { Store } from '../store/connect.js';
import type { OperationRecord } from '../store/operations.js';
import { inUnitOfWork } from '../store/unit-of-work.js';
import { inBatchWindow, type BatchWindow } from './batch-window.js';
import { recoverClaim, type ClaimFrom, type Claims } from './correlation.js';
import { requestHash, type DuplicateWindow } from './duplicate-window.js';
import { errorRecord, type ErrorRecord } from './error-record.js';
import type { Execution } from './execution.js';
import { actorOf, type Invocation } from './invocation.js';
import type { AuditContext, OperationAudit } from './operation-audit.js';
import type { Operation, PreparedOperation } from './operation-definition.js';
import type { PendingWorker } from './pending-worker.js';
import type { Reconciler } from './reconciler.js';
import { isCoreFailure } from './core-call.js';
import { CoreTimeout } from '../core/port.js';
import { answersAccepted, dueAfterMs, type Scenario } from './scenario.js';

export type RunOutcome =
  | { kind: 'done'; status: 200; body: unknown; reference: string }
  | { kind: 'accepted'; status: 202; body: unknown; reference: string; preferenceApplied: boolean }
  | { kind: 'refused'; status: number; record: ErrorRecord; audited: boolean; headers?: Record<string, string> };

export interface RunnerOptions {
  store: Store;
  /** Whose time stamps new records and decides the batch window (src/core/clock.ts). */
  clock: Clock;
  claims: Claims;
  window: DuplicateWindow;
  execution: Execution;
  reconciler: Reconciler;
  worker: PendingWorker;
  audit: OperationAudit;
  coreTimeoutMs: number;
  batchWindow: BatchWindow | undefined;
  /** Where the request-level outcomes are reported (the metrics): Pending, Duplicate, Refused. */
  onOutcome?: (operation: string, outcome: string) => void;
}

export class OperationRunner {
  readonly #options: RunnerOptions;

  constructor(options: RunnerOptions) {
    this.#options = options;
  }

  inBatchWindow(now: Date = dateOf(this.#options.clock)): boolean {
    return inBatchWindow(this.#options.batchWindow, now);
  }

  async run(operation: Operation, call: Invocation): Promise<RunOutcome> {
    const context: AuditContext = {
      operation: operation.name,
      family: operation.family,
      caller: call.caller,
      correlationId: call.correlationId,
      path: call.path,
      startedAtMs: call.startedAtMs,
    };
    let prepared: PreparedOperation;
    try {
      prepared = operation.prepare(call.request, call.numberTextOf);
    } catch (error) {
      if (error instanceof BusinessRefusal) return this.#refused(operation, context, error.entry, error.message, undefined);
      throw error;
    }

    return this.#claimAndRun(operation, context, call, prepared, undefined);
  }

  /**
   * Claims the correlation id and runs the operation. The claim itself finds an id already used
   * (no read before it: a round trip saved on every operation); `existing` is that record when
   * it is a repeat of an unknown outcome, which runs again under its own reference.
   */
  async #claimAndRun(operation: Operation, context: AuditContext, call: Invocation, prepared: PreparedOperation, existing: OperationRecord | undefined): Promise<RunOutcome> {
    const { store, window } = this.#options;
    let reference: string = timeOrderedUuid(this.#options.clock.now());
    let from: ClaimFrom = { kind: 'new' };
    let stored: OperationRecord | undefined;
    // A scenario forces the outcome of a request's first execution only (docs/sandbox.md,
    // "Scenarios"): a repeat of its unknown outcome meets the real core, header or not, so "a
    // repeat executes" holds.
    const scenario = existing ? undefined : call.scenario;
    if (existing) {
      if (existing.status !== 'Unknown' || existing.operation !== operation.name) return this.#duplicate(operation, context, existing, E.duplicateCorrelationId);
      // A repeat of an unknown outcome asks the core first; only what did not happen runs now
      // (docs/api.md, "Correlation ids and duplicates").
      let settled: OperationRecord | undefined;
      try {
        settled = await this.#options.reconciler.settleFromCore(existing);
      } catch (error) {
        if (!isCoreFailure(error)) throw error;
        // The core still cannot tell: the outcome stays unknown, and the answer says where to follow it.
        return this.#unknown(operation, context, call, existing.reference, error instanceof CoreTimeout ? E.coreTimeout : E.coreUnavailable);
      }
      if (settled) return this.#duplicate(operation, context, settled, E.duplicateCorrelationId);
      reference = existing.reference;
      from = { kind: 'stored', guard: { status: 'Unknown' } };
      stored = existing;
    }
    const record = this.#record(operation, call, reference, stored, scenario);
    if (!existing && window.applies(record)) {
      const duplicate = await window.find(store.db, record);
      if (duplicate) return this.#duplicate(operation, context, duplicate, E.duplicateRequest);
    }

    const repeatOfUnknown = (original: OperationRecord | undefined) =>
      existing === undefined && original !== undefined && original.status === 'Unknown' && original.operation === operation.name;
    if (record.accepted) {
      const accepted = await this.#accept(operation, context, call, record, from);
      if (accepted.kind === 'taken' && repeatOfUnknown(accepted.original)) return this.#claimAndRun(operation, context, call, prepared, accepted.original);
      return accepted.kind === 'taken' ? this.#duplicate(operation, context, accepted.original, E.duplicateCorrelationId) : accepted;
    }
    const result = await this.#options.execution.execute({ operation, prepared, record, from, audit: context, scenario });
    switch (result.kind) {
      // Executed, Rejected and Unknown are counted where they commit (operation-settlement.ts).
      case 'executed':
        return { kind: 'done', status: 200, body: result.body, reference };
      case 'rejected':
        return { kind: 'refused', status: result.status, record: result.error, audited: true };
      case 'unknown':
        return this.#unknownOutcome(operation, call, reference, result.entry);
      case 'duplicate':
        return this.#duplicate(operation, context, result.original, E.duplicateRequest);
      case 'taken':
        if (!result.original) throw new Error(`operation ${reference} was claimed concurrently and cannot be found`);
        if (repeatOfUnknown(result.original)) return this.#claimAndRun(operation, context, call, prepared, result.original);
        return this.#duplicate(operation, context, result.original, E.duplicateCorrelationId);
    }
  }

  /** The 502/504 of an outcome held unknown (recorded and audited where it was held). */
  #unknownOutcome(operation: Operation, call: Invocation, reference: string, entry: ErrorEntry): RunOutcome & { kind: 'refused' } {
    const message =
      entry === E.coreTimeout
        ? `The core did not answer within ${this.#options.coreTimeoutMs} ms; repeat with x-correlation-id ${call.correlationId} to reconcile, or follow /v1/operations/${reference}`
        : `The core banking system is unavailable; repeat with x-correlation-id ${call.correlationId} to reconcile, or follow /v1/operations/${reference}`;
    // The operation can be followed without repeating the request (docs/api.md, "Correlation ids
    // and duplicates").
    const headers = { Location: `/v1/operations/${reference}` };
    return { kind: 'refused', status: entry.status, record: errorRecord(entry, message, call.path, operation.family), audited: true, headers };
  }

  /** A repeat of an unknown outcome the core still cannot settle: audited, the same 502/504 again. */
  async #unknown(operation: Operation, context: AuditContext, call: Invocation, reference: string, entry: ErrorEntry): Promise<RunOutcome> {
    await this.#options.audit.record(context, reference, entry.status, 'Unknown', entry);
    return this.#unknownOutcome(operation, call, reference, entry);
  }

  /** Answers 202 once the operation is claimed as Pending; `taken` when its correlation id is another operation's. */
  async #accept(
    operation: Operation,
    context: AuditContext,
    call: Invocation,
    record: OperationRecord,
    from: ClaimFrom,
  ): Promise<RunOutcome | { kind: 'taken'; original: OperationRecord }> {
    const { store, claims, audit } = this.#options;
    // The 202's executionDateTime is the record's creation time, which a later Rejected result
    // (execution.ts, reconciler.ts) repeats: the client sees one time for one execution.
    const acceptedAt = new Date(record.createdAt);
    try {
      await inUnitOfWork(store, async (unitOfWork) => {
        await claims.claim(unitOfWork, { ...record, accepted: true }, from, 'Pending', this.#options.clock.now());
        await audit.write(unitOfWork.db, context, record.reference, 202, 'Pending');
      });
    } catch (error) {
      const recovered = await recoverClaim(store.db, error, record);
      if (recovered?.kind === 'duplicate') return this.#duplicate(operation, context, recovered.original, E.duplicateRequest);
      if (recovered?.original) return { kind: 'taken', original: recovered.original };
      throw error;
    }
    audit.chained();
    this.#options.onOutcome?.(operation.name, 'Pending');
    const dueInMs = record.nextAttemptEpochMs - this.#options.clock.now();
    // An async scenario's operation is due after its delay: the worker is woken then (its own
    // passes, every second on every instance, find it too if this instance stops meanwhile).
    if (dueInMs > 0) this.#options.clock.setTimeout(() => void this.#options.worker.kick(), dueInMs, { background: true });
    else if (!this.inBatchWindow()) void this.#options.worker.kick();
    return { kind: 'accepted', status: 202, body: operation.accepted(record.reference, acceptedAt), reference: record.reference, preferenceApplied: call.respondAsync };
  }

  /** For GET /v1/operations: an unknown outcome is settled from the core when the core knows it. */
  async refresh(record: OperationRecord): Promise<OperationRecord> {
    if (record.status !== 'Unknown') return record;
    try {
      return (await this.#options.reconciler.settleFromCore(record)) ?? record;
    } catch {
      return record;
    }
  }

  async #duplicate(operation: Operation, context: AuditContext, original: OperationRecord, entry: ErrorEntry): Promise<RunOutcome> {
    const outcome = original.status === 'Rejected' ? `Rejected with ${original.httpStatus ?? ''}${rejectionCode(original)}` : original.status === 'Executed' ? 'Executed' : 'Pending';
    const message =
      entry === E.duplicateCorrelationId
        ? `x-correlation-id ${context.correlationId ?? ''} was already used by operation ${original.reference} (${outcome})`
        : `The same request was already received as operation ${original.reference} (${outcome}) within the duplicate window`;
    this.#options.onOutcome?.(operation.name, 'Duplicate');
    const refused = await this.#refused(operation, context, entry, message, original.reference);
    // The conflicting resource, as RFC 9110 suggests for 409: clients resolve their retry with it.
    return { ...refused, headers: { Location: `/v1/operations/${original.reference}` } };
  }

  async #refused(operation: Operation, context: AuditContext, entry: ErrorEntry, message: string, reference: string | undefined): Promise<RunOutcome & { kind: 'refused' }> {
    const { audit } = this.#options;
    await audit.record(context, reference ?? null, entry.status, 'Refused', entry);
    if (entry.status === 400) this.#options.onOutcome?.(operation.name, 'Refused');
    return { kind: 'refused', status: entry.status, record: errorRecord(entry, message, context.path, operation.family), audited: true };
  }

  #record(operation: Operation, call: Invocation, reference: string, stored: OperationRecord | undefined, scenario: Scenario | undefined): OperationRecord {
    if (stored) return { ...stored, request: call.request, accepted: call.respondAsync || this.inBatchWindow(), nextAttemptEpochMs: 0 };
    const now = dateOf(this.#options.clock);
    const accepted = call.respondAsync || this.inBatchWindow(now) || answersAccepted(scenario);
    const dueInMs = dueAfterMs(scenario, accepted);
    return {
      reference,
      clientKey: call.caller.clientKey,
      correlationId: call.correlationId,
      correlationSupplied: call.correlationSupplied,
      operation: operation.name,
      scope: operation.scope,
      path: call.path,
      requestHash: requestHash(call.path, call.request.body),
      request: call.request,
      status: 'Pending',
      httpStatus: null,
      accepted,
      result: undefined,
      error: undefined,
      actor: actorOf(call.caller),
      createdAt: now.toISOString(),
      createdEpochMs: now.getTime(),
      updatedAt: now.toISOString(),
      updatedEpochMs: now.getTime(),
      attempts: 0,
      nextAttemptEpochMs: dueInMs > 0 ? now.getTime() + dueInMs : 0,
      scenario,
    };
  }
}

function rejectionCode(record: OperationRecord): string {
  const code = (record.error as ErrorRecord | undefined)?.errordetail?.[0]?.code;
  return code ? ` ${code}` : '';
}
