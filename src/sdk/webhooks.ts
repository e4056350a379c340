/**
 * Verifying coregate's signed events (docs/webhooks.md) on the receiving side, with the Standard
 * Webhooks reference implementation: the signature over webhook-id, webhook-timestamp and the raw
 * body, under the endpoint's `whsec_` secret, and a timestamp within five minutes of now.
 */
import { Webhook, WebhookVerificationError } from 'standardwebhooks';

export type WebhookEventType = 'operation.executed' | 'operation.rejected' | 'termDeposit.matured' | 'loanInstallment.overdue';

/** An event as coregate sends it. `data` depends on the type (docs/webhooks.md). */
export interface WebhookEvent {
  /** The webhook-id header: the event's stable id, the same on every redelivery. */
  id: string;
  type: WebhookEventType;
  /** ISO 8601: when the event was written. */
  timestamp: string;
  data: Record<string, unknown>;
}

/** The event is not authentic (or the headers are missing, or the timestamp is too old or too new). */
export class WebhookSignatureError extends Error {
  override name = 'WebhookSignatureError';
}

export type WebhookHeaders = Record<string, string | string[] | undefined> | Headers;

/**
 * Verifies a delivery and answers its event; throws WebhookSignatureError otherwise. `payload` is
 * the raw request body exactly as received (a re-serialized JSON object would not verify).
 */
export function verifyWebhook(payload: string | Buffer, headers: WebhookHeaders, secret: string): WebhookEvent {
  const flat = flattenHeaders(headers);
  let event: unknown;
  try {
    event = new Webhook(secret).verify(payload, flat);
  } catch (error) {
    if (error instanceof WebhookVerificationError) throw new WebhookSignatureError(`The webhook cannot be verified: ${error.message}`);
    throw new WebhookSignatureError(`The webhook cannot be verified: ${(error as Error).message} (is the secret the endpoint's whsec_... secret?)`);
  }
  if (typeof event !== 'object' || event === null || typeof (event as { type?: unknown }).type !== 'string') {
    throw new WebhookSignatureError('The webhook is signed but is not a coregate event: no type');
  }
  const { type, timestamp, data } = event as { type: WebhookEventType; timestamp: string; data: Record<string, unknown> };
  return { id: flat['webhook-id'] ?? '', type, timestamp, data };
}

function flattenHeaders(headers: WebhookHeaders): Record<string, string> {
  const flat: Record<string, string> = {};
  if (typeof Headers !== 'undefined' && headers instanceof Headers) {
    headers.forEach((value, name) => {
      flat[name.toLowerCase()] = value;
    });
    return flat;
  }
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    flat[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return flat;
}
