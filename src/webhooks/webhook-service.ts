/**
 * Signed events in the background of every instance (docs/webhooks.md, "The outbox guarantee" and
 * "Several instances"): each pass relays the core's new events, fans new events out to endpoints
 * and starts the deliveries that are due, each endpoint in its own lane; a pass never waits for an
 * attempt, so a hung endpoint delays no pass. Every step claims its work with a guarded update, so
 * instances share the work and never repeat it.
 */
import { randomUUID } from 'node:crypto';
import type { Vault } from '../auth/vault.js';
import type { Clock } from '../core/clock.js';
import type { CoreBankingPort } from '../core/port.js';
import type { Logger } from '../log.js';
import { Periodic } from '../clock/periodic.js';
import type { Store } from '../store/connect.js';
import { systemResolveHost, type ResolveHost } from './checked-lookup.js';
import { Deliverer } from './deliverer.js';
import type { DeliverySchedule } from './delivery-schedule.js';
import { dispatchEvents } from './dispatcher.js';
import { relayCoreEvents } from './maturity-relay.js';
import type { TargetPolicy } from './target-address.js';

/**
 * The core's event log is read at most this often: maturities come from end of day, and a remote
 * core is not asked over HTTP on every pass of every instance.
 */
export const relayIntervalMs = 5_000;

export interface WebhookServiceOptions {
  store: Store;
  /** Whose time runs the passes and decides what is due (src/core/clock.ts). */
  clock: Clock;
  vault: Vault;
  core: Pick<CoreBankingPort, 'eventsAfter'>;
  logger: Logger;
  schedule: DeliverySchedule;
  /** How long one POST to an endpoint may take. */
  requestTimeoutMs: number;
  /** How often a pass runs. */
  intervalMs: number;
  /** Which addresses deliveries may go to (--webhook-allow-private). */
  targets: TargetPolicy;
  /** Resolves endpoints' host names; the system's resolver unless a test gives a stub. */
  resolveHost?: ResolveHost;
  onAttempt?: (outcome: 'delivered' | 'retry' | 'failed') => void;
}

export class WebhookService {
  readonly #options: WebhookServiceOptions;
  readonly #periodic: Periodic;
  readonly #deliverer: Deliverer;
  /** The relay's failure is logged once until it works again (a core without an event log, a remote core down). */
  #relayFailing = false;
  #relayedAtMs = 0;
  /** Attempts the last pass started: drain() stops after a pass that started none. */
  #startedLastPass = 0;

  constructor(options: WebhookServiceOptions) {
    this.#options = options;
    this.#deliverer = new Deliverer({
      store: options.store,
      clock: options.clock,
      vault: options.vault,
      logger: options.logger,
      instanceId: randomUUID(),
      requestTimeoutMs: options.requestTimeoutMs,
      schedule: options.schedule,
      targets: options.targets,
      resolveHost: options.resolveHost ?? systemResolveHost,
      ...(options.onAttempt ? { onAttempt: options.onAttempt } : {}),
    });
    this.#periodic = new Periodic(options.clock, options.intervalMs, () => this.#pass(), (error) => options.logger.error({ err: error }, 'webhook pass failed'));
  }

  start(): void {
    this.#periodic.start();
    void this.kick();
  }

  /** Stops the passes, then abandons the attempts under way (their leases are given back). */
  async stop(): Promise<void> {
    await this.#periodic.stop();
    await this.#deliverer.stop();
  }

  /** Resolves when the attempts under way have ended (a pass does not wait for them). */
  idle(): Promise<void> {
    return this.#deliverer.idle();
  }

  /** Runs a pass now unless one is under way; resolves when it ends. */
  kick(): Promise<void> {
    return this.#periodic.kick();
  }

  /** One pass (relay, fan-out, start what is due), started or not; resolves when it ends, not its attempts (idle()). */
  runOnce(): Promise<void> {
    return this.#periodic.runOnce();
  }

  /**
   * Passes, each followed by the attempts it started, until a pass starts none: the tests' way to
   * have every event fanned out and every delivery due by the clock attempted.
   */
  async drain(passesMax = 50): Promise<void> {
    for (let pass = 0; pass < passesMax; pass += 1) {
      this.#startedLastPass = 0;
      await this.runOnce();
      await this.idle();
      if (this.#startedLastPass === 0) return;
    }
  }

  async #pass(): Promise<void> {
    await this.#relay();
    if (this.#periodic.stopped) return;
    await dispatchEvents(this.#options.store, this.#options.clock.now());
    if (this.#periodic.stopped) return;
    this.#startedLastPass = await this.#deliverer.deliverDue();
  }

  async #relay(): Promise<void> {
    const nowMs = this.#options.clock.now();
    if (nowMs - this.#relayedAtMs < relayIntervalMs) return;
    this.#relayedAtMs = nowMs;
    try {
      const pass = await relayCoreEvents(this.#options.store, this.#options.core, nowMs);
      if (this.#relayFailing) this.#options.logger.info('core events relayed again');
      this.#relayFailing = false;
      if (pass.written > 0 || pass.skipped > 0) this.#options.logger.debug(pass, 'core events relayed');
    } catch (error) {
      if (!this.#relayFailing) this.#options.logger.warn({ err: error }, 'core events cannot be read; retrying each pass');
      this.#relayFailing = true;
    }
  }
}
