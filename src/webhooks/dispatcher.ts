/**
 * The dispatcher: fans each new event of the outbox out to its client's enabled endpoints whose
 * filter takes its type, as pending deliveries. Each event is fanned out in one transaction that
 * first marks it dispatched with a guarded update, so of several instances one does it; the
 * unique (event, endpoint) index makes a repeat harmless anyway.
 *
 * An endpoint receives the events written at or after its registration, and no older one
 * (docs/webhooks.md). The two stored instants decide, compared here: whether the dispatcher had
 * fanned an older event out before the endpoint appeared was timing luck, and an endpoint
 * registered 10 ms after an event was written received it when the next pass came after both.
 */
import type { Store } from '../store/connect.js';
import { timeOrderedUuid } from '../core/time-ordered-uuid.js';
import {
  claimEventDispatch,
  insertDelivery,
  listEndpoints,
  listUndispatchedEvents,
  markEventsDispatched,
  markEventsDispatchedUpTo,
  type StoredWebhookEvent,
  type WebhookEndpoint,
} from '../store/webhooks.js';
import { inUnitOfWork } from '../store/unit-of-work.js';

/** Events fanned out per pass: bounds one pass's work. */
const dispatchBatchMax = 100;

/** Batches fanned out in one pass at most, when endpoints take some events. */
const dispatchBatchesPerPassMax = 20;

/** Fans out what is waiting; answers how many events it dispatched. */
export async function dispatchEvents(store: Store, nowMs: number): Promise<number> {
  let dispatched = 0;
  // Read once per pass, when there is something to dispatch.
  let endpoints: WebhookEndpoint[] | undefined;
  for (let batch = 0; batch < dispatchBatchesPerPassMax; batch++) {
    const events = await listUndispatchedEvents(store.db, dispatchBatchMax);
    if (events.length === 0) break;
    endpoints ??= (await listEndpoints(store.db)).filter((endpoint) => endpoint.enabled);
    // No endpoint at all (a sandbox, most installations): every event up to now is marked in one
    // statement, whatever the backlog. A batch at a time, operations under load outran the
    // dispatcher and a backlog of thousands was marked for minutes after the load.
    if (endpoints.length === 0) return dispatched + (await markEventsDispatchedUpTo(store.db, nowMs));
    dispatched += await dispatchBatch(store, events, endpoints, nowMs);
    if (events.length < dispatchBatchMax) break;
  }
  return dispatched;
}

async function dispatchBatch(store: Store, events: readonly StoredWebhookEvent[], endpoints: readonly WebhookEndpoint[], nowMs: number): Promise<number> {
  // Most events belong to clients without a matching endpoint: they are marked in one update,
  // so the dispatcher does not cost the store a transaction per operation.
  const wanted = (event: StoredWebhookEvent) => endpoints.some((endpoint) => takes(endpoint, event));
  const unwanted = events.filter((event) => !wanted(event)).map((event) => event.id);
  let dispatched = await markEventsDispatched(store.db, unwanted);
  for (const event of events.filter(wanted)) {
    if (await dispatchOne(store, event, nowMs)) dispatched += 1;
  }
  return dispatched;
}

function takes(endpoint: WebhookEndpoint, event: StoredWebhookEvent): boolean {
  return (
    endpoint.enabled &&
    endpoint.realm === event.realm &&
    endpoint.clientId === event.clientId &&
    (endpoint.eventTypes.length === 0 || endpoint.eventTypes.includes(event.type)) &&
    event.createdAtMs >= Date.parse(endpoint.createdAt)
  );
}

async function dispatchOne(store: Store, event: StoredWebhookEvent, nowMs: number): Promise<boolean> {
  return inUnitOfWork(store, async ({ db }) => {
    if (!(await claimEventDispatch(db, event.id))) return false;
    // Read again in the transaction: an endpoint removed meanwhile gets no delivery.
    const endpoints = await listEndpoints(db, { realm: event.realm, clientId: event.clientId });
    for (const endpoint of endpoints.filter((candidate) => takes(candidate, event))) {
      await insertDelivery(db, { id: timeOrderedUuid(nowMs), eventId: event.id, endpointId: endpoint.id, nowMs });
    }
    return true;
  });
}
