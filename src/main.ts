/**
 * The one place that wires the store, the auth service and (later) the core and the business API
 * together, starts listening and stops gracefully.
 */
import type { Tracer } from '@opentelemetry/api';
import type { FastifyInstance } from 'fastify';
import { readFileSync } from 'node:fs';
import type { AuthContext } from './auth/auth-context.js';
import { AuthFailureLimiter } from './auth/failure-limit.js';
import { AuthSnapshot } from './auth/auth-snapshot.js';
import { Keyring, ensureSigningKey } from './auth/keyring.js';
import { freshSigningKeys, type SigningKeySource } from './auth/signing-key-source.js';
import { loadSecretHashKey } from './auth/secret-hash-key.js';
import { Vault } from './auth/vault.js';
import { StoreReplayRecord } from './auth/replay-record.js';
import { DpopNonces } from './auth/dpop-nonce.js';
import { DpopProofVerifier } from './auth/dpop-proof.js';
import { ClientAssertionVerifier } from './auth/client-assertion.js';
import { caCertificatesOf, ClientCertificates } from './auth/client-certificates.js';
import type { Config } from './config.js';
import { systemClock } from './clock/system-clock.js';
import type { Clock } from './core/clock.js';
import { createLogger, type LogOptions, type Logger } from './log.js';
import { readSandboxFile, type SandboxData } from './sandbox/data-file.js';
import { loadSandboxData, type LoadedParts } from './sandbox/load.js';
import { coreElsewhereRemedy, corePart, inProcessCore, recordedRemoteCore, recordRemoteCore } from './sandbox/core-placement.js';
import { driftRemedy, findDrift } from './sandbox/drift.js';
import { buildServer, type ServerParts } from './server.js';
import { TokenVerifier } from './api/bearer-auth.js';
import { SenderConstraint } from './api/sender-constraint.js';
import { RateLimiter } from './api/rate-limit.js';
import { AuditChainer } from './audit/chain.js';
import { RefusalAudit } from './audit/refusal-audit.js';
import { AuditSpool, type AuditSpoolBounds } from './audit/audit-spool.js';
import { AuditSpoolDrain } from './audit/audit-spool-drain.js';
import { spoolDatabaseId } from './audit/spool-database-id.js';
import { insertAuditEntriesOnce } from './store/audit.js';
import { CoreDataRefused, CoreSideNotServed, CoreTimeout, CoreUnavailable, hasDataLoad, isTransactional, type CoreBankingPort } from './core/port.js';
import type { HttpCore } from './core-http/http-core-adapter.js';
import { auditSpoolReadiness, probe } from './health.js';
import { Claims } from './operations/correlation.js';
import { DuplicateWindow } from './operations/duplicate-window.js';
import { OperationSettlement } from './operations/operation-settlement.js';
import { Execution } from './operations/execution.js';
import { OperationAudit } from './operations/operation-audit.js';
import { OperationRunner } from './operations/operation-runner.js';
import { PendingWorker } from './operations/pending-worker.js';
import { Reconciler } from './operations/reconciler.js';
import { businessOperations } from './operations/registry.js';
import { openStore, redactUrl, type Store } from './store/connect.js';
import { tracedStore } from './store/traced-store.js';
import type { Tracing } from './tracing/start-tracing.js';
import { migrateToLatest } from './store/migrate.js';
import { tableExists } from './store/table-exists.js';
import { migrateEmbeddedCore, referenceCoreOn } from './reference-core/embedded-core.js';
import { coreTablesOf } from './reference-core/storage/core-db.js';
import { listRealms } from './store/realms.js';
import { openLimits, type Limits } from './limits/limits.js';
import { startMetricsServer, type MetricsServer } from './metrics/metrics-server.js';
import { Metrics, type OperationOutcome } from './metrics/registry.js';
import type { CoreCallObserver } from './operations/core-call.js';
import { watchStore } from './metrics/store-sources.js';
import { version } from './version.js';
import type { FastifyPluginAsync } from 'fastify';
import { activityRoutes } from './operator/routes/activity.js';
import { bankRoutes } from './operator/routes/bank.js';
import { businessDateRoutes } from './operator/routes/business-date.js';
import { webhookRoutes } from './operator/routes/webhooks.js';
import { sandboxRoutes } from './operator/routes/sandbox.js';
import { clientRoutes } from './operator/routes/clients.js';
import { scenarioCore } from './sandbox/scenario-core.js';
import { RequestLog } from './sandbox/request-log.js';
import { warnOfDemoSecrets } from './sandbox/demo-secrets.js';
import { requestLogRoutes } from './operator/routes/request-log.js';
import type { Scenario } from './operations/scenario.js';
import { WebhookService } from './webhooks/webhook-service.js';
import { protocolViolationReporter } from './core-http/protocol-violation-reporter.js';

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
  /** Whether the operator API and the console are served (sandbox mode or --operator-api). */
  readonly operatorApi: boolean;
  readonly runner: OperationRunner;
  readonly reconciler: Reconciler;
  readonly worker: PendingWorker;
  readonly core: CoreBankingPort;
  /** The remote core's adapter with --core-url (its circuitState feeds the metrics); undefined when embedded. */
  readonly remoteCore: HttpCore | undefined;
  readonly chainer: AuditChainer;
  /** The limit store: in memory, or shared through Redis (and whether Redis is down). */
  readonly limits: Limits;
  /** This instance's metrics: the layers that report to them are wired through it. */
  readonly metrics: Metrics;
  /** Where GET /metrics answers: on the main port, or on --metrics-port. */
  readonly metricsUrl: string;
  /** Signed events: relay, fan-out and delivery in the background (docs/webhooks.md). */
  readonly webhooks: WebhookService;
  /** The clock every part of this instance reads (StartOptions.clock, or the system's). */
  readonly clock: Clock;
  /**
   * The background loops, each of which a test can run one step at a time (`runOnce()`, and
   * `drain()` where "until nothing is due" means something) instead of waiting for its timer.
   */
  readonly background: Background;
  close(): Promise<void>;
}

