/**
 * WAL checkpoints off the event loop. SQLite copies the write-ahead log back into the database
 * file (and fsyncs it) inside whichever commit crosses the auto-checkpoint threshold: with
 * better-sqlite3, synchronous, that commit held the event loop for tens of milliseconds and every
 * request in flight waited (the half-rate p99). A worker thread with its own connection runs
 * passive checkpoints instead: they never block a writer, and the main connection's automatic
 * checkpoints are turned off.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** How often the checkpointer copies the log back; the log holds at most about this much writing. */
export const walCheckpointIntervalMs = 200;

// A CommonJS script evaluated in the worker: no file to find, the same under tsx and in dist.
const workerSource = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driverPath);
const db = new Database(workerData.path);
db.pragma('synchronous = FULL');
const timer = setInterval(() => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch {
    // busy or closing: the next tick tries again
  }
}, workerData.intervalMs);
parentPort.on('message', () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

export interface WalCheckpointer {
  stop(): Promise<void>;
}

export interface WalCheckpointerOptions {
  intervalMs?: number;
  /**
   * Called once if the worker fails or exits before stop(): the caller turns SQLite's automatic
   * checkpoints back on, so the log never grows without bound, and says so.
   */
  onFailure?: (error: Error) => void;
}

export function startWalCheckpointer(path: string, options: WalCheckpointerOptions = {}): WalCheckpointer {
  const { intervalMs = walCheckpointIntervalMs, onFailure } = options;
  const driverPath = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(workerSource, { eval: true, workerData: { path, driverPath, intervalMs } });
  worker.unref();
  let stopping = false;
  let failed = false;
  const fail = (error: Error) => {
    if (stopping || failed) return;
    failed = true;
    onFailure?.(error);
  };
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
    async stop() {
      stopping = true;
      worker.postMessage('stop');
      const timer = setTimeout(() => void worker.terminate(), 2_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

function describeWorkerError(error: unknown): string {
  if (error instanceof Error) return [error.name, error.message, (error as { code?: unknown }).code].filter((part) => typeof part === 'string' && part !== '').join(' ') || 'unknown error';
  return String(error);
}
