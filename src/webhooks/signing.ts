/** Signing a delivery as Standard Webhooks specifies, with its reference implementation. */
import { Webhook } from 'standardwebhooks';

export interface SignedHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/** The headers of one attempt: the event's stable id, the attempt's time, the signature of both and the body. */
export function signDelivery(secret: string, eventId: string, payload: string, at: Date): SignedHeaders {
  const signature = new Webhook(secret).sign(eventId, at, payload);
  return { 'webhook-id': eventId, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': signature };
}