/** The loops an instance runs in the background, reachable so that tests can drive them. */
export interface Background {
  /** Its idle(): units of work that outlived their time-out (504) have committed or are recorded unknown. */
  readonly execution: Execution;
  readonly reconciler: Reconciler;
  readonly pendingWorker: PendingWorker;
  /** Relay of the core's events, fan-out and delivery of signed events. */
  readonly webhooks: WebhookService;
  readonly auditChainer: AuditChainer;
  /** Refused requests' audit records: idle() waits for the writes under way (to the database or the spool). */
  readonly refusalAudit: RefusalAudit;
  /** The audit spool's drain (src/audit/audit-spool-drain.ts); undefined on an auth-only instance. */
  readonly auditSpool: AuditSpoolDrain | undefined;
}

export interface StartOptions {
  log?: LogOptions;
  /**
   * The time and timers of every part of the instance (src/core/clock.ts): the system's unless a
   * test hands in a fake one and drives the background loops itself (Coregate.background).
   */
  clock?: Clock;
  /** The store is migrated and the data file loaded already (a worker of `serve --workers`). */
  storePrepared?: boolean;
  /**
   * Where a new realm's first signing key comes from (src/auth/signing-key-source.ts): fresh key
   * pairs unless a test hands in a few made once (an RSA key pair costs ~0.25 s of CPU).
   */
  signingKeys?: SigningKeySource;
  /**
   * A core in this process: a TypeScript implementation of the port (docs/core-port.md, "An
   * in-process core"). coregate runs on it instead of the reference core, which is then neither
   * migrated nor built: as with `--core-url`, the API's database records that its core is
   * elsewhere and holds none of the core's records (src/sandbox/core-placement.ts), and the data
   * file's core part goes to the core's load side (`CoreDataLoad`), or stops the start when it has
   * none. Not with `--core-url`.
   */
  core?: CoreBankingPort;
  /** Wraps the core port (the reference core, a remote core's adapter, or `core`): fault injection in tests, or a bank's decorator. */
  wrapCore?: (core: CoreBankingPort) => CoreBankingPort;
  /**
   * Traces (src/tracing): a span per request, store transaction and remote core call. Shut down,
   * its last spans sent, when the instance closes. Absent: nothing is traced.
   */
  tracing?: Tracing | undefined;
  /** The audit spool's bounds (src/audit/audit-spool.ts), smaller in a test that fills it. */
  auditSpoolBounds?: Partial<AuditSpoolBounds>;
}

/** How long one webhook POST may take before it counts as failed (and is retried). */
const webhookRequestTimeoutMs = 10_000;
/** How often each instance relays, fans out and sends signed events. */
const webhookIntervalMs = 500;

