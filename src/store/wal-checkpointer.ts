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

export function startWalCheckpointer(path: string, intervalMs = walCheckpointIntervalMs): WalCheckpointer {
  const driverPath = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(workerSource, { eval: true, workerData: { path, driverPath, intervalMs } });
  worker.unref();
  // A checkpointer that fails leaves the log to grow; the main connection still works. Never crash for it.
  worker.on('error', () => {});
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  return {
    async stop() {
      worker.postMessage('stop');
      const timer = setTimeout(() => void worker.terminate(), 2_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
