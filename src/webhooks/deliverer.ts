/**
 * The deliverer: leases due deliveries (one instance at a time per delivery, by a guarded update
 * of the lease, as the reconciler claims operations) and POSTs each event, signed, to its
 * endpoint. A 2xx answer is delivered; anything else, a time-out or a network error is retried
 * on the back-off schedule until the retry period ends, then failed. Delivery is at least once:
 * an instance that dies mid-attempt leaves a lease that runs out, and another sends it again
 * with the same webhook-id.
 *
 * Each endpoint has its own lane: at most `deliveriesPerEndpointMax` of its deliveries are in
 * flight in an instance, and a pass starts attempts without waiting for them to end. An endpoint
 * that accepts connections and never answers holds its own lane until its time-out, and nobody
 * else's: a pass that waited for every attempt it started delayed another client's event by the
 * slowest endpoint's time-out (issue 24).
 */
import type { Vault } from '../auth/vault.js';
import { dateOf, type Clock } from '../core/clock.js';
import type { Logger } from '../log.js';
import type { Store } from '../store/connect.js';
import { leaseDelivery, listDueDeliveries, recordAttempt, releaseLease, type DeliveryFailure, type LeasedDelivery } from '../store/webhooks.js';
import type { ResolveHost } from './checked-lookup.js';
import { nextDeliveryAttemptAt, type DeliverySchedule } from './delivery-schedule.js';
import { EndpointClient, type PostOutcome } from './endpoint-client.js';
import { signDelivery } from './signing.js';
import type { TargetPolicy } from './target-address.js';

/** Deliveries of one endpoint in flight at once in an instance: a slow endpoint fills only its own lane. */
export const deliveriesPerEndpointMax = 4;
/** Deliveries in flight at once in an instance, every endpoint together. */
export const deliveriesInFlightMax = 64;
/** Due deliveries read per query. */
const dueBatchMax = 20;
/**
 * Queries per pass at most. A query can return deliveries of an endpoint whose lane fills
 * meanwhile; the next one leaves that endpoint out, so other endpoints' deliveries behind them
 * are reached in the same pass.
 */
const dueQueriesPerPassMax = 8;

export interface DelivererOptions {
  store: Store;
  /** Whose time decides what is due, stamps attempts and signs deliveries (src/core/clock.ts). */
  clock: Clock;
  vault: Vault;
  logger: Logger;
  /** This instance, as lease owner. */
  instanceId: string;
  /** How long one POST may take. */
  requestTimeoutMs: number;
  schedule: DeliverySchedule;
  /** Which addresses deliveries may go to (target-address.ts). */
  targets: TargetPolicy;
  /** Resolves endpoints' host names (the system's resolver; a stub in the tests). */
  resolveHost: ResolveHost;
  /** Where attempts are reported (the metrics). */
  onAttempt?: (outcome: 'delivered' | 'retry' | 'failed') => void;
}

export class Deliverer {
  readonly #options: DelivererOptions;
  #client: EndpointClient;
  /** Attempts under way in this instance, by delivery id. */
  readonly #inFlight = new Map<string, { endpointId: string; done: Promise<void> }>();
  #stopping = new AbortController();

  constructor(options: DelivererOptions) {
    this.#options = options;
    this.#client = this.#newClient();
  }

  /** The lease outlives the longest attempt by a margin: a live instance never loses it mid-attempt. */
  get leaseMs(): number {
    return 2 * this.#options.requestTimeoutMs + 5_000;
  }

