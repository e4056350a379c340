/**
 * The deliverer: leases due deliveries (one instance at a time per delivery, by a guarded update
 * of the lease, as the reconciler claims operations) and POSTs each event, signed, to its
 * endpoint. A 2xx answer is delivered; anything else, a time-out or a network error is retried
 * on the back-off schedule until the retry period ends, then failed. Delivery is at least once:
 * an instance that dies mid-attempt leaves a lease that runs out, and another sends it again
 * with the same webhook-id.
 */
import type { Vault } from '../auth/vault.js';
import type { Logger } from '../log.js';
import type { Store } from '../store/connect.js';
import { leaseDelivery, listDueDeliveryIds, recordAttempt, type LeasedDelivery } from '../store/webhooks.js';
import { nextDeliveryAttemptAt, type DeliverySchedule } from './delivery-schedule.js';
import { signDelivery } from './signing.js';

/** Deliveries leased per pass: bounds one pass's work and its concurrent requests. */
const deliveryBatchMax = 20;
/** The last error kept for the operator: enough to read, never a response body at length. */
const errorCharsMax = 300;

export interface DelivererOptions {
  store: Store;
  vault: Vault;
  logger: Logger;
  /** This instance, as lease owner. */
  instanceId: string;
  /** How long one POST may take. */
  requestTimeoutMs: number;
  schedule: DeliverySchedule;
  /** Where attempts are reported (the metrics). */
  onAttempt?: (outcome: 'delivered' | 'retry' | 'failed') => void;
}

export class Deliverer {
  readonly #options: DelivererOptions;

  constructor(options: DelivererOptions) {
    this.#options = options;
  }

  /** The lease outlives the longest attempt by a margin: a live instance never loses it mid-attempt. */
  get leaseMs(): number {
    return 2 * this.#options.requestTimeoutMs + 5_000;
  }

  /** Leases and sends what is due now; answers how many deliveries it attempted. */
  async deliverDue(nowMs: number = Date.now()): Promise<number> {
    const { store, instanceId } = this.#options;
    const ids = await listDueDeliveryIds(store.db, nowMs, deliveryBatchMax);
    const leased: LeasedDelivery[] = [];
    for (const id of ids) {
      const delivery = await leaseDelivery(store.db, id, instanceId, nowMs, nowMs + this.leaseMs);
      if (delivery) leased.push(delivery);
    }
    await Promise.all(leased.map((delivery) => this.#attempt(delivery)));
    return leased.length;
  }

  async #attempt(delivery: LeasedDelivery): Promise<void> {
    const { store, logger, instanceId } = this.#options;
    const answer = await this.#post(delivery);
    const nowMs = Date.now();
    const attempts = delivery.attempts + 1;
    const next = answer.ok ? undefined : nextDeliveryAttemptAt(this.#options.schedule, attempts, delivery.createdAtMs, nowMs);
    const status = answer.ok ? 'delivered' : next === undefined ? 'failed' : 'pending';
    const recorded = await recordAttempt(store.db, delivery.id, instanceId, delivery.leaseUntilMs, {
      status,
      attempts,
      statusCode: answer.statusCode,
      error: answer.ok ? null : answer.error,
      nextAttemptMs: next ?? nowMs,
      nowMs,
    });
    if (!recorded) logger.warn({ delivery: delivery.id, event: delivery.eventId }, 'webhook delivery lease ran out before its attempt was recorded; it will be sent again');
    const log = { delivery: delivery.id, event: delivery.eventId, attempts, statusCode: answer.statusCode, error: answer.ok ? undefined : answer.error };
    if (status === 'failed') logger.error(log, 'webhook delivery failed: retry period over');
    else if (status === 'pending') logger.warn(log, 'webhook delivery attempt failed; retrying');
    this.#options.onAttempt?.(status === 'pending' ? 'retry' : status);
  }

  async #post(delivery: LeasedDelivery): Promise<{ ok: boolean; statusCode: number | null; error: string }> {
    let secret: string;
    try {
      secret = this.#options.vault.open(delivery.sealedSecret);
    } catch (error) {
      return { ok: false, statusCode: null, error: (error as Error).message };
    }
    const headers = signDelivery(secret, delivery.eventId, delivery.payload, new Date());
    try {
      const response = await fetch(delivery.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': 'coregate-webhooks', ...headers },
        body: delivery.payload,
        // A redirect is not a delivery: the endpoint's URL is the one registered.
        redirect: 'manual',
        signal: AbortSignal.timeout(this.#options.requestTimeoutMs),
      });
      // The body is not read: only the status counts.
      await response.body?.cancel().catch(() => {});
      if (response.status >= 200 && response.status < 300) return { ok: true, statusCode: response.status, error: '' };
      return { ok: false, statusCode: response.status, error: `the endpoint answered HTTP ${response.status}` };
    } catch (error) {
      return { ok: false, statusCode: null, error: describeNetworkError(error, this.#options.requestTimeoutMs) };
    }
  }
}

/** A network failure in the operator's words, without the URL (it may carry a token in its query). */
function describeNetworkError(error: unknown, timeoutMs: number): string {
  const name = (error as { name?: string }).name;
  if (name === 'TimeoutError' || name === 'AbortError') return `no answer within ${timeoutMs} ms`;
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const detail = cause?.code ?? cause?.message ?? (error as Error).message ?? String(error);
  return `the request failed: ${detail}`.slice(0, errorCharsMax);
}