/** Opens and prepares the store: migrations, data file, a signing key for every realm. */
export async function prepareStore(
  config: Config,
  vault: Vault,
  logger: Logger,
  prepared = false,
  clock: Clock = systemClock,
  keys: SigningKeySource = freshSigningKeys,
  /** Where the core's records are when not here: the remote core's URL, or `inProcessCore`; undefined: the embedded core's, here. */
  coreElsewhere: string | undefined = config.coreUrl === undefined ? undefined : redactUrl(config.coreUrl),
): Promise<{ store: Store; data: SandboxData | undefined; secretHashKey: Buffer }> {
  const data = config.dataFile === undefined ? undefined : readSandboxFile(config.dataFile);
  const store = await openStore(config.db);
  try {
    if (prepared) return { store, data, secretHashKey: await loadSecretHashKey(store.db, vault) };
    const applied = await migrateToLatest(store);
    if (applied.length > 0) logger.info({ migrations: applied, db: store.displayUrl }, 'migrations applied');
    // Opening the sealed hash key first proves the master key fits before anything new is sealed.
    const secretHashKey = await loadSecretHashKey(store.db, vault);
    const parts = await placeCoreRecords(config, store, logger, coreElsewhere);
    // The embedded core's tables are the core's own migrations' (issue 25); a remote core's API never has them.
    if (parts === 'all') await migrateEmbeddedCore(store, logger);
    if (data) {
      const summary = await loadSandboxData(store, vault, data, { webhookTargets: { allowPrivate: config.webhookAllowPrivate }, parts, keys, clock });
      logger.info({ file: config.dataFile, ...summary }, 'sandbox data loaded');
      // Records are never overwritten: say what the file changes that was not applied, one line per kind.
      for (const drift of await findDrift(store.db, data, secretHashKey, parts)) {
        logger.warn(
          { file: config.dataFile, kind: drift.kind, records: drift.records },
          `data file: ${drift.records.length} ${drift.kind} differ from the store and were not applied (records are never overwritten): ${drift.records.join('; ')}. Apply with ${driftRemedy[drift.kind] ?? '`coregate sandbox reset`'}`,
        );
      }
    }
    for (const realm of await listRealms(store.db)) await ensureSigningKey(store.db, vault, realm, clock.now(), keys);
    // Sample secrets are for a sandbox: outside one, the clients that still have them are named
    // (docs/deployment.md, "The database and the master key").
    if (!config.sandbox) await warnOfDemoSecrets(store.db, secretHashKey, data, logger);
    return { store, data, secretHashKey };
  } catch (error) {
    await store.close();
    throw error;
  }
}

/**
 * Where the core's records go (src/sandbox/core-placement.ts). With `--core-url` (or an in-process
 * core) this database records where the core is and takes the data file's API part only: the
 * core's part goes to the core (loadCoreData below). A database that served a remote core never
 * again runs an embedded core on its stale tables: it is refused, naming the URL (an auth-only
 * instance needs no core).
 */
async function placeCoreRecords(config: Config, store: Store, logger: Logger, coreElsewhere: string | undefined): Promise<LoadedParts> {
  if (coreElsewhere !== undefined) {
    await recordRemoteCore(store.db, coreElsewhere);
    // Records an embedded core (or an older coregate) left here are nobody's now: nothing reads
    // them, and no command answers from them (they are refused, naming --core-url). Said once at start.
    // A new API database has no core tables at all (the core's migrations never ran on it).
    const left = (await tableExists(store, 'accounts')) ? await coreTablesOf(store.db).selectFrom('accounts').select((eb) => eb.fn.countAll<string | number>().as('count')).executeTakeFirst() : undefined;
    if (Number(left?.count ?? 0) > 0) {
      logger.warn(
        { accounts: Number(left?.count), db: store.displayUrl },
        'this database holds accounts of an embedded core: with --core-url (or an in-process core) the core\'s records are that core\'s, and nothing reads these (move them to the core, or start on a new database)',
      );
    }
    return 'api';
  }
  const recorded = await recordedRemoteCore(store.db);
  if (recorded === undefined) return 'all';
  if (config.role === 'auth') return 'api';
  throw new Error(`the database ${store.displayUrl} belongs to an API ${coreElsewhereRemedy(recorded)}, or use a new database for an embedded core`);
}

/**
 * The data file's core part goes to a remote or in-process core through the port's load side: the
 * API's database keeps no copy. A core that does not take data, or refuses it, stops the start
 * with what to do.
 */
