/**
 * When the reconciler tries an unknown operation again: exponential back-off with jitter, capped,
 * and a bounded number of attempts after which the operation waits for an operator (it is
 * logged, counted in the metrics and reported by `coregate check`).
 */
/** The first retry comes between half of this and this after the outcome became unknown: long enough for the client's own repeat to come first. */
export const retryBaseMs = 2_000;
/** Retries are never further apart than this, by default (`--reconcile-backoff-max-ms`). */
export const retryIntervalMaxMs = 60_000;
/** Attempts the reconciler makes on its own before it leaves the operation to an operator. */
export const reconcileAttemptsMax = 50;
/** The epoch ms of "never again on its own". */
export const neverEpochMs = Number.MAX_SAFE_INTEGER;

export function nextAttemptAt(attempts: number, nowMs: number, intervalMaxMs: number = retryIntervalMaxMs, random: () => number = Math.random): number {
  if (attempts >= reconcileAttemptsMax) return neverEpochMs;
  const intervalMs = Math.min(intervalMaxMs, retryBaseMs * 2 ** Math.min(attempts, 16));
  // Full jitter on the upper half, so that instances and operations spread out.
  return nowMs + Math.round(intervalMs / 2 + (random() * intervalMs) / 2);
}
