/**
 * The one place that wires the store, the auth service and (later) the core and the business API
 * together, starts listening and stops gracefully.
 */
import type { FastifyInstance } from 'fastify';
import { readFileSync } from 'node:fs';
import type { AuthContext } from './auth/auth-context.js';
import { Keyring, ensureSigningKey } from './auth/keyring.js';
import { loadSecretHashKey } from './auth/secret-hash-key.js';
import { Vault } from './auth/vault.js';
import type { Config } from './config.js';
import { createLogger, type LogOptions, type Logger } from './log.js';
import { readSandboxFile, type SandboxData } from './sandbox/data-file.js';
import { loadSandboxData } from './sandbox/load.js';
import { buildServer } from './server.js';
import { TokenVerifier } from './api/bearer-auth.js';
import { OperationRunner } from './api/operation-runner.js';
import { RateLimiter } from './api/rate-limit.js';
import { AuditChainer } from './audit/chain.js';
import type { CoreBankingPort } from './core/port.js';
import { ReferenceCore } from './core/reference-core.js';
import { readBusinessCalendar } from './sandbox/load-core.js';
import { openStore, pingStore, type Store } from './store/connect.js';
import { migrateToLatest } from './store/migrate.js';
import { listRealms } from './store/realms.js';
import { startMetricsServer, type MetricsServer } from './metrics/metrics-server.js';
import { Metrics } from './metrics/registry.js';
import { watchStore } from './metrics/store-sources.js';

export interface Coregate {
  readonly app: FastifyInstance;
  readonly store: Store;
  readonly logger: Logger;
  /** Where this instance listens, e.g. http://127.0.0.1:8080. */
  readonly url: string;
  /** The public base URL of the auth service (tokens' issuer prefix). */
  readonly publicUrl: string;
  /** The data file as loaded, when one was given. */
  readonly data: SandboxData | undefined;
  readonly runner: OperationRunner;
  readonly chainer: AuditChainer;
  /** This instance's metrics: the layers that report to them are wired through it. */
  readonly metrics: Metrics;
  /** Where GET /metrics answers: on the main port, or on --metrics-port. */
  readonly metricsUrl: string;
  close(): Promise<void>;
}

export interface StartOptions {
  log?: LogOptions;
  /** Wraps the core port: fault injection in tests, or a bank's adapter around the reference core. */
  wrapCore?: (core: CoreBankingPort) => CoreBankingPort;
}

const packageVersion = '0.1.0';

/** Opens and prepares the store: migrations, data file, a signing key for every realm. */
export async function prepareStore(
  config: Config,
  vault: Vault,
  logger: Logger,
): Promise<{ store: Store; data: SandboxData | undefined; secretHashKey: Buffer }> {
  const data = config.dataFile === undefined ? undefined : readSandboxFile(config.dataFile);
  const store = openStore(config.db);
  try {
    const applied = await migrateToLatest(store);
    if (applied.length > 0) logger.info({ migrations: applied, db: store.displayUrl }, 'migrations applied');
    // Opening the sealed hash key first proves the master key fits before anything new is sealed.
    const secretHashKey = await loadSecretHashKey(store.db, vault);
    if (data) {
      const summary = await loadSandboxData(store, vault, data);
      logger.info({ file: config.dataFile, ...summary }, 'sandbox data loaded');
    }
    for (const realm of await listRealms(store.db)) await ensureSigningKey(store.db, vault, realm);
    return { store, data, secretHashKey };
  } catch (error) {
    await store.close();
    throw error;
  }
}

export async function startCoregate(config: Config, options: StartOptions = {}): Promise<Coregate> {
  const logger = createLogger({ level: config.logLevel, ...options.log });
  const vault = new Vault(config.masterKey);
  if (!vault.encrypting) logger.warn('COREGATE_MASTER_KEY is not set: signing keys are stored unencrypted');
  const { store, data, secretHashKey } = await prepareStore(config, vault, logger);
  try {
    return await serveOn(config, options, logger, vault, store, data, secretHashKey);
  } catch (error) {
    await store.close();
    throw error;
  }
}

async function serveOn(
  config: Config,
  options: StartOptions,
  logger: Logger,
  vault: Vault,
  store: Store,
  data: SandboxData | undefined,
  secretHashKey: Buffer,
): Promise<Coregate> {

  let publicUrl = config.publicUrl ?? '';
  let closing = false;
  const auth: AuthContext = {
    store,
    keyring: new Keyring(store, vault),
    secretHashKey,
    issuer: (realm) => `${publicUrl}/realms/${encodeURIComponent(realm)}`,
  };
  const calendar = await readBusinessCalendar(store.db, config.businessDate);
  const referenceCore = new ReferenceCore(store, calendar);
  const core = options.wrapCore ? options.wrapCore(referenceCore) : referenceCore;
  const chainer = new AuditChainer(store, (error) => logger.error({ err: error }, 'audit chain extension failed'));
  const runner = new OperationRunner({
    store,
    logger,
    chainer,
    coreTimeoutMs: config.coreTimeoutMs,
    duplicateWindowSeconds: config.duplicateWindowSeconds,
    batchWindow: config.coreBatchWindow,
  });
  const verifier = new TokenVerifier({
    store,
    keyring: auth.keyring,
    publicUrl: () => publicUrl,
    trustedIssuers: config.trustedIssuers,
    audience: config.audience,
  });
  const metrics = new Metrics({ onSourceError: (source, error) => logger.error({ err: error, source }, 'metrics source failed') });
  watchStore(metrics, store);
  const app = await buildServer({
    metrics: { metrics, serveOnMainPort: config.metricsPort === undefined },
    logger,
    role: config.role,
    auth,
    api: { store, core, verifier, runner, chainer, limiter: new RateLimiter(config.rateLimitPerSecond) },
    version: packageVersion,
    isClosing: () => closing,
    tls: config.tls && { cert: readFileSync(config.tls.certFile), key: readFileSync(config.tls.keyFile) },
    readiness: {
      check: async () => {
        if (closing) throw new Error('shutting down');
        await pingStore(store);
      },
    },
  });

  let metricsServer: MetricsServer | undefined;
  try {
    await app.listen({ port: config.port, host: config.host });
    if (config.metricsPort !== undefined) {
      metricsServer = await startMetricsServer(metrics, {
        host: config.host,
        port: config.metricsPort,
        onError: (error) => logger.error({ err: error }, 'metrics scrape failed'),
      });
    }
  } catch (error) {
    await app.close();
    throw error;
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const scheme = config.tls ? 'https' : 'http';
  const url = `${scheme}://${config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host}:${port}`;
  if (publicUrl === '') publicUrl = url;
  if (config.role !== 'auth') runner.start();
  chainer.schedule();
  logger.info({ url, publicUrl, role: config.role, db: store.displayUrl }, 'coregate listening');
  const metricsUrl = metricsServer?.url ?? `${url}/metrics`;
  if (metricsServer) logger.info({ metricsUrl }, 'metrics served on their own port');

  return {
    app,
    store,
    logger,
    url,
    publicUrl,
    data,
    runner,
    chainer,
    metrics,
    metricsUrl,
    close: async () => {
      if (closing) return;
      closing = true;
      // fastify.close stops accepting connections and waits for in-flight requests.
      await app.close();
      await metricsServer?.close();
      await runner.stop();
      await chainer.idle();
      await store.close();
    },
  };
}
