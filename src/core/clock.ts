/**
 * Time as a parameter (docs/architecture.md, "Time"; as jose's `currentDate`): whatever reads the
 * time or waits is handed a Clock, so a test can run the service on a fake one and move it instead
 * of sleeping. The system's clock is given only where the service is wired (src/main.ts, src/cli,
 * src/core-http/core-service.ts); this module stays pure: the interface and what is built on it.
 */

/** A scheduled callback; clearing it after it fired does nothing. */
export interface Timer {
  clear(): void;
}

export interface TimerOptions {
  /**
   * Background work (a loop's next pass) must not keep the process alive; a wait someone awaits
   * (a core call's time-out) does. The system clock unrefs the former; a fake clock ignores it.
   */
  background?: boolean;
}

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Calls `callback` once, `delayMs` from now. */
  setTimeout(callback: () => void, delayMs: number, options?: TimerOptions): Timer;
}

/** The clock's time as a Date (audit records, signatures, ISO timestamps). */
export function dateOf(clock: Clock): Date {
  return new Date(clock.now());
}

/** The clock's time in whole epoch seconds (JWT claims, key lifetimes). */
export function epochSecondsOf(clock: Clock): number {
  return Math.floor(clock.now() / 1000);
}

/** Resolves after `delayMs` of the clock's time; early, with the signal's abort, when one is given. */
export function sleep(clock: Clock, delayMs: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) {
      resolve();
      return;
    }
    const onAbort = () => {
      timer.clear();
      resolve();
    };
    const timer = clock.setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, delayMs);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
