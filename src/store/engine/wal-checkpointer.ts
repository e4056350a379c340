/**
 * WAL checkpoints off the event loop. SQLite copies the write-ahead log back into the database
 * file (and fsyncs it) inside whichever commit crosses the auto-checkpoint threshold: with
 * better-sqlite3, synchronous, that commit held the event loop for tens of milliseconds and every
 * request in flight waited (the half-rate p99). A worker thread with its own connection runs
 * passive checkpoints instead: they never block a writer, and the main connection's automatic
 * checkpoints are turned off.
 *
 * A passive checkpoint never lets the log start over under a steady stream of commits: SQLite
 * rewinds the log only when a writer begins after every frame has been copied back, and a new
 * commit always lands while the checkpoint runs. The log then grew without bound (70 MB in 7
 * seconds of refused requests, measured), every commit appended to a growing file, and every sync
 * of the log wrote the file's inode too (one more disk request each: a third more per sync on
 * this VM's disk, where a request is a VM exit). So once the log holds `walRestartFrames` frames the
 * worker asks for a quiet moment: the store holds back its writers (asynchronously: the event
 * loop goes on serving), the worker runs one more passive checkpoint, which with no commit landing
 * copies back the few frames the last one left, and the next writer starts the log over from its
 * beginning, rewriting the same blocks. Passive, not RESTART: a RESTART checkpoint takes the
 * write lock and waits for readers, and another connection to the file (another process, or the
 * remote core's store in the tests' own process) would then wait in SQLite's busy handler, which
 * sleeps on its event loop; a passive one never blocks anyone, and if another connection wrote
 * meanwhile the log starts over at a later moment.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { systemClock } from '../../clock/system-clock.js';

/** How often the checkpointer copies the log back; the log holds at most about this much writing. */
export const walCheckpointIntervalMs = 200;
/** Frames in the log (about 4 MiB of 4 KiB pages, SQLite's own auto-checkpoint size) past which the log is started over. */
export const walRestartFrames = 1_000;

// A CommonJS script evaluated in the worker: no file to find, the same under tsx and in dist.
const workerSource = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driverPath);
const db = new Database(workerData.path);
db.pragma('synchronous = FULL');
let restartAsked = false;
const timer = setInterval(() => {
  try {
    const [result] = db.pragma('wal_checkpoint(PASSIVE)');
    if (result.log >= workerData.restartFrames && !restartAsked) {
      restartAsked = true;
      parentPort.postMessage({ type: 'quiet-wanted' });
    }
  } catch {
    // busy or closing: the next tick tries again
  }
}, workerData.intervalMs);
parentPort.on('message', (message) => {
  if (message.type === 'no-quiet') {
    restartAsked = false;
    return;
  }
  if (message.type === 'quiet') {
    // The store's writers are held back: copy back what is left, so that the next writer starts the log over.
    try {
      db.pragma('wal_checkpoint(PASSIVE)');
    } catch {
      // closing: nothing to do
    }
    restartAsked = false;
    parentPort.postMessage({ type: 'restarted' });
    return;
  }
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

export interface WalCheckpointer {
  stop(): Promise<void>;
  /** Resolves once the worker thread has exited, stopped or failed (tests wait on it instead of sleeping). */
  readonly exited: Promise<void>;
}

export interface WalCheckpointerOptions {
  intervalMs?: number;
  /**
   * Called once if the worker fails or exits before stop(): the caller turns SQLite's automatic
   * checkpoints back on, so the log never grows without bound, and says so.
   */
  onFailure?: (error: Error) => void;
  /**
   * Runs `work` while the store's writers are held back (no write transaction open, none
   * starting), answering when it ends; without it the log is never started over under load.
   */
  quietWindow?: (work: () => Promise<void>) => Promise<void>;
}

export function startWalCheckpointer(path: string, options: WalCheckpointerOptions = {}): WalCheckpointer {
  const { intervalMs = walCheckpointIntervalMs, onFailure, quietWindow } = options;
  const driverPath = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(workerSource, {
    eval: true,
    workerData: { path, driverPath, intervalMs, restartFrames: quietWindow ? walRestartFrames : Number.POSITIVE_INFINITY },
  });
  worker.unref();
  let stopping = false;
  let failed = false;
  /** Ends the quiet window in progress: the worker answered, failed or is stopping. */
  let endQuiet: (() => void) | undefined;
  const fail = (error: Error) => {
    endQuiet?.();
    if (stopping || failed) return;
    failed = true;
    onFailure?.(error);
  };
  worker.on('message', (message: { type: string }) => {
    if (message.type === 'restarted') endQuiet?.();
    if (message.type !== 'quiet-wanted' || quietWindow === undefined || stopping) return;
    void quietWindow(
      () =>
        new Promise<void>((resolve) => {
          endQuiet = () => {
            endQuiet = undefined;
            resolve();
          };
          if (stopping || failed) endQuiet();
          else worker.postMessage({ type: 'quiet' });
        }),
    ).catch(() => {
      // No quiet moment to be had (the store is closing): the worker may ask again later.
      if (!stopping && !failed) worker.postMessage({ type: 'no-quiet' });
    });
  });
  // Never crash for it: the main connection still works.
  // An error thrown in the worker arrives cloned, sometimes without its message: name what is known.
  worker.on('error', (error: unknown) => fail(new Error(`the WAL checkpointer thread failed: ${describeWorkerError(error)}`)));
  const exited = new Promise<void>((resolve) =>
    worker.once('exit', (code) => {
      fail(new Error(`the WAL checkpointer thread exited (code ${code})`));
      resolve();
    }),
  );
  return {
    exited,
    async stop() {
      stopping = true;
      endQuiet?.();
      worker.postMessage({ type: 'stop' });
      // Real time: the worker's own exit, whatever clock the service runs on.
      const timer = systemClock.setTimeout(() => void worker.terminate(), 2_000);
      await exited;
      timer.clear();
    },
  };
}

function describeWorkerError(error: unknown): string {
  if (error instanceof Error) return [error.name, error.message, (error as { code?: unknown }).code].filter((part) => typeof part === 'string' && part !== '').join(' ') || 'unknown error';
  return String(error);
}
