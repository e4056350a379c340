/**
 * The outbox write of a settled operation: one insert, in the transaction that settles it, so that
 * the event exists exactly when the final state does (docs/webhooks.md, "The outbox guarantee").
 * Fan-out to endpoints happens later, in the dispatcher, off the request's path.
 */
import type { Queryable } from '../store/queryable.js';
import { insertEvent } from '../store/webhooks.js';
import { operationEvent, type FinalOutcome, type SettledOperation } from './events.js';

/** `nowMs`: when the operation settled, the event's timestamp. */
export async function writeOperationEvent(db: Queryable, operation: SettledOperation, outcome: FinalOutcome, nowMs: number): Promise<void> {
  await insertEvent(db, operationEvent(operation, outcome, nowMs));
}
