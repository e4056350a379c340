/**
 * The background reconciler's timing, for tests (src/operations/retry-schedule.ts;
 * docs/deployment.md, "The reconciler"): its first try at an unknown outcome is due 1-2 s after the
 * failure and taken at its next pass (every 2 s by default); a try that fails (a lookup slower than
 * the core time-out on a loaded machine) puts the next one 2-4 s later, then 4-8 s.
 */

/**
 * Serve flags that keep the reconciler idle (a pass an hour): for tests that drive it themselves,
 * and for tests whose repeat after a 502/504 must come first (otherwise the reconciler may fence
 * the operation, NOT_EXECUTED, before the repeat on a loaded machine).
 */
export const reconcilerIdle = { reconcileIntervalMs: '3600000' } as const;

/** How long a test waits for the reconciler to settle a late outcome on a remote core. */
export const reconcilerSettlesMs = 30_000;
