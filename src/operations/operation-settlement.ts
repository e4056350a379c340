/**
 * An operation's final transition, written in one place (docs/api.md, "200, 202, 204" and "Audit";
 * docs/webhooks.md, "The outbox guarantee"): the state change guarded by the state it leaves, the
 * outbox event and the audit record, all in one unit of work, so that none exists without the
 * others; once it has committed, the audit chainer is woken and the transition is counted
 * (`onSettled`: coregate_operations_total), whoever settled. Execution (embedded: inside the unit
 * of work that holds the core's postings; remote: after the core call; a refusal: on its own after
 * the rollback) and the reconciler (an outcome the core knows) call it; so do both ways an outcome
 * becomes unknown (a failed execution, a failed reconciliation attempt), which back off alike.
 *
 * Time is given, not read: every method takes the instant of the transition.
 */
import type { BusinessRefusal, ErrorEntry } from '../core/error-catalogue.js';
import type { Store } from '../store/connect.js';
import type { OperationRecord } from '../store/operations.js';
import type { Queryable } from '../store/queryable.js';
import { inUnitOfWork } from '../store/unit-of-work.js';
import { writeOperationEvent } from '../webhooks/operation-events.js';
import type { ClaimFrom, Claims } from './correlation.js';
import { errorRecord, type ErrorRecord } from './error-record.js';
import type { AuditContext, OperationAudit } from './operation-audit.js';
import type { Operation, Settlement } from './operation-definition.js';
import { nextAttemptAt } from './retry-schedule.js';

/** The operation being settled: its record, how it is held now, and its audit context. */
export interface SettlementTarget {
  operation: Pick<Operation, 'name' | 'family' | 'rejected'>;
  /** The record as it is stored, or as it will be inserted (from.kind new). */
  record: OperationRecord;
  from: ClaimFrom;
  audit: AuditContext;
}

/** What a final transition wrote, as execution answers it. */
export type Settled = { kind: 'executed'; body: unknown } | { kind: 'rejected'; status: number; error: ErrorRecord };

export interface OperationSettlementOptions {
  store: Store;
  claims: Claims;
  audit: OperationAudit;
  /** The longest back-off between reconciliation attempts. */
  backoffMaxMs: number;
  /**
   * A transition has committed (the metrics): Executed or Rejected, final, once per operation;
   * Unknown, each time an execution's outcome is lost (not a reconciliation attempt's).
   */
  onSettled?: ((operation: string, outcome: SettledOutcome) => void) | undefined;
}

export type SettledOutcome = 'Executed' | 'Rejected' | 'Unknown';

export class OperationSettlement {
  readonly #options: OperationSettlementOptions;

  constructor(options: OperationSettlementOptions) {
    this.#options = options;
  }

  /**
   * The final transition inside the caller's unit of work (the embedded core's, whose postings
   * commit with it). The caller calls `committed()` once that unit of work has committed.
   */
  write(db: Queryable, target: SettlementTarget, settlement: Settlement, atEpochMs: number): Promise<Settled> {
    return settlement.status === 'Executed' ? this.#executed(db, target, settlement, atEpochMs) : this.#rejected(db, target, settlement.refusal, atEpochMs);
  }

