/**
 * `coregate serve`: runs the service until SIGTERM/SIGINT, then drains in-flight requests. With
 * --workers N above 1 this process supervises N workers (workers.ts), each of which serves.
 */
import cluster, { type Worker } from 'node:cluster';
import type { Clock, Timer } from '../core/clock.js';
import { resolveConfig, type Config, type ConfigFlags } from '../config.js';
import { startCoregate, type Coregate } from '../main.js';
import { clusterPortVariable, superviseWorkers } from './workers.js';
import { consoleLoginUrl } from './console-command.js';
import { guardAgainstOutageExits } from './outage-guard.js';
import { explainListenFailure } from './listen-failure.js';
import { readNamedFile } from './named-file.js';
import { NewDatabaseFiles } from './new-database-files.js';
import { startTracing } from '../tracing/start-tracing.js';
import { version } from '../version.js';

/** `clock`: the time and timers of the service and of its stop (command-io.ts's CommandContext). */
export interface ServeFlags extends ConfigFlags {
  clock: Clock;
}

export async function serve(flags: ServeFlags): Promise<void> {
  const { clock } = flags;
  const config = resolveConfig(flags);
  checkTlsFiles(config);
  if (config.workers > 1 && cluster.isPrimary) return superviseWorkers(config, clock);
  const worker = cluster.worker;
  if (worker) config.port = Number(process.env[clusterPortVariable]);
  const started = takeSignalsFromTheStart(config.shutdownGraceMs, clock);
  const coregate = await startService(config, worker, clock);
  guardAgainstOutageExits(coregate.logger);
  // One banner per deployment: the first worker prints it.
  if (!worker || worker.id === 1) await printBanner(coregate, config);
  started(stopper(coregate, config, clock));
}

/**
 * The signals are taken from the start: the server answers (a readiness probe included) once it
 * listens, a little before its start has finished, and a SIGTERM in between used to kill the
 * process (exit by the signal) instead of stopping it. One that comes while it starts stops it
 * as soon as it has started, and a start that does not finish within the grace period ends
 * the process as the grace period does. Answers what to call once started, with the stop.
 */
function takeSignalsFromTheStart(graceMs: number, clock: Clock): (stop: (signal: string) => void) => void {
  let requested: string | undefined;
  let stopNow: ((signal: string) => void) | undefined;
  let startGrace: Timer | undefined;
  const onSignal = (signal: string) => {
    if (stopNow) return stopNow(signal);
    if (requested !== undefined) return;
    requested = signal;
    startGrace = clock.setTimeout(
      () => {
        process.stderr.write(`coregate: ${signal} during the start, which did not finish within the grace period (${graceMs} ms): exiting\n`);
        process.exit(1);
      },
      graceMs,
      { background: true },
    );
  };
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  process.on('SIGINT', () => onSignal('SIGINT'));
  return (stop) => {
    stopNow = stop;
    startGrace?.clear();
    if (requested !== undefined) stop(requested);
  };
}

/**
 * Starts the service, traced. A start that fails (a port in use, a refused data file, a master key
 * that does not fit) leaves no database of its own making behind: the next start would take it for
 * an existing one.
 */
async function startService(config: Config, worker: Worker | undefined, clock: Clock): Promise<Coregate> {
  // Each worker traces on its own; the supervisor serves nothing and does not.
  const tracing = await startTracing({ name: 'coregate', version });
  const newFiles = NewDatabaseFiles.before(config.db);
  try {
    return await startCoregate(config, { ...(worker ? { storePrepared: true, log: { base: { worker: worker.id } } } : {}), tracing, clock });
  } catch (error) {
    // startCoregate closed its store before it threw: the files can go.
    const removed = newFiles.removeCreated();
    if (removed.length > 0) process.stderr.write(`coregate: the start failed, so the database it had created is removed (${removed.join(', ')})\n`);
    throw explainListenFailure(error, config);
  }
}

