/**
 * `coregate serve`: its flags and help. Its work is serve.ts, loaded when it runs, so that the
 * other commands never load the server.
 */
import type { Command } from 'commander';
import { dbOption } from './common-options.js';

export function addServeCommand(program: Command): void {
  program
    .command('serve')
    .description('run the service (auth service and business API on one port by default)')
    .option('--data <file>', 'sandbox data file to load (env COREGATE_DATA)')
    .option('--port <port>', 'port to listen on, 0 for any (env COREGATE_PORT, default 8080)')
    .option('--host <host>', 'address to bind (env COREGATE_HOST, default localhost)')
    .addOption(dbOption())
    .option('--public-url <url>', 'public base URL of the auth service, the tokens\' issuer prefix (env COREGATE_PUBLIC_URL)')
    .option('--business-date <date>', 'the business date of a new store, YYYY-MM-DD; then it moves by `coregate core advance` (env COREGATE_BUSINESS_DATE)')
    .option('--role <role>', 'all, auth or api (env COREGATE_ROLE, default all)')
    .option('--log-level <level>', 'pino log level (env COREGATE_LOG_LEVEL, default info)')
    .option('--core-timeout-ms <ms>', 'how long the API waits for the core before 504 (env COREGATE_CORE_TIMEOUT_MS, default 5000)')
    .option('--core-url <url>', 'a remote core (coregate core serve) instead of the embedded one (env COREGATE_CORE_URL)')
    .option('--duplicate-window <seconds>', 'duplicate window without x-correlation-id, 0 disables (env COREGATE_DUPLICATE_WINDOW_SECONDS, default 600)')
    .option('--core-batch-window <window>', 'UTC window HH:MM-HH:MM in which the core queues operations (202) (env COREGATE_CORE_BATCH_WINDOW)')
    .option('--trusted-issuer <url...>', 'external token issuers the API trusts, e.g. a Keycloak realm URL (env COREGATE_TRUSTED_ISSUERS, comma-separated)')
    .option('--rate-limit <n>', 'business API requests per second per client (shared through --redis-url); 0 disables (env COREGATE_RATE_LIMIT, default 0)')
    .option('--auth-failure-limit <n>', 'failed client authentications per client and source address in a window before 429; 0 disables (env COREGATE_AUTH_FAILURE_LIMIT, default 10)')
    .option('--auth-failure-window <seconds>', 'window of --auth-failure-limit; 0 disables (env COREGATE_AUTH_FAILURE_WINDOW_SECONDS, default 60)')
    .option('--redis-url <url>', 'Redis shared by every instance for the limits, redis:// or rediss:// (env COREGATE_REDIS_URL; default: limits per instance)')
    .option('--redis-key-prefix <prefix>', 'prefix of every Redis key (env COREGATE_REDIS_KEY_PREFIX, default coregate:)')
    .option('--tls-cert <file>', 'PEM certificate: serve HTTPS directly, TLS 1.2 or higher (env COREGATE_TLS_CERT)')
    .option('--tls-key <file>', 'PEM private key of --tls-cert (env COREGATE_TLS_KEY)')
    .option('--tls-client-ca <file>', 'PEM CA certificate(s) of TLS client certificates: asked for at the handshake (optional), for tls_client_auth and certificate-bound tokens (env COREGATE_TLS_CLIENT_CA)')
    .option('--client-certificate-header <name>', 'behind a TLS-terminating proxy: the header holding the client certificate (PEM, URL-encoded), believed from --trusted-proxy only (env COREGATE_CLIENT_CERTIFICATE_HEADER)')
    .option('--trusted-proxy <address...>', 'addresses of the proxies whose --client-certificate-header is believed (env COREGATE_TRUSTED_PROXIES, comma-separated)')
    .option('--reconcile-interval-ms <ms>', 'how often the reconciler settles unknown operations (env COREGATE_RECONCILE_INTERVAL_MS, default 2000)')
    .option('--unknown-age-limit <seconds>', 'an operation unknown longer is logged, counted and reported by check (env COREGATE_UNKNOWN_AGE_LIMIT_SECONDS, default 300)')
    .option('--audience <aud>', 'audience required of external issuers\' tokens (env COREGATE_AUDIENCE, default coregate-api)')
    .option('--metrics-port <port>', 'serve GET /metrics on this port (same host) instead of the main one, 0 for any (env COREGATE_METRICS_PORT)')
    .option('--workers <n>', 'processes serving the port, or auto for one per core (env COREGATE_WORKERS, default 1)')
    .option('--audit-spool <dir>', 'local directory where refused requests\' audit records are kept during a database outage until it is back; shared by the processes of one host (env COREGATE_AUDIT_SPOOL, default ./data/audit-spool)')
    .option('--sandbox', 'sandbox mode: operator API and console on, one-time console login URL in the banner, sandbox reset allowed (env COREGATE_SANDBOX)')
    .option('--operator-api', 'serve the operator API and the console (/operator/v1, /console) outside sandbox mode (env COREGATE_OPERATOR_API)')
    .option('--webhook-allow-private', 'webhooks may go to loopback and private addresses, for receivers on this machine or network; off by default, sandbox mode included (env COREGATE_WEBHOOK_ALLOW_PRIVATE)')
    .action(async (flags) => (await import('./serve.js')).serve(flags));
}