  /** The final transition in a unit of work of its own (a rolled-back refusal, a remote core's outcome, the reconciler's), chained after it commits. */
  async commit(target: SettlementTarget, settlement: Settlement, atEpochMs: number): Promise<Settled> {
    const settled = await inUnitOfWork(this.#options.store, (unitOfWork) => this.write(unitOfWork.db, target, settlement, atEpochMs));
    this.committed(target, settled);
    return settled;
  }

  /** What follows a final transition's commit: the chainer links its audit record, the metrics count it. */
  committed(target: SettlementTarget, settled: Settled): void {
    this.#options.audit.chained();
    this.#options.onSettled?.(target.operation.name, settled.kind === 'executed' ? 'Executed' : 'Rejected');
  }

  /**
   * The outcome is unknown: the operation is held Unknown, its next reconciliation attempt
   * backed off by its attempts so far. With `entry` (an execution that failed at the core) the
   * record takes that error and an audit record is written, in one unit of work; without it (a
   * reconciliation attempt that failed) the record keeps the error it has and only moves.
   */
  async holdUnknown(target: SettlementTarget, atEpochMs: number, entry?: ErrorEntry, notBeforeEpochMs = 0): Promise<void> {
    const { store, claims, audit, backoffMaxMs } = this.#options;
    const { record, from } = target;
    const attempts = from.kind === 'new' ? 0 : record.attempts + 1;
    const nextAttemptEpochMs = Math.max(notBeforeEpochMs, nextAttemptAt(attempts, atEpochMs, backoffMaxMs));
    if (entry === undefined) {
      if (from.kind === 'new') throw new Error(`operation ${record.reference} is not stored: an unknown outcome needs its error`);
      await claims.move(store.db, record.reference, from.guard, { status: 'Unknown', attempts, nextAttemptEpochMs, atEpochMs });
      return;
    }
    const error = errorRecord(entry, 'The core\'s outcome is unknown', record.path, target.operation.family);
    await inUnitOfWork(store, async (unitOfWork) => {
      if (from.kind === 'new') {
        await claims.insertSettled(unitOfWork.db, { ...record, httpStatus: entry.status, error, attempts, nextAttemptEpochMs }, 'Unknown');
      } else {
        await claims.move(unitOfWork.db, record.reference, from.guard, { status: 'Unknown', httpStatus: entry.status, error, attempts, nextAttemptEpochMs, atEpochMs });
      }
      await audit.write(unitOfWork.db, target.audit, record.reference, entry.status, 'Unknown', entry);
    });
    audit.chained();
    this.#options.onSettled?.(target.operation.name, 'Unknown');
  }

  async #executed(db: Queryable, target: SettlementTarget, settlement: Settlement & { status: 'Executed' }, atEpochMs: number): Promise<Settled> {
    const { record, from } = target;
    if (from.kind === 'new') throw new Error(`operation ${record.reference} is executed only once claimed`);
    // Three independent writes, started together: on PostgreSQL one round trip (statement-queue.ts).
    // All three end before a failure is answered, so the unit of work rolls back with none in flight.
    const writes = await Promise.allSettled([
      this.#options.claims.move(db, record.reference, from.guard, { status: 'Executed', httpStatus: 200, result: settlement.body, request: null, atEpochMs }),
      // The outbox (docs/webhooks.md, "The outbox guarantee"): the event commits with the final
      // state, or neither does.
      writeOperationEvent(db, record, { status: 'Executed', result: settlement.body }, atEpochMs),
      this.#options.audit.write(db, target.audit, record.reference, 200, settlement.outcome),
    ]);
    for (const write of writes) if (write.status === 'rejected') throw write.reason;
    return { kind: 'executed', body: settlement.body };
  }

  async #rejected(db: Queryable, target: SettlementTarget, refusal: BusinessRefusal, atEpochMs: number): Promise<Settled> {
    const { claims, audit } = this.#options;
    const { record, from, operation } = target;
    const { status } = refusal.entry;
    const error = errorRecord(refusal.entry, refusal.message, record.path, operation.family);
    // An operation answered 202 keeps the body its kind gives a rejection (a loan's `Rejected`
    // status, docs/loans.md), dated as the 202 was: the client sees one time for one execution.
    const acceptedBody = record.accepted ? operation.rejected(record.reference, new Date(record.createdAt)) : undefined;
    if (from.kind === 'new') await claims.insertSettled(db, { ...record, httpStatus: status, error, request: undefined }, 'Rejected');
    else await claims.move(db, record.reference, from.guard, { status: 'Rejected', httpStatus: status, error, request: null, atEpochMs, ...(acceptedBody === undefined ? {} : { result: acceptedBody }) });
    // With the embedded core the postings rolled back; the rejection and its event commit here.
    await writeOperationEvent(db, record, { status: 'Rejected', error }, atEpochMs);
    await audit.write(db, target.audit, record.reference, status, 'Rejected', refusal.entry);
    return { kind: 'rejected', status, error };
  }
}