  /** Attempts under way in this instance, per endpoint id. */
  #inFlightByEndpoint(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const { endpointId } of this.#inFlight.values()) counts.set(endpointId, (counts.get(endpointId) ?? 0) + 1);
    return counts;
  }

  /**
   * Leases what is due now, as far as the lanes have room, and starts each attempt without
   * waiting for it (idle() waits); answers how many attempts it started.
   */
  async deliverDue(nowMs: number = this.#options.clock.now()): Promise<number> {
    const { store, instanceId } = this.#options;
    if (this.#stopping.signal.aborted) this.#stopping = new AbortController();
    let started = 0;
    for (let query = 0; query < dueQueriesPerPassMax && this.#inFlight.size < deliveriesInFlightMax; query++) {
      const counts = this.#inFlightByEndpoint();
      const full = [...counts].filter(([, count]) => count >= deliveriesPerEndpointMax).map(([endpointId]) => endpointId);
      const due = await listDueDeliveries(store.db, nowMs, dueBatchMax, full);
      let laneFilled = false;
      for (const { id, endpointId } of due) {
        if (this.#inFlight.size >= deliveriesInFlightMax) break;
        if ((counts.get(endpointId) ?? 0) >= deliveriesPerEndpointMax) {
          laneFilled = true;
          continue;
        }
        const delivery = await leaseDelivery(store.db, id, instanceId, nowMs, nowMs + this.leaseMs);
        if (!delivery) continue;
        counts.set(endpointId, (counts.get(endpointId) ?? 0) + 1);
        this.#start(delivery);
        started += 1;
      }
      // Fewer than a batch: everything due was seen. A full batch without a skipped lane was all started.
      if (due.length < dueBatchMax || !laneFilled) break;
    }
    return started;
  }

  /** Resolves when every attempt under way has ended (the tests; stop). */
  async idle(): Promise<void> {
    while (this.#inFlight.size > 0) await Promise.allSettled([...this.#inFlight.values()].map((attempt) => attempt.done));
  }

  /**
   * Abandons the attempts under way (their leases are given back, so another instance, or this
   * one started again, sends them at once) and waits for them to end.
   */
  async stop(): Promise<void> {
    this.#stopping.abort();
    await this.idle();
    await this.#client.close();
    this.#client = this.#newClient();
  }

  #newClient(): EndpointClient {
    const { targets, resolveHost, requestTimeoutMs, clock } = this.#options;
    return new EndpointClient({ policy: targets, resolveHost, requestTimeoutMs, clock });
  }

  #start(delivery: LeasedDelivery): void {
    const done = this.#attempt(delivery, this.#stopping.signal)
      .catch((error: unknown) => this.#options.logger.error({ err: error, delivery: delivery.id }, 'webhook delivery attempt failed to be recorded; its lease runs out and it is sent again'))
      .finally(() => this.#inFlight.delete(delivery.id));
    this.#inFlight.set(delivery.id, { endpointId: delivery.endpointId, done });
  }

  async #attempt(delivery: LeasedDelivery, stop: AbortSignal): Promise<void> {
    const { store, logger, instanceId } = this.#options;
    const outcome = await this.#post(delivery, stop);
    if (outcome.kind === 'stopped') {
      await releaseLease(store.db, delivery.id, instanceId, delivery.leaseUntilMs);
      return;
    }
    const ok = outcome.kind === 'answered' && outcome.statusCode >= 200 && outcome.statusCode < 300;
    const statusCode = outcome.kind === 'answered' ? outcome.statusCode : null;
    const failure: DeliveryFailure | null = ok ? null : outcome.kind === 'failed' ? outcome.failure : 'http_error';
    const nowMs = this.#options.clock.now();
    const attempts = delivery.attempts + 1;
    const next = ok ? undefined : nextDeliveryAttemptAt(this.#options.schedule, attempts, delivery.createdAtMs, nowMs);
    const status = ok ? 'delivered' : next === undefined ? 'failed' : 'pending';
    const recorded = await recordAttempt(store.db, delivery.id, instanceId, delivery.leaseUntilMs, {
      status,
      attempts,
      statusCode,
      error: failure,
      nextAttemptMs: next ?? nowMs,
      nowMs,
    });
    if (!recorded) logger.warn({ delivery: delivery.id, event: delivery.eventId }, 'webhook delivery lease ran out before its attempt was recorded; it will be sent again');
    // The operator's log has the detail (a socket's error code, the refused address); the views have the class.
    const log = { delivery: delivery.id, event: delivery.eventId, endpoint: delivery.endpointId, attempts, statusCode, failure: failure ?? undefined, detail: outcome.kind === 'failed' ? outcome.detail : undefined };
    if (status === 'failed') logger.error(log, 'webhook delivery failed: retry period over');
    else if (status === 'pending') logger.warn(log, 'webhook delivery attempt failed; retrying');
    this.#options.onAttempt?.(status === 'pending' ? 'retry' : status);
  }

  async #post(delivery: LeasedDelivery, stop: AbortSignal): Promise<PostOutcome> {
    let secret: string;
    try {
      secret = this.#options.vault.open(delivery.sealedSecret);
    } catch (error) {
      return { kind: 'failed', failure: 'signing_failed', detail: (error as Error).message };
    }
    const headers = signDelivery(secret, delivery.eventId, delivery.payload, dateOf(this.#options.clock));
    return this.#client.post(delivery.url, { 'content-type': 'application/json', 'user-agent': 'coregate-webhooks', ...headers }, delivery.payload, stop);
  }
}
