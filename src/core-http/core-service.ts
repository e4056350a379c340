/**
 * `coregate core serve`: the reference core as its own HTTP service, with its own database and
 * data file. The one place that wires the core's store, the reference core and the protocol's
 * server together (as src/main.ts does for the API).
 */
import type { Tracer } from '@opentelemetry/api';
import type { FastifyInstance } from 'fastify';
import { createLogger, type LogOptions, type Logger } from '../log.js';
import type { ReferenceCore } from '../reference-core/reference-core.js';
import { readSandboxFile } from '../sandbox/data-file.js';
import { openStore, type Store } from '../store/connect.js';
import { tracedStore } from '../store/traced-store.js';
import type { Tracing } from '../tracing/start-tracing.js';
import { loadCoreSandboxData } from '../reference-core/storage/core-data-load.js';
import { migrateEmbeddedCore, referenceCoreOn } from '../reference-core/embedded-core.js';
import type { CoreServiceConfig } from './core-config.js';
import { buildCoreServer } from './core-server.js';
import { version } from '../version.js';
import type { Clock } from '../core/clock.js';
import { systemClock } from '../clock/system-clock.js';

export interface CoreService {
  readonly app: FastifyInstance;
  readonly store: Store;
  readonly core: ReferenceCore;
  readonly logger: Logger;
  /** Where the core listens, e.g. http://127.0.0.1:8081: the API's --core-url. */
  readonly url: string;
  close(): Promise<void>;
}

/**
 * Opens the core's store (the core's migrations, data file) and the reference core over it; its
 * transactions traced with `tracer`, its time `clock`'s.
 */
export async function openReferenceCore(
  config: Pick<CoreServiceConfig, 'db' | 'dataFile' | 'businessDate'>,
  logger: Logger,
  tracer?: Tracer,
  clock: Clock = systemClock,
): Promise<{ store: Store; core: ReferenceCore }> {
  const data = config.dataFile === undefined ? undefined : readSandboxFile(config.dataFile, '--data / COREGATE_CORE_DATA');
  const opened = await openStore(config.db);
  const store = tracer ? tracedStore(opened, tracer) : opened;
  try {
    await migrateEmbeddedCore(store, logger);
    if (data) {
      const summary = await loadCoreSandboxData(store, data, clock);
      logger.info({ file: config.dataFile, ...summary }, 'core data loaded');
    }
    return { store, core: await referenceCoreOn(store, config.businessDate, clock) };
  } catch (error) {
    await store.close();
    throw error;
  }
}

export interface CoreServiceOptions {
  log?: LogOptions;
  /** Traces of the core's requests and transactions (src/tracing); shut down, its last spans sent, when the service closes. */
  tracing?: Tracing | undefined;
  /** The core's time (src/core/clock.ts): the system's unless a test hands its own. */
  clock?: Clock;
}

export async function startCoreService(config: CoreServiceConfig, options: CoreServiceOptions = {}): Promise<CoreService> {
  const logger = createLogger({ level: config.logLevel, ...options.log }).child({ role: 'core' });
  const { tracing } = options;
  tracing?.reportProblemsTo(logger);
  const { store, core } = await openReferenceCore(config, logger, tracing?.tracer, options.clock);
  let app: FastifyInstance | undefined;
  try {
    app = await buildCoreServer({ core, logger, version: version, tracer: tracing?.tracer });
    await app.listen({ port: config.port, host: config.host });
  } catch (error) {
    await app?.close();
    await store.close();
    throw error;
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const url = `http://${config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host}:${port}`;
  logger.info({ url, db: store.displayUrl, businessDate: core.calendar.businessDate }, 'core listening');
  const server = app;
  let closed = false;
  return {
    app: server,
    store,
    core,
    logger,
    url,
    close: async () => {
      if (closed) return;
      closed = true;
      await server.close();
      await store.close();
      await tracing?.shutdown();
    },
  };
}
