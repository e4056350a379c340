/**
 * The dispatcher: fans each new event of the outbox out to its client's enabled endpoints whose
 * filter takes its type, as pending deliveries. Each event is fanned out in one transaction that
 * first marks it dispatched with a guarded update, so of several instances one does it; the
 * unique (event, endpoint) index makes a repeat harmless anyway. An endpoint registered after an
 * event was dispatched does not receive it.
 */
import type { Store } from '../store/connect.js';
import { timeOrderedUuid } from '../core/time-ordered-uuid.js';
import { claimEventDispatch, insertDelivery, listEndpoints, listUndispatchedEvents, type StoredWebhookEvent } from '../store/webhooks.js';
import { inUnitOfWork } from '../store/unit-of-work.js';

/** Events fanned out per pass: bounds one pass's work. */
const dispatchBatchMax = 100;

/** Fans out what is waiting; answers how many events it dispatched. */
export async function dispatchEvents(store: Store, nowMs: number = Date.now()): Promise<number> {
  const events = await listUndispatchedEvents(store.db, dispatchBatchMax);
  let dispatched = 0;
  for (const event of events) {
    if (await dispatchOne(store, event, nowMs)) dispatched += 1;
  }
  return dispatched;
}

async function dispatchOne(store: Store, event: StoredWebhookEvent, nowMs: number): Promise<boolean> {
  return inUnitOfWork(store, async ({ db }) => {
    if (!(await claimEventDispatch(db, event.id))) return false;
    const endpoints = await listEndpoints(db, { realm: event.realm, clientId: event.clientId });
    for (const endpoint of endpoints) {
      if (!endpoint.enabled) continue;
      if (endpoint.eventTypes.length > 0 && !endpoint.eventTypes.includes(event.type)) continue;
      await insertDelivery(db, { id: timeOrderedUuid(nowMs), eventId: event.id, endpointId: endpoint.id, nowMs });
    }
    return true;
  });
}
