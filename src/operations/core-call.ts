/**
 * Calls to the core with a time-out (docs/api.md, "Failures of the core"): an answer later than the
 * time-out is a CoreTimeout (504), a failure of the core's transport a CoreUnavailable (502). Both
 * leave the outcome unknown. Every call is measured for the metrics.
 */
import type { Clock } from '../core/clock.js';
import { CoreTimeout, CoreUnavailable } from '../core/port.js';

export type CoreCallResult = 'ok' | 'refused' | 'timeout' | 'unavailable' | 'error';

/** Where core calls are reported (the metrics); a no-op by default. */
export type CoreCallObserver = (call: string, result: CoreCallResult, seconds: number) => void;

/** `work`'s answer, or a CoreTimeout once `timeoutMs` of the clock's time has passed without one. */
export function withTimeout<T>(clock: Clock, work: Promise<T>, timeoutMs: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = clock.setTimeout(() => reject(new CoreTimeout(`no answer within ${timeoutMs} ms`)), timeoutMs);
    work.then(
      (value) => {
        timer.clear();
        resolve(value);
      },
      (error: unknown) => {
        timer.clear();
        reject(error);
      },
    );
  });
}

export function isCoreFailure(error: unknown): error is CoreTimeout | CoreUnavailable {
  return error instanceof CoreTimeout || error instanceof CoreUnavailable;
}

export function callResultOf(error: unknown): CoreCallResult {
  if (error instanceof CoreTimeout) return 'timeout';
  if (error instanceof CoreUnavailable) return 'unavailable';
  return 'error';
}

/**
 * Runs one measured call with the time-out. `failureOf` classifies a thrown error; undefined
 * means the error was not the core's doing (a lost correlation claim) and is not counted.
 */
export async function callCore<T>(
  clock: Clock,
  observe: CoreCallObserver,
  call: string,
  timeoutMs: number,
  work: () => Promise<T>,
  resultOf: (value: T) => CoreCallResult = () => 'ok',
  failureOf: (error: unknown) => CoreCallResult | undefined = callResultOf,
): Promise<T> {
  const startedAt = process.hrtime.bigint();
  const seconds = () => Number(process.hrtime.bigint() - startedAt) / 1e9;
  try {
    const value = await withTimeout(clock, work(), timeoutMs);
    observe(call, resultOf(value), seconds());
    return value;
  } catch (error) {
    const result = failureOf(error);
    if (result !== undefined) observe(call, result, seconds());
    throw error;
  }
}
