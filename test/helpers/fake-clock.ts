/**
 * A clock for tests (src/core/clock.ts): time stands still until the test moves it. `advance(ms)`
 * fires the timers that fall due, in the order of their due times (ties in the order they were
 * set), each with `now()` at its due time; timers they set fire too when due within the advance.
 * A test that waits for background work moves this clock and drives the loop (`runOnce()`), so
 * nothing depends on how fast the machine is.
 */
import type { Clock, Timer } from '../../src/core/clock.js';

interface Scheduled {
  dueMs: number;
  order: number;
  callback: () => void;
}

/** 2026-03-02T09:00:00Z: a Monday, a business day of the demo calendar. */
export const fakeClockStartMs = Date.parse('2026-03-02T09:00:00.000Z');

export class FakeClock implements Clock {
  #nowMs: number;
  #order = 0;
  readonly #timers = new Set<Scheduled>();
  readonly #awaited: Array<{ delayMs: number; resolve: () => void }> = [];

  constructor(startMs = fakeClockStartMs) {
    this.#nowMs = startMs;
  }

  now = (): number => this.#nowMs;

  setTimeout = (callback: () => void, delayMs: number): Timer => {
    const scheduled: Scheduled = { dueMs: this.#nowMs + Math.max(0, delayMs), order: this.#order++, callback };
    this.#timers.add(scheduled);
    for (const waiter of this.#awaited.filter((candidate) => candidate.delayMs === delayMs)) {
      this.#awaited.splice(this.#awaited.indexOf(waiter), 1);
      waiter.resolve();
    }
    return { clear: () => void this.#timers.delete(scheduled) };
  };

  /**
   * Resolves when a timer of exactly `delayMs` is next set: a test learns that a request reached
   * its wait (a core call's time-out, a slow core's delay) before it moves the clock past it.
   */
  timerSet(delayMs: number): Promise<void> {
    return new Promise((resolve) => this.#awaited.push({ delayMs, resolve }));
  }

  /** Timers set and not yet fired or cleared. */
  get pendingTimers(): number {
    return this.#timers.size;
  }

  /** When the next timer falls due; undefined when none is set. */
  get nextDueMs(): number | undefined {
    return this.#next()?.dueMs;
  }

  /** Moves time forward by `ms`, firing every timer that falls due meanwhile, in order. */
  advance(ms: number): void {
    if (!(ms >= 0)) throw new RangeError(`a fake clock only moves forward (asked ${ms} ms)`);
    const targetMs = this.#nowMs + ms;
    for (let next = this.#next(); next !== undefined && next.dueMs <= targetMs; next = this.#next()) {
      this.#timers.delete(next);
      this.#nowMs = next.dueMs;
      next.callback();
    }
    this.#nowMs = targetMs;
  }

  /** Sets the time (forward only: timers due by then fire, as with advance). */
  set(epochMs: number): void {
    this.advance(epochMs - this.#nowMs);
  }

  #next(): Scheduled | undefined {
    let first: Scheduled | undefined;
    for (const timer of this.#timers) {
      if (first === undefined || timer.dueMs < first.dueMs || (timer.dueMs === first.dueMs && timer.order < first.order)) first = timer;
    }
    return first;
  }
}
