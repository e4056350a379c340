/**
 * The reconciler (docs/deployment.md, "The reconciler"): on every instance, it settles operations
 * whose outcome is unknown, and in-flight operations abandoned by an instance that died (older than
 * their lease). Each is taken by a guarded claim, so one instance at a time works on it: the core
 * is asked by reference; an outcome it knows is recorded (Executed with its result, Rejected with
 * its error record). A reference the core never executed is executed now when the client was
 * answered 202 (the service owes it); otherwise the client was told 502/504 and may have given up,
 * so the reconciler fences the reference in the core first (it can then never execute late) and
 * records what the core answers: Rejected, NOT_EXECUTED, or Executed if it did execute meanwhile.
 * Failed attempts back off (retry-schedule.ts), per reference: a reference whose lookup failed (the
 * core unreachable, or its answer broke the protocol) is asked again only once its pause, which
 * grows with its attempts, has passed. A lookup that answers a refusal coregate cannot name settles
 * the operation as the core said (REJECTED_BY_CORE): it is never asked again. An operation unknown
 * past the age limit is logged and counted.
 */
import type { Logger } from '../log.js';
import type { Store } from '../store/connect.js';
import { countReconcilerBacklog, findOperation, listOperationsToReconcile, type OperationRecord, type ReconcilerBacklog } from '../store/operations.js';
import type { Clock } from '../core/clock.js';
import type { CoreBankingPort } from '../core/port.js';
import { callCore, isCoreFailure, type CoreCallObserver } from './core-call.js';
import { ClaimLost, type Claims } from './correlation.js';
import type { Execution } from './execution.js';
import { callerOf } from './invocation.js';
import type { AuditContext } from './operation-audit.js';
import type { Operation, Settlement, StoredRequest } from './operation-definition.js';
import type { OperationSettlement, SettlementTarget } from './operation-settlement.js';
import { Periodic } from '../clock/periodic.js';

/** Operations settled per pass: bounds one pass's work. */
const reconcileBatchMax = 20;

export interface ReconcilerOptions {
  store: Store;
  /** Whose time decides what is due and stamps each move (src/core/clock.ts). */
  clock: Clock;
  core: CoreBankingPort;
  claims: Claims;
  execution: Execution;
  logger: Logger;
  operations: ReadonlyMap<string, Operation>;
  coreTimeoutMs: number;
  /** How often a pass runs. */
  intervalMs: number;
  /** An in-flight operation untouched this long was abandoned. */
  leaseMs: number;
  /** An operation still unknown this long after it was created is logged and counted. */
  unknownAgeLimitMs: number;
  observeCoreCall: CoreCallObserver;
  /** An operation's final transitions (state, event, audit record, metrics): one, shared by the execution and the reconciler. */
  settlement: OperationSettlement;
  /** An operation this reconciler settled, however (recorded from the core, or executed): coregate_reconciler_settled_total. */
  onReconciled?: (outcome: 'Executed' | 'Rejected') => void;
}

export class Reconciler {
  readonly #options: ReconcilerOptions;
  readonly #periodic: Periodic;
  readonly #settlement: OperationSettlement;

  constructor(options: ReconcilerOptions) {
    this.#options = options;
    this.#settlement = options.settlement;
    this.#periodic = new Periodic(options.clock, options.intervalMs, () => this.#pass(), (error) => options.logger.error({ err: error }, 'reconciler pass failed'));
  }

  start(): void {
    this.#periodic.start();
  }

  stop(): Promise<void> {
    return this.#periodic.stop();
  }

  /** Runs one pass now unless one is running; resolves when it ends. */
  kick(): Promise<void> {
    return this.#periodic.kick();
  }

  /** One pass over what is due now, started or not; resolves when it ends (tests drive the reconciler with it). */
  runOnce(): Promise<void> {
    return this.#periodic.runOnce();
  }

