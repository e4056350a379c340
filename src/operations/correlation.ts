/**
 * Claiming an operation (docs/api.md, "Correlation ids and duplicates"; docs/deployment.md, "The
 * reconciler"): a correlation id is consumed by inserting the operation record, and a stored
 * operation is taken over by an update guarded by the state it leaves. Whoever loses a claim to a
 * concurrent request, instance or worker learns it in one place, `recoverClaim`, which answers with
 * the operation that won.
 */
import type { StoreUnitOfWork } from '../store/unit-of-work.js';
import {
  findOperationByCorrelation,
  insertOperation,
  isUniqueViolation,
  updateOperation,
  type OperationChange,
  type OperationGuard,
  type OperationRecord,
} from '../store/operations.js';
import type { OperationStatus } from '../core/operation-status.js';
import type { Queryable } from '../store/queryable.js';
import type { DuplicateWindow } from './duplicate-window.js';
import { assertTransition } from './operation-states.js';

/** How a job finds its operation record: not stored yet, or stored in a known state. */
export type ClaimFrom = { kind: 'new' } | { kind: 'stored'; guard: OperationGuard };

/** A concurrent request consumed the correlation id, or another instance moved the operation. */
export class ClaimLost extends Error {
  constructor(readonly reference: string) {
    super(`operation ${reference} was claimed concurrently`);
  }
}

/** A concurrent identical request (no correlation id) won the duplicate window. */
export class DuplicateInWindow extends Error {
  constructor(readonly original: OperationRecord) {
    super('duplicate request within the window');
  }
}

export class Claims {
  constructor(private readonly window: DuplicateWindow) {}

  /**
   * Takes the operation into `to` (InFlight to execute it now, Pending to queue it) inside the
   * unit of work. A new operation consumes its correlation id here; without one, the duplicate
   * window is checked again under its lock.
   */
  async claim(unitOfWork: StoreUnitOfWork, record: OperationRecord, from: ClaimFrom, to: 'InFlight' | 'Pending', atEpochMs: number): Promise<void> {
    if (from.kind === 'new') {
      assertTransition('new', to);
      if (this.window.applies(record)) {
        const duplicate = await this.window.findLocked(unitOfWork, record);
        if (duplicate) throw new DuplicateInWindow(duplicate);
      }
      const at = new Date(atEpochMs).toISOString();
      await insertOperation(unitOfWork.db, { ...record, status: to, updatedAt: at, updatedEpochMs: atEpochMs });
      return;
    }
    // Pending is taken by the worker once due: a repeat of an unknown outcome at once, whatever its backoff was.
    const due = to === 'Pending' ? { nextAttemptEpochMs: record.nextAttemptEpochMs } : {};
    await this.move(unitOfWork.db, record.reference, from.guard, { status: to, request: record.request, accepted: record.accepted, atEpochMs, ...due });
  }

  /** Whether claiming reads the duplicate window first (a new operation whose client sent no correlation id). */
  checksWindow(record: OperationRecord, from: ClaimFrom): boolean {
    return from.kind === 'new' && this.window.applies(record);
  }

  /**
   * A guarded transition of a stored operation; ClaimLost when it was no longer in that state. An
   * operation that becomes Executed loses any error record: an earlier attempt's 502/504 (the
   * unknown outcome a repeat or the reconciler settled) is not its outcome, and the operation
   * resource shows only the final one (docs/api.md, "200, 202, 204").
   */
  async move(db: Queryable, reference: string, guard: OperationGuard, change: OperationChange): Promise<void> {
    assertTransition(guard.status, change.status);
    const settled = change.status === 'Executed' ? { ...change, error: null } : change;
    if (!(await updateOperation(db, reference, guard, settled))) throw new ClaimLost(reference);
  }

  /** Inserts a new operation already in its final or unknown state (after a rolled-back attempt). */
  async insertSettled(db: Queryable, record: OperationRecord, status: OperationStatus): Promise<void> {
    assertTransition('new', status);
    await insertOperation(db, { ...record, status });
  }
}

export type ClaimRecovery = { kind: 'duplicate'; original: OperationRecord } | { kind: 'taken'; original: OperationRecord | undefined };

/**
 * The one place where a lost claim is recovered: a duplicate within the window answers with the
 * earlier operation; a consumed correlation id (unique violation) or an operation moved by
 * another instance answers with the operation that holds the id. Anything else is not a claim.
 */
export async function recoverClaim(db: Queryable, error: unknown, record: Pick<OperationRecord, 'clientKey' | 'correlationId'>): Promise<ClaimRecovery | undefined> {
  if (error instanceof DuplicateInWindow) return { kind: 'duplicate', original: error.original };
  if (error instanceof ClaimLost || isUniqueViolation(error)) {
    return { kind: 'taken', original: await findOperationByCorrelation(db, record.clientKey, record.correlationId) };
  }
  return undefined;
}
