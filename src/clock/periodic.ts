/**
 * A background task of an instance (the pending worker, the reconciler, the webhook passes): one
 * pass at a time, every `intervalMs` of the clock it is given, on timers that do not keep the
 * process alive; stopped by waiting for the pass under way. A test drives it instead of waiting
 * for it: `runOnce()` runs a pass and resolves when it ends, whether or not the timers run.
 */
import type { Clock, Timer } from '../core/clock.js';

export class Periodic {
  readonly #clock: Clock;
  readonly #intervalMs: number;
  readonly #pass: () => Promise<void>;
  readonly #onError: (error: unknown) => void;
  #timer: Timer | undefined;
  #working: Promise<void> | undefined;
  #started = false;
  #stopping = false;

  constructor(clock: Clock, intervalMs: number, pass: () => Promise<void>, onError: (error: unknown) => void) {
    this.#clock = clock;
    this.#intervalMs = intervalMs;
    this.#pass = pass;
    this.#onError = onError;
  }

  /** Set once stop() was called: a pass under way ends early, and no other starts. */
  get stopped(): boolean {
    return this.#stopping;
  }

  start(): void {
    this.#started = true;
    this.#stopping = false;
    this.#schedule();
  }

  async stop(): Promise<void> {
    this.#stopping = true;
    this.#timer?.clear();
    this.#timer = undefined;
    await this.#working;
  }

  /**
   * Runs a pass now unless one is under way (then that one is awaited); resolves when it ends.
   * Does nothing before start() (an instance whose role runs no background work) or after stop().
   */
  kick(): Promise<void> {
    if (!this.#started) return Promise.resolve();
    return this.runOnce();
  }

  /** One pass, started or not (tests and one-shot commands drive the loop with it); nothing after stop(). */
  runOnce(): Promise<void> {
    if (this.#stopping) return Promise.resolve();
    this.#working ??= this.#pass()
      .catch(this.#onError)
      .finally(() => {
        this.#working = undefined;
      });
    return this.#working;
  }

  // The next tick is scheduled as this one fires, so passes keep their cadence however long one takes.
  #schedule(): void {
    this.#timer = this.#clock.setTimeout(
      () => {
        if (this.#stopping) return;
        this.#schedule();
        void this.kick();
      },
      this.#intervalMs,
      { background: true },
    );
  }
}