async function loadCoreData(config: Config, coreElsewhere: string | undefined, core: CoreBankingPort, data: SandboxData | undefined, logger: Logger): Promise<void> {
  const part = data === undefined ? undefined : corePart(data);
  if (coreElsewhere === undefined || part === undefined || config.role === 'auth') return;
  const inProcess = coreElsewhere === inProcessCore;
  const where = `the data file ${config.dataFile ?? ''}: its core part (${Object.keys(part).join(', ')}) belongs to ${inProcess ? 'the in-process core (StartOptions.core)' : `the core at ${coreElsewhere}`}`;
  const loadItThere = inProcess ? 'load it into that core yourself' : 'load it there (coregate core serve --data FILE)';
  if (!hasDataLoad(core)) throw new Error(`${where}, which takes no data (it does not implement CoreDataLoad): ${loadItThere} and leave those sections out of this file`);
  try {
    const summary = await core.loadData(part);
    logger.info({ file: config.dataFile, core: coreElsewhere, ...summary }, 'data file\'s core part loaded into the core');
  } catch (error) {
    if (error instanceof CoreSideNotServed) throw new Error(`${where}, which takes no data (${error.message}): ${loadItThere} and leave those sections out of this file`);
    if (error instanceof CoreDataRefused) throw new Error(`${where}, which refused it at ${error.field}: ${error.message}`);
    if (error instanceof CoreUnavailable || error instanceof CoreTimeout) throw new Error(`${where}, which did not take it: ${error.message}. Start the core first`);
    throw error;
  }
}

export async function startCoregate(config: Config, options: StartOptions = {}): Promise<Coregate> {
  const clock = options.clock ?? systemClock;
  const logger = createLogger({ level: config.logLevel, clock, ...options.log });
  const vault = new Vault(config.masterKey);
  if (!vault.encrypting) logger.warn('COREGATE_MASTER_KEY is not set: signing keys are stored unencrypted');
  options.tracing?.reportProblemsTo(logger);
  if (options.core !== undefined && config.coreUrl !== undefined) throw new Error('StartOptions.core and --core-url (COREGATE_CORE_URL) both name the core: give one');
  // A core that joins the API's units of work writes in the API's database, which an in-process
  // core's database records as holding none of the core's records: that is the embedded core's way.
  if (options.core !== undefined && isTransactional(options.core)) throw new Error('StartOptions.core must keep its own storage: a TransactionalCore (with within()) writes in the API\'s database; start without StartOptions.core for the embedded reference core');
  const coreElsewhere = options.core === undefined ? undefined : inProcessCore;
  const prepared = await prepareStore(config, vault, logger, options.storePrepared, clock, options.signingKeys, coreElsewhere);
  // Wrapped once, here: every part of the instance then shares the one traced store.
  const store = options.tracing ? tracedStore(prepared.store, options.tracing.tracer) : prepared.store;
  const { data, secretHashKey } = prepared;
  const limits = await openLimits({ redisUrl: config.redisUrl, keyPrefix: config.redisKeyPrefix, commandTimeoutMs: config.redisCommandTimeoutMs, logger, clock });
  let spool: AuditSpool | undefined;
  try {
    // The business API's refusals are audited through it during an outage; an auth-only instance has none.
    spool = config.role === 'auth' ? undefined : await openAuditSpool(config, store, options);
    return await serveOn({ config, options, clock, logger, vault, store, data, secretHashKey, limits, spool });
  } catch (error) {
    await spool?.close();
    await limits.close();
    await store.close();
    throw error;
  }
}

/** What an instance is built on: its configuration, its clock and log, the prepared store and the shared limits. */
interface Foundation {
  config: Config;
  options: StartOptions;
  clock: Clock;
  logger: Logger;
  vault: Vault;
  store: Store;
  data: SandboxData | undefined;
  secretHashKey: Buffer;
  limits: Limits;
  spool: AuditSpool | undefined;
}

/** What changes once the instance runs: its public URL (known once it listens) and whether it is closing. */
interface InstanceState {
  publicUrl: string;
  closing: boolean;
}

/** The core as the instance uses it, and what it needs to know of where it is. */
interface InstanceCore {
  /** The port, wrapped (StartOptions.wrapCore) when asked. */
  core: CoreBankingPort;
  remoteCore: HttpCore | undefined;
  /** The remote core's URL, `inProcessCore`, or undefined for the embedded reference core. */
  coreElsewhere: string | undefined;
}

/**
 * The instance on its prepared store, in named steps: authentication, metrics, the core, the
 * application layer and background loops, the HTTP server; then it listens and starts its loops.
 */