async function printBanner(coregate: Coregate, config: Config): Promise<void> {
  process.stdout.write(banner(coregate, config.workers, config.sandbox));
  // Sandbox mode: a one-time console login URL (the token is printed, never logged).
  if (config.sandbox) {
    const login = await consoleLoginUrl(coregate.store, coregate.url, 'banner', coregate.clock);
    coregate.logger.info({ console: `${coregate.url}/console`, expiresAt: login.expiresAt }, 'one-time console login URL printed on standard output');
    process.stdout.write(`Console (one-time login URL, valid 10 minutes; \`coregate console\` prints another):\n  ${login.url}\n\n`);
  }
}

/** The stop on a signal: in-flight requests finish, the process exits 0; past the grace period it exits 1. */
function stopper(coregate: Coregate, config: Config, clock: Clock): (signal: string) => void {
  let stopping = false;
  return (signal) => {
    if (stopping) return;
    stopping = true;
    coregate.logger.info({ signal }, 'shutting down: finishing in-flight requests');
    clock.setTimeout(
      () => {
        coregate.logger.error({ graceMs: config.shutdownGraceMs }, 'shutdown grace period over: exiting');
        process.exit(1);
      },
      config.shutdownGraceMs,
      { background: true },
    );
    coregate.close().then(
      () => {
        coregate.logger.info('stopped');
        process.exit(0);
      },
      (error: unknown) => {
        coregate.logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
}

/**
 * The TLS files are read once the store is open and the server is being built: a missing one is
 * refused first, in words (named-file.ts), before anything is created.
 */
function checkTlsFiles(config: Config): void {
  if (config.tls) {
    readNamedFile('--tls-cert / COREGATE_TLS_CERT', config.tls.certFile, 'the server\'s PEM certificate');
    readNamedFile('--tls-key / COREGATE_TLS_KEY', config.tls.keyFile, 'the PEM private key of --tls-cert');
  }
  if (config.clientCertificates) readNamedFile('--tls-client-ca / COREGATE_TLS_CLIENT_CA', config.clientCertificates.caFile, 'the PEM CA certificate(s) of the client certificates');
}

/**
 * What a person needs to start: the URLs and a token request they can paste. Only in sandbox mode
 * does the request carry the client's secret (the data file's sample secret, README.md, "Quick
 * start"): in production the banner goes to the log stream, and a real secret must never reach it.
 */
function banner(coregate: Coregate, workers: number, sandbox: boolean): string {
  const lines = ['', `coregate is ready on ${coregate.url}${workers > 1 ? ` (${workers} workers)` : ''}`];
  lines.push(`  API docs: ${coregate.url}/docs`, `  OpenAPI:  ${coregate.url}/openapi.json`, `  Postman:  ${coregate.url}/collections/postman.json`);
  if (coregate.operatorApi) lines.push(`  console:  ${coregate.url}/console`);
  lines.push(`  health:   ${coregate.url}/health/ready`, `  metrics:  ${coregate.metricsUrl}`);
  const realm = coregate.data?.realms?.[0];
  const client = realm?.clients?.find((c) => c.enabled !== false);
  if (realm) {
    const realmUrl = `${coregate.url}/realms/${realm.name}`;
    lines.push(`  realm:    ${realmUrl}/.well-known/openid-configuration`, `  JWKS:     ${realmUrl}/protocol/openid-connect/certs`);
    if (client && sandbox) {
      lines.push(
        '',
        `Demo token (client ${client.clientId} from the data file), kept in $TOKEN for the next commands:`,
        `  TOKEN=$(curl -s -X POST ${realmUrl}/protocol/openid-connect/token \\`,
        `    -d grant_type=client_credentials -d client_id=${client.clientId} -d 'client_secret=${client.secret}' \\`,
        `    | sed -E 's/.*"access_token":"([^"]+)".*/\\1/')`,
      );
    } else if (client) {
      lines.push(
        '',
        `Token request (client ${client.clientId}; its secret is not printed outside sandbox mode: put it in $CLIENT_SECRET first):`,
        `  TOKEN=$(curl -s -X POST ${realmUrl}/protocol/openid-connect/token \\`,
        `    -d grant_type=client_credentials -d client_id=${client.clientId} --data-urlencode "client_secret=$CLIENT_SECRET" \\`,
        `    | sed -E 's/.*"access_token":"([^"]+)".*/\\1/')`,
      );
    }
  }
  return `${lines.join('\n')}\n\n`;
}
