/**
 * A circuit breaker for calls to a remote core: after `failuresMax` consecutive failures it opens,
 * and for `coolDownMs` every call fails at once, without touching the network — a dead core then
 * costs the API nothing, and the core is not hammered while it recovers. After the cool-down the
 * breaker is half-open: one trial call goes through (others still fail at once); its success
 * closes the breaker, its failure opens it for another cool-down. What counts as a failure is the
 * caller's to say (`run`'s `isFailure`): an error that is not one (the remote core's answer broke
 * its protocol, but it answered) neither counts nor resets the count while the breaker is closed,
 * and closes a half-open breaker as a success does: the trial reached the core.
 */
export type CircuitState = 'closed' | 'open' | 'half-open';

export interface CircuitBreakerOptions {
  /** Consecutive failures that open the breaker. */
  failuresMax: number;
  /** How long the breaker stays open before a trial call. */
  coolDownMs: number;
  /** The time in epoch milliseconds (the adapter's clock, src/core/clock.ts). */
  now: () => number;
  /** Told of every state change (metrics, logs). */
  onStateChange?: (state: CircuitState) => void;
}

/** The breaker refused the call without making it. */
export class CircuitOpen extends Error {
  override name = 'CircuitOpen';
}

export class CircuitBreaker {
  readonly #failuresMax: number;
  readonly #coolDownMs: number;
  readonly #now: () => number;
  readonly #onStateChange: ((state: CircuitState) => void) | undefined;
  #state: CircuitState = 'closed';
  #failures = 0;
  #openedAtMs = 0;
  #trialInFlight = false;

  constructor(options: CircuitBreakerOptions) {
    if (options.failuresMax < 1 || options.coolDownMs < 0) throw new Error('a circuit breaker needs failuresMax >= 1 and coolDownMs >= 0');
    this.#failuresMax = options.failuresMax;
    this.#coolDownMs = options.coolDownMs;
    this.#now = options.now;
    this.#onStateChange = options.onStateChange;
  }

  get state(): CircuitState {
    return this.#state;
  }

  /** Consecutive failures counted so far (0 after a success). */
  get failures(): number {
    return this.#failures;
  }

  /**
   * Runs `call` unless the breaker is open. An answer is a success; a rejection counts as a
   * failure when `isFailure` says so (every rejection by default), and otherwise not at all.
   */
  async run<T>(call: () => Promise<T>, isFailure: (error: unknown) => boolean = () => true): Promise<T> {
    const trial = this.#admit();
    try {
      const value = await call();
      this.#succeeded();
      return value;
    } catch (error) {
      if (isFailure(error)) this.#failed();
      // Not a failure (the core answered, outside its protocol): a half-open trial proved the core
      // reachable, so the breaker closes rather than stay half-open, refusing every other call.
      else if (trial) this.#succeeded();
      throw error;
    } finally {
      if (trial) this.#trialInFlight = false;
    }
  }

  /** Answers whether this call is the half-open trial; throws CircuitOpen when the call may not run. */
  #admit(): boolean {
    if (this.#state === 'closed') return false;
    if (this.#state === 'open') {
      const remainingMs = this.#openedAtMs + this.#coolDownMs - this.#now();
      if (remainingMs > 0) throw new CircuitOpen(`the core failed ${this.#failures} times in a row: circuit open for another ${remainingMs} ms`);
      this.#enter('half-open');
    }
    if (this.#trialInFlight) throw new CircuitOpen('the core is being probed by a trial call: circuit half-open');
    this.#trialInFlight = true;
    return true;
  }

  #succeeded(): void {
    this.#failures = 0;
    if (this.#state !== 'closed') this.#enter('closed');
  }

  #failed(): void {
    this.#failures += 1;
    if (this.#state === 'half-open' || (this.#state === 'closed' && this.#failures >= this.#failuresMax)) {
      this.#openedAtMs = this.#now();
      this.#enter('open');
    }
  }

  #enter(state: CircuitState): void {
    this.#state = state;
    this.#onStateChange?.(state);
  }
}