async function serveOn(base: Foundation): Promise<Coregate> {
  const state: InstanceState = { publicUrl: base.config.publicUrl ?? '', closing: false };
  const auth = authContext(base, state);
  const metrics = instanceMetrics(base);
  const core = await instanceCore(base, metrics);
  const layers = applicationLayers(base, state, auth, core.core, metrics);
  const app = await buildServer(serverParts(base, state, auth, core, layers, metrics));
  const metricsServer = await listen(app, base, metrics, core.remoteCore);
  return running(base, state, app, metricsServer, core, layers, metrics);
}

/** Authentication: keys, the auth snapshot, the failed-authentication limit, replay record, DPoP and certificates. */
function authContext({ config, clock, logger, vault, store, secretHashKey, limits }: Foundation, state: InstanceState): AuthContext {
  return {
    store,
    clock,
    keyring: new Keyring(store, vault, clock),
    snapshot: new AuthSnapshot(store.db, clock),
    secretHashKey,
    authFailures: new AuthFailureLimiter(limits.store, { failuresMax: config.authFailureLimit, windowSeconds: config.authFailureWindowSeconds, shared: config.redisUrl !== undefined }),
    issuer: (realm) => `${state.publicUrl}/realms/${encodeURIComponent(realm)}`,
    replay: new StoreReplayRecord(store, clock, {
      onPruneError: (error) => logger.warn({ err: error }, 'deleting expired replay records failed; the next use tries again'),
      // SQLite writes the uses without a sync where a new boot of the machine can be told (replay-record.ts).
      startedAtEpochMs: clock.now(),
      bootId: machineBootId(),
    }),
    dpopNonces: new DpopNonces(secretHashKey, clock),
    dpopProofs: new DpopProofVerifier(clock),
    clientAssertions: new ClientAssertionVerifier(clock),
    clientCertificates: config.clientCertificates && new ClientCertificates({
      caCertificates: caCertificatesOf(readFileSync(config.clientCertificates.caFile, 'utf8')),
      header: config.clientCertificates.header,
      trustedProxies: config.clientCertificates.trustedProxies,
      now: () => clock.now(),
    }),
  };
}

/** The instance's metrics, with the store's and the limits store's scrape-time sources. */
function instanceMetrics({ logger, store, limits }: Foundation): Metrics {
  const metrics = new Metrics({ onSourceError: (source, error) => logger.error({ err: error, source }, 'metrics source failed') });
  watchStore(metrics, store);
  metrics.setLimitsDegradedSource(() => limits.degraded());
  return metrics;
}

/** The core: the in-process one handed in, a remote core's adapter, or the embedded reference core; the data file's core part loaded into it. */
async function instanceCore({ config, options, clock, logger, store, data }: Foundation, metrics: Metrics): Promise<InstanceCore> {
  // An in-process core is the embedding program's: the reference core is not built beside it.
  const { core: portCore, remoteCore } = options.core === undefined ? await coreOf(config, store, clock, logger, metrics, options.tracing?.tracer) : { core: options.core, remoteCore: undefined };
  const coreElsewhere = options.core !== undefined ? inProcessCore : config.coreUrl === undefined ? undefined : redactUrl(config.coreUrl);
  try {
    // Each worker of a --workers instance sends it too: the load side adds only what is missing.
    await loadCoreData(config, coreElsewhere, portCore, data, logger);
  } catch (error) {
    await remoteCore?.close();
    throw error;
  }
  return { core: options.wrapCore ? options.wrapCore(portCore) : portCore, remoteCore, coreElsewhere };
}

/** The application layer and the loops around it: operations, audit chain and spool drain, webhooks, the sandbox's request log. */
function applicationLayers({ config, clock, logger, vault, store, spool, secretHashKey }: Foundation, state: InstanceState, auth: AuthContext, core: CoreBankingPort, metrics: Metrics) {
  const chainer = new AuditChainer(store, (error) => logger.error({ err: error }, 'audit chain extension failed'), clock);
  const operations = operationsLayer(config, store, clock, core, chainer, logger, metrics, spool);
  const spoolDrain = spool && new AuditSpoolDrain({ spool, append: (entries) => insertAuditEntriesOnce(store.db, entries), chainer, clock, logger, onLost: (reason) => metrics.auditRecordLost(reason) });
  if (spool) metrics.setAuditSpoolSource(() => spool.stats(clock.now()));
  const webhooks = new WebhookService({
    store,
    clock,
    vault,
    core,
    logger,
    schedule: { firstRetryMs: config.webhookFirstRetryMs, retryPeriodMs: config.webhookRetrySeconds * 1000 },
    requestTimeoutMs: webhookRequestTimeoutMs,
    intervalMs: webhookIntervalMs,
    targets: { allowPrivate: config.webhookAllowPrivate },
  });
  // Sandbox mode only (docs/sandbox.md): what a client sent and was answered, for its own debugging.
  // A client's own secret sent in any header is recognised by its stored hash, read from the auth snapshot when a batch is written.
  const clientSecrets = { hashKey: secretHashKey, publicUrl: () => state.publicUrl, client: (realm: string, clientId: string) => auth.snapshot.client(realm, clientId) };
  const requestLog = config.sandbox ? new RequestLog({ store, clock, logger, clientCertificateHeader: config.clientCertificates?.header, clientSecrets }) : undefined;
  return { ...operations, chainer, spoolDrain, webhooks, requestLog };
}