  /** Passes until nothing is due (tests and `coregate check` wait for a drained backlog). */
  async drain(passesMax = 50): Promise<void> {
    for (let pass = 0; pass < passesMax; pass += 1) {
      const now = this.#options.clock.now();
      const due = await listOperationsToReconcile(this.#options.store.db, now, now - this.#options.leaseMs, 1);
      if (due.length === 0) return;
      await this.runOnce();
    }
  }

  backlog(): Promise<ReconcilerBacklog> {
    return countReconcilerBacklog(this.#options.store.db, this.#options.clock.now() - this.#options.unknownAgeLimitMs);
  }

  async #pass(): Promise<void> {
    const now = this.#options.clock.now();
    const due = await listOperationsToReconcile(this.#options.store.db, now, now - this.#options.leaseMs, reconcileBatchMax);
    for (const record of due) {
      if (this.#periodic.stopped) return;
      await this.reconcile(record);
    }
  }

  /** Claims one operation and settles it if the core can tell; answers the record as it ends. */
  async reconcile(record: OperationRecord): Promise<OperationRecord> {
    const { store, claims, logger } = this.#options;
    const operation = this.#options.operations.get(record.operation);
    if (!operation) {
      logger.error({ reference: record.reference, operation: record.operation }, 'operation of an unknown kind cannot be reconciled');
      return record;
    }
    const claimedAt = this.#options.clock.now();
    try {
      await claims.move(store.db, record.reference, { status: record.status, updatedEpochMs: record.updatedEpochMs }, { status: 'InFlight', atEpochMs: claimedAt });
    } catch (error) {
      if (error instanceof ClaimLost) return (await findOperation(store.db, record.reference)) ?? record;
      throw error;
    }
    const claimed: OperationRecord = { ...record, status: 'InFlight', updatedEpochMs: claimedAt };
    const context = auditContextOf(operation, claimed, claimedAt);
    try {
      const { core } = this.#options;
      if (!claimed.accepted) await callCore(this.#options.clock, this.#options.observeCoreCall, 'fence', this.#options.coreTimeoutMs, () => core.fenceOperation(record.reference));
      const found = await callCore(this.#options.clock, this.#options.observeCoreCall, 'lookup', this.#options.coreTimeoutMs, () => operation.lookup(core, record.reference));
      if (found.status !== 'NotFound') {
        await this.#record(operation, claimed, found, context);
      } else {
        if (!claimed.accepted) throw new Error(`the core does not know operation ${record.reference} after fencing it`);
        const request = claimed.request as StoredRequest | undefined;
        if (!request) throw new Error(`operation ${record.reference} has no stored request to execute`);
        const prepared = operation.prepare(request);
        await this.#options.execution.execute({ operation, prepared, record: claimed, from: { kind: 'stored', guard: { status: 'InFlight', updatedEpochMs: claimedAt } }, audit: context });
      }
    } catch (error) {
      await this.#backOff({ operation, record: claimed, from: { kind: 'stored', guard: { status: 'InFlight', updatedEpochMs: claimedAt } }, audit: context }, error);
    }
    const after = (await findOperation(store.db, record.reference)) ?? claimed;
    if (after.status === 'Executed' || after.status === 'Rejected') this.#options.onReconciled?.(after.status);
    return after;
  }

  /** For a repeat of an unknown operation and GET /v1/operations: the core's outcome, if it has one. */
  async settleFromCore(record: OperationRecord): Promise<OperationRecord | undefined> {
    const operation = this.#options.operations.get(record.operation);
    if (!operation || record.status !== 'Unknown') return undefined;
    const found = await callCore(this.#options.clock, this.#options.observeCoreCall, 'lookup', this.#options.coreTimeoutMs, () => operation.lookup(this.#options.core, record.reference));
    if (found.status === 'NotFound') return undefined;
    try {
      await this.#record(operation, record, found, auditContextOf(operation, record, this.#options.clock.now()));
    } catch (error) {
      if (!(error instanceof ClaimLost)) throw error;
    }
    return findOperation(this.#options.store.db, record.reference);
  }

  /** The core's outcome, recorded as execution records one (operation-settlement.ts). */
  async #record(operation: Operation, record: OperationRecord, found: Settlement, context: AuditContext): Promise<void> {
    const guard = record.status === 'InFlight' ? { status: record.status, updatedEpochMs: record.updatedEpochMs } : { status: record.status };
    await this.#settlement.commit({ operation, record, from: { kind: 'stored', guard }, audit: context }, found, this.#options.clock.now());
  }

  async #backOff(target: SettlementTarget, cause: unknown): Promise<void> {
    const claimed = target.record;
    const { logger } = this.#options;
    const attempts = claimed.attempts + 1;
    const now = this.#options.clock.now();
    const overAge = now - claimed.createdEpochMs > this.#options.unknownAgeLimitMs;
    const log = { err: cause, reference: claimed.reference, attempts, operation: claimed.operation };
    if (overAge) logger.error(log, 'operation still unknown past the age limit: the core cannot settle it');
    else if (isCoreFailure(cause)) logger.warn(log, 'reconciliation attempt failed; backing off');
    else logger.error(log, 'reconciliation attempt failed unexpectedly; backing off');
    try {
      await this.#settlement.holdUnknown(target, now);
    } catch (error) {
      // Execution already recorded the attempt (it moves a failed execution to Unknown itself).
      if (!(error instanceof ClaimLost)) throw error;
    }
  }
}

function auditContextOf(operation: Operation, record: OperationRecord, startedAtMs: number): AuditContext {
  return {
    operation: operation.name,
    family: operation.family,
    caller: callerOf(record.actor),
    correlationId: record.correlationId,
    path: record.path,
    startedAtMs,
  };
}
