/**
 * The events a client can receive (docs/webhooks.md, "Events") and their payloads, as the Standard
 * Webhooks specification shapes them: `{ type, timestamp, data }`. An event's id is derived from
 * what it reports (an operation's reference and final state, a core event's id), so writing it
 * twice writes it once. Payloads carry no secret and no token.
 */
import { createHash } from 'node:crypto';
import type { CoreEvent } from '../core/port.js';
import type { NewWebhookEvent } from '../store/webhooks.js';

export const webhookEventTypes = ['operation.executed', 'operation.rejected', 'termDeposit.matured', 'loanInstallment.overdue'] as const;
export type WebhookEventType = (typeof webhookEventTypes)[number];

export function isWebhookEventType(value: string): value is WebhookEventType {
  return (webhookEventTypes as readonly string[]).includes(value);
}

/** A client of the auth service, as endpoints and events name it. */
export interface ClientName {
  realm: string;
  clientId: string;
}

/**
 * The realm and client id of an operation's client key (`{issuer}#{client_id}`, the issuer
 * ending in `/realms/{realm}` for the auth service's own realms and Keycloak's). The issuer's
 * host is left out on purpose: instances behind different URLs share one client.
 */
export function clientOfKey(clientKey: string): ClientName {
  const hash = clientKey.indexOf('#', clientKey.lastIndexOf('/realms/'));
  const issuer = hash < 0 ? clientKey : clientKey.slice(0, hash);
  const clientId = hash < 0 ? '' : clientKey.slice(hash + 1);
  const marker = issuer.lastIndexOf('/realms/');
  const encodedRealm = marker < 0 ? issuer : issuer.slice(marker + '/realms/'.length);
  let realm = encodedRealm;
  try {
    realm = decodeURIComponent(encodedRealm);
  } catch {
    // A malformed escape names the realm as written.
  }
  return { realm, clientId };
}

/** A UUID (version 8, RFC 9562) derived from a name: the same name, the same id. */
export function derivedUuid(name: string): string {
  const hex = createHash('sha256').update(name).digest('hex');
  const variant = ((parseInt(hex.slice(16, 17), 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** What an operation event says: the operation as it was settled. */
export interface SettledOperation {
  reference: string;
  operation: string;
  clientKey: string;
  correlationId: string;
}

export type FinalOutcome = { status: 'Executed'; result: unknown } | { status: 'Rejected'; error: unknown };

export function operationEvent(operation: SettledOperation, outcome: FinalOutcome, nowMs: number): NewWebhookEvent {
  const client = clientOfKey(operation.clientKey);
  const type: WebhookEventType = outcome.status === 'Executed' ? 'operation.executed' : 'operation.rejected';
  const data = {
    reference: operation.reference,
    operation: operation.operation,
    realm: client.realm,
    clientId: client.clientId,
    correlationId: operation.correlationId,
    status: outcome.status,
    ...(outcome.status === 'Executed' ? { result: outcome.result } : { error: outcome.error }),
  };
  return {
    id: derivedUuid(`operation:${operation.reference}:${outcome.status}`),
    type,
    realm: client.realm,
    clientId: client.clientId,
    reference: operation.reference,
    payload: JSON.stringify({ type, timestamp: new Date(nowMs).toISOString(), data }),
    createdAtMs: nowMs,
  };
}

/** The webhook event of a core event, for the client whose operation made the contract. */
export function coreWebhookEvent(event: CoreEvent, client: ClientName, nowMs: number): NewWebhookEvent {
  const data = { ...event.data, businessDate: event.businessDate, operationReference: event.operationReference, realm: client.realm, clientId: client.clientId };
  return {
    id: derivedUuid(`core-event:${event.id}`),
    type: event.type,
    realm: client.realm,
    clientId: client.clientId,
    reference: event.operationReference,
    payload: JSON.stringify({ type: event.type, timestamp: new Date(nowMs).toISOString(), data }),
    createdAtMs: nowMs,
  };
}
