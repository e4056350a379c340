/** The core's batch window (docs/api.md, "200, 202, 204"): a UTC time of day in which operations are queued (202). */
export interface BatchWindow {
  startSecond: number;
  endSecond: number;
}

export function inBatchWindow(window: BatchWindow | undefined, now: Date): boolean {
  if (!window) return false;
  const second = now.getUTCHours() * 3600 + now.getUTCMinutes() * 60 + now.getUTCSeconds();
  return window.startSecond <= window.endSecond
    ? second >= window.startSecond && second < window.endSecond
    : second >= window.startSecond || second < window.endSecond;
}
