/**
 * The system's clock and timers. Only the wiring hands it out (src/main.ts, src/cli,
 * src/core-http/core-service.ts); every other module is given a Clock (src/core/clock.ts).
 */
import type { Clock, Timer, TimerOptions } from '../core/clock.js';

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout(callback: () => void, delayMs: number, options?: TimerOptions): Timer {
    const handle = setTimeout(callback, delayMs);
    if (options?.background) handle.unref();
    return { clear: () => clearTimeout(handle) };
  },
};
