/**
 * Waiting for another connection's write lock on an SQLite file without holding the event loop.
 *
 * SQLite's own wait (`busy_timeout`) sleeps inside the statement: with better-sqlite3, on the
 * event loop. While another process (an operator command, `coregate core serve` on the same file)
 * held the write lock, every request of the instance stood still for as long, up to the whole
 * time-out; and where both connections live in one process (a test running an operator command
 * beside its server) the holder could not even finish, so the waiter always ran into the
 * time-out. The writer's connection therefore has no busy time-out (SQLITE_BUSY at once), and the
 * statements that take the write lock (`begin immediate`, a write outside a transaction) are tried
 * again here, after a pause on a timer, until `waitMs` has passed: then the last SQLITE_BUSY is
 * the answer, as SQLite's own time-out would have given it.
 *
 * The pauses grow as SQLite's own busy handler's do (1, 2, 4 ... ms, then every 25 ms). They run
 * on real time (the system clock's timers): the engine waits for a file, whatever clock the service
 * runs on.
 */
import { systemClock } from '../../clock/system-clock.js';
import { sleep } from '../../core/clock.js';

const pauseMaxMs = 25;

/** SQLITE_BUSY and its extended codes (better-sqlite3's SqliteError names them in `code`). */
export function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}

/**
 * `attempt()`'s answer: at once when the lock is free (no promise, no timer), else once a later
 * attempt gets it, or its SQLITE_BUSY after `waitMs`. A failed attempt changed nothing: a
 * statement that cannot take the lock has not run.
 */
export function waitForFileLock<T>(attempt: () => T, waitMs: number): T | Promise<T> {
  try {
    return attempt();
  } catch (error) {
    if (!isBusy(error) || waitMs <= 0) throw error;
  }
  return retry(attempt, systemClock.now() + waitMs);
}

async function retry<T>(attempt: () => T, deadline: number): Promise<T> {
  for (let delayMs = 1; ; delayMs = Math.min(delayMs * 2, pauseMaxMs)) {
    await sleep(systemClock, Math.max(0, Math.min(delayMs, deadline - systemClock.now())));
    try {
      return attempt();
    } catch (error) {
      if (!isBusy(error) || systemClock.now() >= deadline) throw error;
    }
  }
}
