/**
 * Driving an instance's background work instead of waiting for it (docs/testing.md, "Time": a test
 * that waits for background work drives it, it never sleeps for it).
 */
import type { TestServer } from './server.js';

/**
 * Runs a pass of the pending worker of every instance (two in the two-instances deployment) and
 * resolves when each has ended. A 202 starts its instance's pass before it is answered, so this
 * awaits that pass (runOnce shares a pass under way); afterwards every operation pending when it
 * was called has been attempted.
 */
export async function runPendingWorkers(server: TestServer): Promise<void> {
  for (const instance of server.instances) await instance.background.pendingWorker.runOnce();
}
