/**
 * Signed events in the store (docs/webhooks.md, "Store"): endpoints, the outbox of events and their
 * deliveries. An event is inserted in the transaction of the change it reports; fan-out and
 * delivery happen later, in the background (src/webhooks). Every claim of work by an instance is
 * an update guarded by the state it leaves, so several instances never do the same work at once.
 */
import type { Insertable, Selectable, Updateable } from 'kysely';
import { preparedInsert } from './prepared.js';
import { toBigInt } from './bigint.js';
import type { Queryable } from './queryable.js';
import type { WebhookDeliveryTable, WebhookEndpointTable, WebhookEventTable } from './schema.js';

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';
export const deliveryStatuses: readonly DeliveryStatus[] = ['pending', 'delivered', 'failed'];

/**
 * How a failed attempt ended, as the client and the operator views show it (`lastError`). A class,
 * never a socket's error text: "connection refused" against "reset" against "timed out" told an
 * open port from a closed one. The detail goes to the log.
 */
export type DeliveryFailure = 'http_error' | 'timeout' | 'connection_failed' | 'forbidden_target' | 'signing_failed';
export const deliveryFailures: readonly DeliveryFailure[] = ['http_error', 'timeout', 'connection_failed', 'forbidden_target', 'signing_failed'];

export interface WebhookEndpoint {
  id: string;
  realm: string;
  clientId: string;
  url: string;
  enabled: boolean;
  /** Empty: every event type. */
  eventTypes: string[];
  createdAt: string;
}

export interface NewWebhookEvent {
  id: string;
  type: string;
  realm: string;
  clientId: string;
  reference: string | null;
  /** The JSON body as it is signed and sent. */
  payload: string;
  createdAtMs: number;
}

export interface StoredWebhookEvent extends NewWebhookEvent {
  dispatched: boolean;
}

export interface WebhookDelivery {
  id: string;
  eventId: string;
  eventType: string;
  endpointId: string;
  url: string;
  status: DeliveryStatus;
  attempts: number;
  lastStatusCode: number | null;
  lastError: DeliveryFailure | null;
  nextAttemptAt: string | null;
  deliveredAt: string | null;
  createdAt: string;
}

/** A delivery leased by an instance, with what it needs to send it. */
export interface LeasedDelivery {
  id: string;
  eventId: string;
  endpointId: string;
  eventCreatedAtMs: number;
  payload: string;
  url: string;
  sealedSecret: string;
  attempts: number;
  createdAtMs: number;
  leaseUntilMs: number;
}

// Endpoints

export async function insertEndpoint(db: Queryable, endpoint: WebhookEndpoint, sealedSecret: string): Promise<void> {
  await db
    .insertInto('webhook_endpoints')
    .values({
      id: endpoint.id,
      realm: endpoint.realm,
      client_id: endpoint.clientId,
      url: endpoint.url,
      secret: sealedSecret,
      enabled: endpoint.enabled ? 1 : 0,
      event_types: JSON.stringify(endpoint.eventTypes),
      created_at: endpoint.createdAt,
    })
    .execute();
}

export async function listEndpoints(db: Queryable, client?: { realm: string; clientId: string }): Promise<WebhookEndpoint[]> {
  let query = db.selectFrom('webhook_endpoints').selectAll();
  if (client) query = query.where('realm', '=', client.realm).where('client_id', '=', client.clientId);
  const rows = await query.orderBy('created_at').orderBy('id').execute();
  return rows.map(toEndpoint);
}

/** The endpoint with the same client and URL (the data file loads each once). */
export async function findEndpointByUrl(db: Queryable, realm: string, clientId: string, url: string): Promise<WebhookEndpoint | undefined> {
  const row = await db.selectFrom('webhook_endpoints').selectAll().where('realm', '=', realm).where('client_id', '=', clientId).where('url', '=', url).executeTakeFirst();
  return row && toEndpoint(row);
}

/** Removes the endpoint and its deliveries not sent yet; answers whether it existed. */
export async function deleteEndpoint(db: Queryable, id: string): Promise<boolean> {
  const result = await db.deleteFrom('webhook_endpoints').where('id', '=', id).executeTakeFirst();
  if (result.numDeletedRows === 0n) return false;
  await db.deleteFrom('webhook_deliveries').where('endpoint_id', '=', id).where('status', '=', 'pending').execute();
  return true;
}

