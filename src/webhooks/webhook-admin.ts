/**
 * What an operator does with webhooks, the same from the CLI and the operator API: register,
 * list and remove endpoints, list deliveries, retry one. Answers plain values, never a stored
 * secret (only `add` answers the secret it just made, once).
 */
import type { Vault } from '../auth/vault.js';
import { deleteEndpoint, deliveryStatuses, listDeliveries, listEndpoints, retryDelivery, type DeliveryStatus, type WebhookDelivery, type WebhookEndpoint } from '../store/webhooks.js';
import type { Queryable } from '../store/queryable.js';
import { EndpointRefused, registerEndpoint, type EndpointRequest } from './endpoints.js';
import type { TargetPolicy } from './target-address.js';

/** Deliveries listed at most at once. */
export const deliveriesListedMax = 500;
export const deliveriesListedDefault = 50;

export { EndpointRefused };

/** `nowMs`: the registration time; events written before it are not sent to the endpoint. */
export function addEndpoint(db: Queryable, vault: Vault, request: EndpointRequest, targets: TargetPolicy, nowMs: number): Promise<WebhookEndpoint & { secret: string }> {
  return registerEndpoint(db, vault, request, targets, nowMs);
}

export function endpointsOf(db: Queryable, client?: { realm: string; clientId: string }): Promise<WebhookEndpoint[]> {
  return listEndpoints(db, client);
}

export function removeEndpoint(db: Queryable, id: string): Promise<boolean> {
  return deleteEndpoint(db, id);
}

export interface DeliveryQuery {
  status?: string;
  limit?: number;
  client?: { realm: string; clientId: string };
}

/** Checks the query (EndpointRefused says what is wrong) and lists deliveries, newest first. */
export function deliveriesOf(db: Queryable, query: DeliveryQuery): Promise<WebhookDelivery[]> {
  const limit = query.limit ?? deliveriesListedDefault;
  if (!Number.isInteger(limit) || limit < 1 || limit > deliveriesListedMax) throw new EndpointRefused(`limit must be an integer from 1 to ${deliveriesListedMax}`);
  if (query.status !== undefined && !(deliveryStatuses as readonly string[]).includes(query.status)) {
    throw new EndpointRefused(`status must be one of ${deliveryStatuses.join(', ')}`);
  }
  return listDeliveries(db, { limit, ...(query.status === undefined ? {} : { status: query.status as DeliveryStatus }), ...(query.client ? { client: query.client } : {}) });
}

/** Makes a failed or pending delivery due now; answers whether it exists in such a state. */
export function retryDeliveryNow(db: Queryable, id: string, nowMs: number): Promise<boolean> {
  return retryDelivery(db, id, nowMs);
}
