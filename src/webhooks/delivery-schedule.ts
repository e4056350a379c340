/**
 * When a failed delivery is tried again: exponential back-off with jitter, capped, within a
 * bounded retry period (24 hours by default, COREGATE_WEBHOOK_RETRY_SECONDS) after which the
 * delivery is failed and waits for an operator's retry.
 */

/** Attempts of one delivery at most, whatever the retry period: a limit on everything. */
export const deliveryAttemptsMax = 64;
/** Retries are never further apart than this. */
export const deliveryIntervalMaxMs = 60 * 60_000;

export interface DeliverySchedule {
  /** The first retry comes between half of this and this after the first failure. */
  firstRetryMs: number;
  /** A delivery not delivered this long after it was created is failed. */
  retryPeriodMs: number;
}

/**
 * The instant of the next attempt after `attempts` failed ones, or undefined when the delivery
 * has had its last attempt (the next would fall past the retry period or the attempt limit).
 */
export function nextDeliveryAttemptAt(schedule: DeliverySchedule, attempts: number, createdAtMs: number, nowMs: number, random: () => number = Math.random): number | undefined {
  if (attempts >= deliveryAttemptsMax) return undefined;
  const intervalMs = Math.min(deliveryIntervalMaxMs, schedule.firstRetryMs * 2 ** Math.min(attempts - 1, 30));
  // Full jitter on the upper half, so that endpoints coming back are not hit by every instance at once.
  const next = nowMs + Math.round(intervalMs / 2 + (random() * intervalMs) / 2);
  return next - createdAtMs > schedule.retryPeriodMs ? undefined : next;
}