function toEndpoint(row: Selectable<WebhookEndpointTable>): WebhookEndpoint {
  return {
    id: row.id,
    realm: row.realm,
    clientId: row.client_id,
    url: row.url,
    enabled: Number(row.enabled) === 1,
    eventTypes: JSON.parse(row.event_types) as string[],
    createdAt: row.created_at,
  };
}

// Events (the outbox)

/** Inserts the event unless one with its id exists already (a re-read relay, a repeat). */
const eventInsert = preparedInsert<Insertable<WebhookEventTable>>(
  ['id', 'type', 'realm', 'client_id', 'reference', 'payload', 'created_at', 'created_epoch_ms', 'dispatched'],
  (db, rows) => db.insertInto('webhook_events').values(rows).onConflict((c) => c.column('id').doNothing()),
);

export async function insertEvent(db: Queryable, event: NewWebhookEvent): Promise<void> {
  await eventInsert.execute(db, {
    id: event.id,
    type: event.type,
    realm: event.realm,
    client_id: event.clientId,
    reference: event.reference,
    payload: event.payload,
    created_at: new Date(event.createdAtMs).toISOString(),
    created_epoch_ms: BigInt(event.createdAtMs),
    dispatched: 0,
  });
}

function toStoredEvent(row: Selectable<WebhookEventTable>): StoredWebhookEvent {
  return {
    id: row.id,
    type: row.type,
    realm: row.realm,
    clientId: row.client_id,
    reference: row.reference,
    payload: row.payload,
    createdAtMs: Number(toBigInt(row.created_epoch_ms)),
    dispatched: Number(row.dispatched) === 1,
  };
}

export async function listUndispatchedEvents(db: Queryable, limit: number): Promise<StoredWebhookEvent[]> {
  const rows = await db.selectFrom('webhook_events').selectAll().where('dispatched', '=', 0).orderBy('created_epoch_ms').limit(limit).execute();
  return rows.map(toStoredEvent);
}

export async function listEventsOf(db: Queryable, filter: { reference?: string; type?: string }): Promise<StoredWebhookEvent[]> {
  let query = db.selectFrom('webhook_events').selectAll();
  if (filter.reference !== undefined) query = query.where('reference', '=', filter.reference);
  if (filter.type !== undefined) query = query.where('type', '=', filter.type);
  const rows = await query.orderBy('created_epoch_ms').execute();
  return rows.map(toStoredEvent);
}