type ApplicationLayers = ReturnType<typeof applicationLayers>;

/** The HTTP server's parts: the token verifier, the sender constraint, the request log, the operator's routes, readiness. */
function serverParts(base: Foundation, state: InstanceState, auth: AuthContext, { core, coreElsewhere }: InstanceCore, layers: ApplicationLayers, metrics: Metrics): ServerParts {
  const { config, options, clock, logger, store, data, limits, spool } = base;
  const { requestLog } = layers;
  const publicUrl = () => state.publicUrl;
  const verifier = new TokenVerifier({ keyring: auth.keyring, clock, snapshot: auth.snapshot, publicUrl, trustedIssuers: config.trustedIssuers, audience: config.audience });
  const constraint = new SenderConstraint({ publicUrl, replay: auth.replay, proofs: auth.dpopProofs, realms: auth.snapshot, nonces: auth.dpopNonces, clientCertificates: auth.clientCertificates });
  return {
    metrics: { metrics, serveOnMainPort: config.metricsPort === undefined },
    logger,
    clock,
    role: config.role,
    auth,
    api: { store, clock, core, verifier, constraint, runner: layers.runner, refusals: layers.audit.refusals, limiter: new RateLimiter(config.rateLimitPerSecond, limits.store), sandbox: config.sandbox, requestLog },
    version: version,
    publicUrl: config.publicUrl,
    isClosing: () => state.closing,
    tls: config.tls && { cert: readFileSync(config.tls.certFile), key: readFileSync(config.tls.keyFile), ca: config.clientCertificates && readFileSync(config.clientCertificates.caFile) },
    connectionLimits: config.connectionLimits,
    operator: config.operatorApi
      ? operatorParts(config, store, core, verifier, constraint, publicUrl, clock, [
          activityRoutes({ store, clock }),
          clientRoutes({ store, clock, snapshot: auth.snapshot }),
          webhookRoutes({ store, clock, vault: base.vault, targets: { allowPrivate: config.webhookAllowPrivate }, kick: () => void layers.webhooks.kick() }),
          sandboxRoutes({ store, vault: base.vault, sandbox: config.sandbox, dataFile: config.dataFile, webhookTargets: { allowPrivate: config.webhookAllowPrivate }, core, clock, ...(options.signingKeys === undefined ? {} : { signingKeys: options.signingKeys }) }),
          ...(requestLog ? [requestLogRoutes({ requestLog })] : []),
        ])
      : undefined,
    docsRealm: data?.realms?.[0]?.name,
    tracer: options.tracing?.tracer,
    readiness: {
      check: async () => {
        if (state.closing) throw new Error('shutting down');
        // First: with a full spool an answered refusal leaves no audit record, whatever else answers.
        auditSpoolReadiness(spool);
        return {
          store: await probe('store', () => store.ping(), { database: store.dialect === 'sqlite' ? 'SQLite' : 'PostgreSQL' }, undefined, clock),
          core: await probe('core', () => core.ping(), { core: coreElsewhere === undefined ? 'embedded reference core' : coreElsewhere === inProcessCore ? inProcessCore : 'remote core' }, undefined, clock),
        };
      },
    },
  };
}

/** Listens on the main port, and on --metrics-port when set; closes what was opened when either fails. */
async function listen(app: FastifyInstance, { config, logger, clock }: Foundation, metrics: Metrics, remoteCore: HttpCore | undefined): Promise<MetricsServer | undefined> {
  try {
    await app.listen({ port: config.port, host: config.host });
    if (config.metricsPort === undefined) return undefined;
    return await startMetricsServer(metrics, {
      host: config.host,
      port: config.metricsPort,
      limits: config.connectionLimits,
      clock,
      onError: (error) => logger.error({ err: error }, 'metrics scrape failed'),
    });
  } catch (error) {
    await app.close();
    await remoteCore?.close();
    throw error;
  }
}

