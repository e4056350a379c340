/**
 * The one place that wires the store, the auth service and (later) the core and the business API
 * together, starts listening and stops gracefully.
 */
import type { FastifyInstance } from 'fastify';
import type { AuthContext } from './auth/auth-context.js';
import { Keyring, ensureSigningKey } from './auth/keyring.js';
import { loadSecretHashKey } from './auth/secret-hash-key.js';
import { Vault } from './auth/vault.js';
import type { Config } from './config.js';
import { createLogger, type LogOptions, type Logger } from './log.js';
import { readSandboxFile, type SandboxData } from './sandbox/data-file.js';
import { loadSandboxData } from './sandbox/load.js';
import { buildServer } from './server.js';
import { openStore, pingStore, type Store } from './store/connect.js';
import { migrateToLatest } from './store/migrate.js';
import { listRealms } from './store/realms.js';

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
  close(): Promise<void>;
}

export interface StartOptions {
  log?: LogOptions;
}

/** Opens and prepares the store: migrations, data file, a signing key for every realm. */
export async function prepareStore(config: Config, vault: Vault, logger: Logger): Promise<{ store: Store; data: SandboxData | undefined }> {
  const data = config.dataFile === undefined ? undefined : readSandboxFile(config.dataFile);
  const store = openStore(config.db);
  try {
    const applied = await migrateToLatest(store);
    if (applied.length > 0) logger.info({ migrations: applied, db: store.displayUrl }, 'migrations applied');
    if (data) {
      const summary = await loadSandboxData(store, vault, data);
      logger.info({ file: config.dataFile, ...summary }, 'sandbox data loaded');
    }
    for (const realm of await listRealms(store.db)) await ensureSigningKey(store.db, vault, realm);
    return { store, data };
  } catch (error) {
    await store.close();
    throw error;
  }
}

export async function startCoregate(config: Config, options: StartOptions = {}): Promise<Coregate> {
  const logger = createLogger({ level: config.logLevel, ...options.log });
  const vault = new Vault(config.masterKey);
  if (!vault.encrypting) logger.warn('COREGATE_MASTER_KEY is not set: signing keys are stored unencrypted');
  const { store, data } = await prepareStore(config, vault, logger);

  let publicUrl = config.publicUrl ?? '';
  let closing = false;
  const auth: AuthContext = {
    store,
    keyring: new Keyring(store, vault),
    secretHashKey: await loadSecretHashKey(store.db, vault),
    issuer: (realm) => `${publicUrl}/realms/${encodeURIComponent(realm)}`,
  };
  const app = await buildServer({
    logger,
    role: config.role,
    auth,
    readiness: {
      check: async () => {
        if (closing) throw new Error('shutting down');
        await pingStore(store);
      },
    },
  });

  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (error) {
    await store.close();
    throw error;
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const url = `http://${config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host}:${port}`;
  if (publicUrl === '') publicUrl = url;
  logger.info({ url, publicUrl, role: config.role, db: store.displayUrl }, 'coregate listening');

  return {
    app,
    store,
    logger,
    url,
    publicUrl,
    data,
    close: async () => {
      if (closing) return;
      closing = true;
      // fastify.close stops accepting connections and waits for in-flight requests.
      await app.close();
      await store.close();
    },
  };
}