/** Marks the event dispatched if it was not; answers whether this caller won the fan-out. */
export async function claimEventDispatch(db: Queryable, eventId: string): Promise<boolean> {
  const result = await db.updateTable('webhook_events').set({ dispatched: 1 }).where('id', '=', eventId).where('dispatched', '=', 0).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Marks events dispatched without deliveries (no endpoint takes them); answers how many it marked. */
export async function markEventsDispatched(db: Queryable, eventIds: readonly string[]): Promise<number> {
  if (eventIds.length === 0) return 0;
  const result = await db.updateTable('webhook_events').set({ dispatched: 1 }).where('id', 'in', [...eventIds]).where('dispatched', '=', 0).executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Marks every event created up to `upToEpochMs` dispatched (no endpoint takes any); answers how many. */
export async function markEventsDispatchedUpTo(db: Queryable, upToEpochMs: number): Promise<number> {
  const result = await db.updateTable('webhook_events').set({ dispatched: 1 }).where('dispatched', '=', 0).where('created_epoch_ms', '<=', BigInt(upToEpochMs)).executeTakeFirst();
  return Number(result.numUpdatedRows);
}

// Deliveries

export async function insertDelivery(db: Queryable, delivery: { id: string; eventId: string; endpointId: string; nowMs: number }): Promise<void> {
  const now = new Date(delivery.nowMs).toISOString();
  await db
    .insertInto('webhook_deliveries')
    .values({
      id: delivery.id,
      event_id: delivery.eventId,
      endpoint_id: delivery.endpointId,
      status: 'pending',
      attempts: 0,
      next_attempt_epoch_ms: BigInt(delivery.nowMs),
      lease_owner: null,
      lease_until_epoch_ms: 0n,
      last_status_code: null,
      last_error: null,
      delivered_at: null,
      created_at: now,
      created_epoch_ms: BigInt(delivery.nowMs),
      updated_at: now,
    })
    .onConflict((c) => c.columns(['event_id', 'endpoint_id']).doNothing())
    .execute();
}

/**
 * Pending deliveries due now and not leased (or whose lease ran out), oldest due first, leaving
 * out the endpoints in `skipEndpointIds` (those whose lane is full in the asking instance).
 */
export async function listDueDeliveries(db: Queryable, nowMs: number, limit: number, skipEndpointIds: readonly string[]): Promise<Array<{ id: string; endpointId: string }>> {
  let query = db
    .selectFrom('webhook_deliveries')
    .select(['id', 'endpoint_id'])
    .where('status', '=', 'pending')
    .where('next_attempt_epoch_ms', '<=', BigInt(nowMs))
    .where('lease_until_epoch_ms', '<=', BigInt(nowMs));
  if (skipEndpointIds.length > 0) query = query.where('endpoint_id', 'not in', [...skipEndpointIds]);
  const rows = await query.orderBy('next_attempt_epoch_ms').orderBy('id').limit(limit).execute();
  return rows.map((row) => ({ id: row.id, endpointId: row.endpoint_id }));
}

/**
 * Leases one delivery for `owner` until `untilMs`, only if it is still pending, due and unleased:
 * of several instances racing for it, one wins. Answers what the winner needs to send it.
 */
export async function leaseDelivery(db: Queryable, id: string, owner: string, nowMs: number, untilMs: number): Promise<LeasedDelivery | undefined> {
  const result = await db
    .updateTable('webhook_deliveries')
    .set({ lease_owner: owner, lease_until_epoch_ms: BigInt(untilMs) })
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .where('next_attempt_epoch_ms', '<=', BigInt(nowMs))
    .where('lease_until_epoch_ms', '<=', BigInt(nowMs))
    .executeTakeFirst();
  if (result.numUpdatedRows === 0n) return undefined;
  const row = await db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_events as e', 'e.id', 'd.event_id')
    .innerJoin('webhook_endpoints as p', 'p.id', 'd.endpoint_id')
    .select(['d.id', 'd.event_id', 'd.endpoint_id', 'd.attempts', 'd.created_epoch_ms', 'e.payload', 'e.created_epoch_ms as event_created_epoch_ms', 'p.url', 'p.secret'])
    .where('d.id', '=', id)
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    id: row.id,
    eventId: row.event_id,
    endpointId: row.endpoint_id,
    eventCreatedAtMs: Number(toBigInt(row.event_created_epoch_ms)),
    payload: row.payload,
    url: row.url,
    sealedSecret: row.secret,
    attempts: Number(row.attempts),
    createdAtMs: Number(toBigInt(row.created_epoch_ms)),
    leaseUntilMs: untilMs,
  };
}

export interface AttemptOutcome {
  status: DeliveryStatus;
  attempts: number;
  statusCode: number | null;
  error: DeliveryFailure | null;
  nextAttemptMs: number;
  nowMs: number;
}

/** Records an attempt's outcome and releases the lease, only while `owner` still holds it. */
export async function recordAttempt(db: Queryable, id: string, owner: string, leaseUntilMs: number, outcome: AttemptOutcome): Promise<boolean> {
  const now = new Date(outcome.nowMs).toISOString();
  return updateWhileLeased(db, { id, owner, leaseUntilMs }, {
    status: outcome.status,
    attempts: outcome.attempts,
    last_status_code: outcome.statusCode,
    last_error: outcome.error,
    next_attempt_epoch_ms: BigInt(outcome.nextAttemptMs),
    lease_owner: null,
    lease_until_epoch_ms: 0n,
    updated_at: now,
    ...(outcome.status === 'delivered' ? { delivered_at: now } : {}),
  });
}

/**
 * Gives a lease back without an attempt (the instance stopped mid-request): the delivery is due
 * again at once for any instance, instead of after its lease runs out. Only while `owner` holds it.
 */
export async function releaseLease(db: Queryable, id: string, owner: string, leaseUntilMs: number): Promise<boolean> {
  return updateWhileLeased(db, { id, owner, leaseUntilMs }, { lease_owner: null, lease_until_epoch_ms: 0n });
}

/**
 * Updates a pending delivery only while `owner` still holds the lease it took until `leaseUntilMs`
 * (a lease that ran out and was taken by another instance is not this one's to change); answers
 * whether it did.
 */
async function updateWhileLeased(db: Queryable, lease: { id: string; owner: string; leaseUntilMs: number }, values: Updateable<WebhookDeliveryTable>): Promise<boolean> {
  const result = await db
    .updateTable('webhook_deliveries')
    .set(values)
    .where('id', '=', lease.id)
    .where('status', '=', 'pending')
    .where('lease_owner', '=', lease.owner)
    .where('lease_until_epoch_ms', '=', BigInt(lease.leaseUntilMs))
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * An operator's retry: a failed (or pending) delivery is due again now. Its retry period is not
 * renewed: past it, one more attempt is made, and a failure is final again.
 */
export async function retryDelivery(db: Queryable, id: string, nowMs: number): Promise<boolean> {
  const result = await db
    .updateTable('webhook_deliveries')
    .set({ status: 'pending', next_attempt_epoch_ms: BigInt(nowMs), updated_at: new Date(nowMs).toISOString() })
    .where('id', '=', id)
    .where('status', 'in', ['failed', 'pending'])
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export interface DeliveryFilter {
  status?: DeliveryStatus;
  /** A client's own deliveries only. */
  client?: { realm: string; clientId: string };
  eventId?: string;
  /** The deliveries of one operation's events (the console's link from a request or an operation). */
  reference?: string;
  limit: number;
}

/** Deliveries newest first, with their event's type and their endpoint's URL. */
export async function listDeliveries(db: Queryable, filter: DeliveryFilter): Promise<WebhookDelivery[]> {
  let query = db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_events as e', 'e.id', 'd.event_id')
    .innerJoin('webhook_endpoints as p', 'p.id', 'd.endpoint_id')
    .select([
      'd.id',
      'd.event_id',
      'e.type',
      'd.endpoint_id',
      'p.url',
      'd.status',
      'd.attempts',
      'd.last_status_code',
      'd.last_error',
      'd.next_attempt_epoch_ms',
      'd.delivered_at',
      'd.created_at',
    ]);
  if (filter.status !== undefined) query = query.where('d.status', '=', filter.status);
  if (filter.eventId !== undefined) query = query.where('d.event_id', '=', filter.eventId);
  if (filter.reference !== undefined) query = query.where('e.reference', '=', filter.reference);
  if (filter.client) query = query.where('p.realm', '=', filter.client.realm).where('p.client_id', '=', filter.client.clientId);
  const rows = await query.orderBy('d.created_epoch_ms', 'desc').orderBy('d.id', 'desc').limit(filter.limit).execute();
  return rows.map((row) => ({
    id: row.id,
    eventId: row.event_id,
    eventType: row.type,
    endpointId: row.endpoint_id,
    url: row.url,
    status: row.status as DeliveryStatus,
    attempts: Number(row.attempts),
    lastStatusCode: row.last_status_code === null ? null : Number(row.last_status_code),
    lastError: failureOf(row.last_error),
    nextAttemptAt: row.status === 'pending' ? new Date(Number(toBigInt(row.next_attempt_epoch_ms))).toISOString() : null,
    deliveredAt: row.delivered_at,
    createdAt: row.created_at,
  }));
}

/**
 * A stored last error as its class. Rows written before the classes hold words, some with a
 * socket's error code ("the request failed: ECONNREFUSED"): they are shown as their class too.
 */
function failureOf(stored: string | null): DeliveryFailure | null {
  if (stored === null) return null;
  if ((deliveryFailures as readonly string[]).includes(stored)) return stored as DeliveryFailure;
  if (stored.startsWith('the endpoint answered HTTP')) return 'http_error';
  if (stored.startsWith('no answer within')) return 'timeout';
  return 'connection_failed';
}
