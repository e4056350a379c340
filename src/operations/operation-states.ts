/**
 * The states of an operation record and the only transitions between them. Every change of an
 * operation's status in the application layer goes through `assertTransition`, and every store
 * update is guarded by the state it leaves, so that two instances never both move one operation.
 *
 *   (new) ──► Pending ──► InFlight ──► Executed
 *     │          ▲ │        │   ▲  └──► Rejected
 *     │          │ ▼        ▼   │
 *     ├────────► Unknown ◄──┘───┘ ──► Executed | Rejected (settled by a lookup in the core)
 *     └──► InFlight, Rejected, Unknown (an attempt rolled back before the record was stored)
 *
 * - Pending: accepted with 202 (or in the core's batch window), waiting for the pending worker.
 * - InFlight: claimed by one instance, which is calling the core. An in-flight operation older
 *   than its lease was abandoned (the instance died) and the reconciler takes it over.
 * - Unknown: the core's answer was lost (502/504); a repeat or the reconciler settles it.
 * - Executed, Rejected: final.
 */
import type { OperationStatus } from '../core/operation-status.js';

export type { OperationStatus };

/** Where each state may go; `new` is an operation not stored yet. */
export const allowedTransitions: Readonly<Record<OperationStatus | 'new', readonly OperationStatus[]>> = {
  new: ['Pending', 'InFlight', 'Unknown', 'Rejected'],
  Pending: ['InFlight', 'Unknown', 'Rejected'],
  InFlight: ['InFlight', 'Executed', 'Rejected', 'Unknown'],
  // A repeat of an unknown outcome with respond-async queues it again.
  Unknown: ['Pending', 'InFlight', 'Unknown', 'Executed', 'Rejected'],
  Executed: [],
  Rejected: [],
};

export function canTransition(from: OperationStatus | 'new', to: OperationStatus): boolean {
  return allowedTransitions[from].includes(to);
}

/** A transition outside the table is a programming error, never a client's. */
export function assertTransition(from: OperationStatus | 'new', to: OperationStatus): void {
  if (!canTransition(from, to)) throw new Error(`operation state ${from} cannot become ${to}`);
}

export function isFinal(status: OperationStatus): boolean {
  return allowedTransitions[status].length === 0;
}

/** What GET /v1/operations shows: an operation not final yet is Pending (docs/api.md, "200, 202, 204"). */
export function visibleStatus(status: OperationStatus): 'Pending' | 'Executed' | 'Rejected' {
  return status === 'Executed' || status === 'Rejected' ? status : 'Pending';
}
