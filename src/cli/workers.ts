/**
 * `serve --workers N`: N processes serve one port (node:cluster), so that the event loop's work
 * — HTTP, JSON, validation, logging — uses every core, not one. The primary prepares the store
 * once (migrations, data file, signing keys), starts the workers and supervises them: a worker
 * that dies is replaced, SIGTERM or SIGINT drains every worker. The workers are instances of
 * one deployment (CONTRACT §11): they share the store, and their background tasks (reconciler,
 * pending worker, audit chainer) claim their work as several instances do.
 */
import cluster, { type Worker } from 'node:cluster';
import type { Config } from '../config.js';
import { createLogger } from '../log.js';
import { prepareStore } from '../main.js';
import { Vault } from '../auth/vault.js';
import { freePort } from './free-port.js';
import { NewDatabaseFiles } from './new-database-files.js';

/** The port every worker listens on, chosen by the primary (for --port 0 too). */
export const clusterPortVariable = 'COREGATE_CLUSTER_PORT';
/**
 * A worker that died is replaced at once; one that dies again within this time waits longer each
 * time (doubling up to the maximum): a replacement that cannot start (its database is down) must
 * not be forked in a tight loop.
 */
const restartQuietMs = 10_000;
const restartDelayFirstMs = 500;
const restartDelayMaxMs = 10_000;

/** Extra time past the shutdown grace for the workers to exit before the primary gives up. */
const exitMarginMs = 5_000;
const startupFailure = 'startup failure';

export async function superviseWorkers(config: Config): Promise<void> {
  const logger = createLogger({ level: config.logLevel });
  // As serve.ts does for one process: a deployment whose workers all fail to start (a port in
  // use) leaves no database of the supervisor's making behind, for the next start to take as its own.
  const newFiles = NewDatabaseFiles.before(config.db);
  const { store } = await prepareStore(config, new Vault(config.masterKey), logger);
  await store.close();
  const port = config.port === 0 ? await freePort(config.host) : config.port;
  const env = { [clusterPortVariable]: String(port) };
  let stopping = false;
  let listening = 0;
  let lastDeathAtMs = -Infinity;
  let restartDelayMs = 0;

  const start = (): Worker => {
    const worker = cluster.fork(env);
    worker.once('listening', () => {
      listening += 1;
      if (listening === config.workers) logger.info({ workers: config.workers, port }, 'all workers are serving');
    });
    worker.once('exit', (code, signal) => {
      if (stopping) return;
      if (listening < config.workers) {
        // A worker that fails before it serves will fail again: stop rather than loop.
        logger.error({ worker: worker.id, code, signal }, 'a worker failed to start: stopping');
        stop(startupFailure, 1);
        return;
      }
      const now = Date.now();
      restartDelayMs = now - lastDeathAtMs < restartQuietMs ? Math.min(Math.max(restartDelayFirstMs, restartDelayMs * 2), restartDelayMaxMs) : 0;
      lastDeathAtMs = now;
      logger.error({ worker: worker.id, code, signal, restartInMs: restartDelayMs }, 'a worker died: starting another');
      setTimeout(() => {
        if (!stopping) start();
      }, restartDelayMs);
    });
    return worker;
  };

  const stop = (reason: string, exitCode = 0) => {
    if (stopping) return;
    stopping = true;
    // A worker that listened may have written to the database: it is kept then.
    const neverServed = reason === startupFailure && listening === 0;
    logger.info({ reason }, 'stopping the workers: they finish their in-flight requests');
    const workers = Object.values(cluster.workers ?? {}).filter((worker): worker is Worker => worker !== undefined);
    const exits = workers.map((worker) => new Promise<number>((resolve) => (worker.isDead() ? resolve(worker.process.exitCode ?? 0) : worker.once('exit', (code) => resolve(code ?? 1)))));
    for (const worker of workers) worker.process.kill('SIGTERM');
    const force = setTimeout(() => {
      logger.error('workers did not stop in time: exiting');
      process.exit(1);
    }, config.shutdownGraceMs + exitMarginMs);
    force.unref();
    void Promise.all(exits).then((codes) => {
      logger.info('stopped');
      // No worker ever listened: the workers have exited (their stores closed), the supervisor's store is closed.
      if (neverServed) {
        const removed = newFiles.removeCreated();
        if (removed.length > 0) process.stderr.write(`coregate: the start failed, so the database it had created is removed (${removed.join(', ')})\n`);
      }
      process.exit(codes.some((code) => code !== 0) ? 1 : exitCode);
    });
  };

  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  for (let i = 0; i < config.workers; i++) start();
}
