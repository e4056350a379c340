/**
 * `serve --workers N`: N processes serve one port (node:cluster), so that the event loop's work —
 * HTTP, JSON, validation, logging — uses every core, not one. The primary prepares the store once
 * (migrations, data file, signing keys), starts the workers and supervises them: a worker that dies
 * is replaced, SIGTERM or SIGINT drains every worker. The workers are instances of one deployment
 * (docs/deployment.md, "Several instances behind a load balancer"): they share the store, and their
 * background tasks (reconciler, pending worker, audit chainer) claim their work as several
 * instances do.
 */
import cluster, { type Worker } from 'node:cluster';
import type { Config } from '../config.js';
import type { Clock } from '../core/clock.js';
import { createLogger, type Logger } from '../log.js';
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

export async function superviseWorkers(config: Config, clock: Clock): Promise<void> {
  const logger = createLogger({ level: config.logLevel });
  // As serve.ts does for one process: a deployment whose workers all fail to start (a port in
  // use) leaves no database of the supervisor's making behind, for the next start to take as its own.
  const newFiles = NewDatabaseFiles.before(config.db);
  const { store } = await prepareStore(config, new Vault(config.masterKey), logger, false, clock);
  await store.close();
  const port = config.port === 0 ? await freePort(config.host) : config.port;
  const supervisor = new WorkerSupervisor(config, port, { clock, logger, newFiles });
  process.on('SIGTERM', () => supervisor.stop('SIGTERM'));
  process.on('SIGINT', () => supervisor.stop('SIGINT'));
  for (let i = 0; i < config.workers; i++) supervisor.start();
}

/** The workers of one deployment: started, replaced when one dies, stopped together. */
class WorkerSupervisor {
  readonly #env: Record<string, string>;
  #stopping = false;
  #listening = 0;
  #lastDeathAtMs = -Infinity;
  #restartDelayMs = 0;

  constructor(
    private readonly config: Config,
    private readonly port: number,
    private readonly parts: { clock: Clock; logger: Logger; newFiles: NewDatabaseFiles },
  ) {
    this.#env = { [clusterPortVariable]: String(port) };
  }

  start(): Worker {
    const worker = cluster.fork(this.#env);
    worker.once('listening', () => {
      this.#listening += 1;
      if (this.#listening === this.config.workers) this.parts.logger.info({ workers: this.config.workers, port: this.port }, 'all workers are serving');
    });
    worker.once('exit', (code, signal) => this.#onExit(worker, code, signal));
    return worker;
  }

  #onExit(worker: Worker, code: number, signal: string): void {
    if (this.#stopping) return;
    const { clock, logger } = this.parts;
    if (this.#listening < this.config.workers) {
      // A worker that fails before it serves will fail again: stop rather than loop.
      logger.error({ worker: worker.id, code, signal }, 'a worker failed to start: stopping');
      this.stop(startupFailure, 1);
      return;
    }
    const now = clock.now();
    this.#restartDelayMs = now - this.#lastDeathAtMs < restartQuietMs ? Math.min(Math.max(restartDelayFirstMs, this.#restartDelayMs * 2), restartDelayMaxMs) : 0;
    this.#lastDeathAtMs = now;
    logger.error({ worker: worker.id, code, signal, restartInMs: this.#restartDelayMs }, 'a worker died: starting another');
    clock.setTimeout(() => {
      if (!this.#stopping) this.start();
    }, this.#restartDelayMs);
  }

  stop(reason: string, exitCode = 0): void {
    if (this.#stopping) return;
    this.#stopping = true;
    const { clock, logger } = this.parts;
    // A worker that listened may have written to the database: it is kept then.
    const neverServed = reason === startupFailure && this.#listening === 0;
    logger.info({ reason }, 'stopping the workers: they finish their in-flight requests');
    const workers = Object.values(cluster.workers ?? {}).filter((worker): worker is Worker => worker !== undefined);
    const exits = workers.map((worker) => new Promise<number>((resolve) => (worker.isDead() ? resolve(worker.process.exitCode ?? 0) : worker.once('exit', (code) => resolve(code ?? 1)))));
    for (const worker of workers) worker.process.kill('SIGTERM');
    clock.setTimeout(
      () => {
        logger.error('workers did not stop in time: exiting');
        process.exit(1);
      },
      this.config.shutdownGraceMs + exitMarginMs,
      { background: true },
    );
    void Promise.all(exits).then((codes) => {
      logger.info('stopped');
      // No worker ever listened: the workers have exited (their stores closed), the supervisor's store is closed.
      if (neverServed) {
        const removed = this.parts.newFiles.removeCreated();
        if (removed.length > 0) process.stderr.write(`coregate: the start failed, so the database it had created is removed (${removed.join(', ')})\n`);
      }
      process.exit(codes.some((code) => code !== 0) ? 1 : exitCode);
    });
  }
}