/** The listening instance: its URLs known, its background loops started, and how it closes. */
function running(base: Foundation, state: InstanceState, app: FastifyInstance, metricsServer: MetricsServer | undefined, { core, remoteCore, coreElsewhere }: InstanceCore, layers: ApplicationLayers, metrics: Metrics): Coregate {
  const { config, clock, logger, store, data, limits } = base;
  const { runner, execution, reconciler, worker, audit, chainer, spoolDrain, webhooks, requestLog } = layers;
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const scheme = config.tls ? 'https' : 'http';
  const url = `${scheme}://${config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host}:${port}`;
  if (state.publicUrl === '') state.publicUrl = url;
  if (config.role !== 'auth') {
    worker.start();
    reconciler.start();
    webhooks.start();
    requestLog?.start();
    spoolDrain?.start();
    if (config.webhookAllowPrivate) logger.warn('webhooks may be sent to loopback and private addresses (--webhook-allow-private): for a sandbox whose receivers run on this machine or network only');
  }
  chainer.schedule();
  logger.info({ url, publicUrl: state.publicUrl, role: config.role, db: store.displayUrl, core: coreElsewhere ?? 'embedded' }, 'coregate listening');
  const metricsUrl = metricsServer?.url ?? `${url}/metrics`;
  if (metricsServer) logger.info({ metricsUrl }, 'metrics served on their own port');
  return {
    app,
    store,
    logger,
    url,
    publicUrl: state.publicUrl,
    data,
    operatorApi: config.operatorApi,
    runner,
    reconciler,
    worker,
    core,
    remoteCore,
    chainer,
    limits,
    metrics,
    metricsUrl,
    webhooks,
    clock,
    background: { execution, reconciler, pendingWorker: worker, webhooks, auditChainer: chainer, refusalAudit: audit.refusals, auditSpool: spoolDrain },
    close: closer(base, state, app, metricsServer, remoteCore, layers),
  };
}

/** How the instance closes: stop taking requests, stop the loops, write what is owed, close the stores. */
function closer({ options, limits, store, spool }: Foundation, state: InstanceState, app: FastifyInstance, metricsServer: MetricsServer | undefined, remoteCore: HttpCore | undefined, layers: ApplicationLayers): () => Promise<void> {
  const { worker, reconciler, webhooks, requestLog, spoolDrain, audit, chainer } = layers;
  return async () => {
    if (state.closing) return;
    state.closing = true;
    // fastify.close stops accepting connections and waits for in-flight requests.
    await app.close();
    await metricsServer?.close();
    await worker.stop();
    await reconciler.stop();
    await webhooks.stop();
    await requestLog?.stop();
    await remoteCore?.close();
    await spoolDrain?.stop();
    // Refusals' records answered without waiting (a 503's) are written or kept before the spool closes.
    await audit.refusals.idle();
    await chainer.idle();
    await spool?.close();
    await limits.close();
    await store.close();
    await options.tracing?.shutdown();
  };
}

/**
 * The operator API's route modules (issue 11), all behind its authentication hook. Each branch
 * adds its module to this list: business date (A), webhooks (B), sandbox reset (D).
 */
function operatorRoutes(config: Config, store: Store, core: CoreBankingPort, instanceRoutes: FastifyPluginAsync[]): FastifyPluginAsync[] {
  return [
    bankRoutes({ core }),
    businessDateRoutes({ core }),
    // Routes that need this instance's own services (its clock, the vault, the webhook service).
    ...instanceRoutes,
  ];
}

function operatorParts(config: Config, store: Store, core: CoreBankingPort, verifier: TokenVerifier, constraint: SenderConstraint, publicUrl: () => string, clock: Clock, instanceRoutes: FastifyPluginAsync[]) {
  return {
    api: { store, verifier, constraint, sandbox: config.sandbox, publicUrl, clock, routes: operatorRoutes(config, store, core, instanceRoutes) },
    console: { store, publicUrl, clock },
  };
}

