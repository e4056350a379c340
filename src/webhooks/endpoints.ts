/**
 * Registering webhook endpoints, the same way from the data file, the CLI and the operator API:
 * the URL and the event types are checked, the client must exist, and the secret (given or
 * generated) is sealed by the vault before it is stored. The secret is answered once, to the
 * caller that registered the endpoint; nothing reads it back out.
 *
 * A URL whose host is a forbidden address (target-address.ts: loopback, private, link-local, ...,
 * in any of the forms the URL parser reads as one, such as `2130706433` or `0x7f.1`) is refused
 * here with a message naming the rule. A host name is checked again at every delivery, against
 * every address it resolves to then: a name's addresses can change after it is registered.
 */
import { randomUUID } from 'node:crypto';
import type { Vault } from '../auth/vault.js';
import { findClient } from '../store/clients.js';
import type { Queryable } from '../store/queryable.js';
import { insertEndpoint, type WebhookEndpoint } from '../store/webhooks.js';
import { isWebhookEventType, webhookEventTypes } from './events.js';
import { newEndpointSecret, secretProblem } from './secret.js';
import { forbiddenHostRange, isPrivateNetworkRange, type TargetPolicy } from './target-address.js';

/** The longest endpoint URL accepted. */
export const endpointUrlCharsMax = 2_048;

/** A registration refused for a reason the caller can fix; the message says how. */
export class EndpointRefused extends Error {
  override name = 'EndpointRefused';
}

export interface EndpointRequest {
  realm: string;
  clientId: string;
  url: string;
  /** `whsec_...`; generated when absent. */
  secret?: string;
  /** Empty or absent: every event type. */
  eventTypes?: readonly string[];
}

/** Answers why the URL cannot receive events under the target policy, or undefined. */
export function endpointUrlProblem(url: string, targets: TargetPolicy): string | undefined {
  if (url.length > endpointUrlCharsMax) return `the URL must have at most ${endpointUrlCharsMax} characters`;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return `"${url.slice(0, 100)}" is not a URL: give an absolute http(s) URL, e.g. https://example.com/webhooks`;
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return 'the URL must use https (or http for a local receiver)';
  // Credentials in the URL would be stored and shown in clear: the signature authenticates instead.
  if (parsed.username !== '' || parsed.password !== '') return 'the URL must not carry a user name or password: the signature authenticates the events';
  const range = forbiddenHostRange(parsed.hostname, targets);
  if (range === undefined) return undefined;
  const target = `the URL's host ${parsed.hostname} is a ${range} address`;
  // The words name the setting only where it would help: a link-local or reserved address is never a target.
  if (isPrivateNetworkRange(range)) {
    return `${target}: webhooks go to public addresses only, unless coregate runs with --webhook-allow-private (COREGATE_WEBHOOK_ALLOW_PRIVATE=true) for receivers on this machine or a private network`;
  }
  return `${target}, never a webhook target (docs/webhooks.md)`;
}

export function eventTypesProblem(eventTypes: readonly string[]): string | undefined {
  const unknown = eventTypes.filter((type) => !isWebhookEventType(type));
  if (unknown.length > 0) return `unknown event type ${unknown.map((t) => `"${t}"`).join(', ')}: use ${webhookEventTypes.join(', ')}`;
  return undefined;
}

/**
 * Registers the endpoint; answers it with its secret (to show once). `nowMs` is its registration
 * instant: it receives the events written from then on (dispatcher.ts).
 */
export async function registerEndpoint(db: Queryable, vault: Vault, request: EndpointRequest, targets: TargetPolicy, nowMs: number): Promise<WebhookEndpoint & { secret: string }> {
  const problem =
    endpointUrlProblem(request.url, targets) ?? eventTypesProblem(request.eventTypes ?? []) ?? (request.secret === undefined ? undefined : secretProblem(request.secret));
  if (problem) throw new EndpointRefused(problem);
  if (!(await findClient(db, request.realm, request.clientId))) {
    throw new EndpointRefused(`client "${request.clientId}" of realm "${request.realm}" does not exist: endpoints belong to a client of the auth service`);
  }
  const secret = request.secret ?? newEndpointSecret();
  const endpoint: WebhookEndpoint = {
    id: randomUUID(),
    realm: request.realm,
    clientId: request.clientId,
    url: request.url,
    enabled: true,
    eventTypes: [...new Set(request.eventTypes ?? [])],
    createdAt: new Date(nowMs).toISOString(),
  };
  await insertEndpoint(db, endpoint, vault.seal(secret));
  return { ...endpoint, secret };
}