/** The embedded reference core over the API's own store, or the HTTP adapter of a remote core (--core-url). */
async function coreOf(config: Config, store: Store, clock: Clock, logger: Logger, metrics: Metrics, tracer: Tracer | undefined): Promise<{ core: CoreBankingPort; remoteCore: HttpCore | undefined }> {
  if (config.coreUrl !== undefined) {
    // Loaded with a remote core only: the embedded core's instances start without the HTTP client.
    const { HttpCore } = await import('./core-http/http-core-adapter.js');
    const remoteCore = new HttpCore({
      url: config.coreUrl,
      timeoutMs: config.coreTimeoutMs,
      clock,
      tracer,
      onCircuitStateChange: (state) => {
        metrics.setCircuitState('core', state === 'half-open' ? 'half_open' : state);
        if (state === 'closed') logger.info({ circuit: state }, 'core circuit breaker closed');
        else logger.warn({ circuit: state }, `core circuit breaker ${state}`);
      },
      onProtocolViolation: protocolViolationReporter(logger, metrics, clock),
    });
    return { core: remoteCore, remoteCore };
  }
  return { core: await referenceCoreOn(store, config.businessDate, clock), remoteCore: undefined };
}

/** The application layer: claims, execution, the pending worker, the reconciler and the runner. */
function operationsLayer(config: Config, store: Store, clock: Clock, core: CoreBankingPort, chainer: AuditChainer, logger: Logger, metrics: Metrics, spool: AuditSpool | undefined) {
  const window = new DuplicateWindow(config.duplicateWindowSeconds, clock);
  const claims = new Claims(window);
  const refusals = new RefusalAudit(store, chainer, { spool, onLost: (reason) => metrics.auditRecordLost(reason) });
  const audit = new OperationAudit(chainer, refusals, clock);
  const observeCoreCall: CoreCallObserver = (call, result, seconds) => metrics.observeCoreCall(call, result === 'error' ? 'protocol_error' : result, seconds);
  const settled = (operation: string, outcome: string) => metrics.operationSettled(operation, outcome as OperationOutcome);
  // One settlement for every final transition, whoever makes it (execution, worker, reconciler).
  const settlement = new OperationSettlement({ store, claims, audit, backoffMaxMs: config.reconcileBackoffMaxMs, onSettled: settled });
  // Sandbox scenarios (docs/sandbox.md, "Scenarios") are made by a decorator of the port that only
  // a sandbox has.
  const scenarios = config.sandbox ? { scenarioCore: (inner: CoreBankingPort, scenario: Scenario) => scenarioCore(inner, scenario, clock) } : {};
  const execution = new Execution({ store, clock, core, claims, settlement, logger, coreTimeoutMs: config.coreTimeoutMs, observeCoreCall, ...scenarios });
  const reconciler = new Reconciler({
    store,
    clock,
    core,
    claims,
    execution,
    settlement,
    logger,
    operations: businessOperations,
    coreTimeoutMs: config.coreTimeoutMs,
    intervalMs: config.reconcileIntervalMs,
    // An instance that claimed an operation answers within the core's time-out; twice that and a
    // margin, and it is gone.
    leaseMs: 2 * config.coreTimeoutMs + 5_000,
    unknownAgeLimitMs: config.unknownAgeLimitSeconds * 1000,
    observeCoreCall,
    onReconciled: (outcome) => metrics.reconcilerSettled(outcome),
  });
  metrics.setReconcilerBacklogSource(() => reconciler.backlog());
  const worker = new PendingWorker({ store, clock, execution, logger, operations: businessOperations, batchWindow: config.coreBatchWindow, intervalMs: 1_000 });
  const runner = new OperationRunner({
    store,
    clock,
    claims,
    window,
    execution,
    reconciler,
    worker,
    audit,
    coreTimeoutMs: config.coreTimeoutMs,
    batchWindow: config.coreBatchWindow,
    onOutcome: settled,
  });
  return { runner, execution, reconciler, worker, audit };
}

/**
 * The audit spool of this instance (src/audit/audit-spool.ts): its directory is made and its
 * liveness socket listens before the instance serves, so that a directory that cannot be used
 * stops the start instead of failing in the middle of an outage.
 */
async function openAuditSpool(config: Config, store: Store, options: StartOptions): Promise<AuditSpool> {
  const databaseId = await spoolDatabaseId(store.db);
  try {
    return await AuditSpool.open({ directory: config.auditSpool, databaseId, bounds: options.auditSpoolBounds });
  } catch (error) {
    throw new Error(`the audit spool directory ${config.auditSpool} (--audit-spool / COREGATE_AUDIT_SPOOL) cannot be used: ${(error as Error).message}`, { cause: error });
  }
}

/** Linux's id of the machine's current boot (a crash of the machine is a new one), or undefined elsewhere. */
function machineBootId(): string | undefined {
  try {
    const id = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    return /^[0-9a-f-]{1,64}$/.test(id) ? id : undefined;
  } catch {
    return undefined;
  }
}
