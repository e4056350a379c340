/**
 * Run-time configuration (README.md, "Configuration"): command-line flags win over environment
 * variables, which win over defaults. Every value is checked here, once, with a message naming the
 * setting.
 */
import { defaultConnectionLimits, type ConnectionLimits } from './connection-limits.js';
import { availableParallelism } from 'node:os';
import { isCalendarDate } from './core/calendar-date.js';
import { isRedisUrl, redactRedisUrl } from './limits/redis-url.js';

export type Role = 'all' | 'auth' | 'api';

export interface Config {
  port: number;
  host: string;
  db: string;
  dataFile: string | undefined;
  publicUrl: string | undefined;
  businessDate: string | undefined;
  role: Role;
  logLevel: string;
  masterKey: string | undefined;
  /** How long SIGTERM waits for in-flight requests before closing connections. */
  shutdownGraceMs: number;
  /** How long the business API waits for the core before answering 504. */
  coreTimeoutMs: number;
  /** A remote core's base URL (`coregate core serve`); undefined: the embedded reference core. */
  coreUrl: string | undefined;
  /** Same client, same body, same path, no correlation id, within this many seconds → 409. 0 disables. */
  duplicateWindowSeconds: number;
  /** UTC time-of-day window in which the core queues operations (202), or undefined. */
  coreBatchWindow: { startSecond: number; endSecond: number } | undefined;
  /** External token issuers the business API trusts besides its own realms (e.g. Keycloak realms). */
  trustedIssuers: string[];
  /** The audience the business API requires of external issuers' tokens. */
  audience: string;
  /** Business API requests per second per client (token bucket, per instance); 0 disables. */
  rateLimitPerSecond: number;
  /** PEM files for serving HTTPS directly (TLS 1.2 at least); absent: plain HTTP behind a TLS proxy. */
  tls: { certFile: string; keyFile: string } | undefined;
  /**
   * TLS client certificates (RFC 8705; docs/auth.md, "Mutual TLS"): the CA file that issues them,
   * and behind a TLS-terminating proxy the header it puts them in and the proxies believed;
   * undefined: none taken.
   */
  clientCertificates: { caFile: string; header: string | undefined; trustedProxies: string[] } | undefined;
  /** How often the reconciler looks for unknown and abandoned operations. */
  reconcileIntervalMs: number;
  /** An operation still unknown this long after it was created is logged, counted and reported by check. */
  unknownAgeLimitSeconds: number;
  /** The longest back-off between two reconciliation attempts of one operation. */
  reconcileBackoffMaxMs: number;
  /** Failed client authentications per realm, client id and source address in a window before 429; 0 disables. */
  authFailureLimit: number;
  /** The window of authFailureLimit, opened by the first failure; 0 disables. */
  authFailureWindowSeconds: number;
  /** Redis shared by every instance for the limits; undefined: limits per instance, in memory. */
  redisUrl: string | undefined;
  /** Prepended to every Redis key. */
  redisKeyPrefix: string;
  /** A Redis command unanswered within this is answered from the instance's memory instead. */
  redisCommandTimeoutMs: number;
  /** Serve GET /metrics on this port (same host) instead of the main one; 0: any free port. */
  metricsPort: number | undefined;
  /** Processes serving the port (node:cluster); 1: this process serves it alone. */
  workers: number;
  /** Time-outs and the connection cap of the HTTP server (src/connection-limits.ts). */
  connectionLimits: ConnectionLimits;
  /**
   * Sandbox mode (`npm start`; docs/sandbox.md): the operator API and the console are on, the start
   * banner prints a one-time console login URL, and the sandbox may be reset.
   */
  sandbox: boolean;
  /** The operator API and the console (/operator/v1, /console): on in sandbox mode, off otherwise unless --operator-api. */
  operatorApi: boolean;
  /** Signed events (docs/webhooks.md): a delivery not delivered this long after it was created is failed. */
  webhookRetrySeconds: number;
  /** Signed events: the first retry of a failed delivery comes between half of this and this later; each next one twice as late. */
  webhookFirstRetryMs: number;
  /**
   * Signed events may go to loopback and private addresses (docs/webhooks.md, docs/security.md):
   * for a sandbox whose receivers run on the same machine or network. Off by default, sandbox mode
   * included: a sandbox served to integration teams is as exposed as a production instance.
   */
  webhookAllowPrivate: boolean;
  /**
   * The audit spool's directory (src/audit/audit-spool.ts, docs/deployment.md): refused requests'
   * audit records answered during a database outage are kept there, on local disk, until the
   * database is back. Several processes may share it; it must be local to the host.
   */
  auditSpool: string;
}

export const defaultDbUrl = 'sqlite:./data/coregate.db';
/** Next to the default SQLite file: what `./data` holds is what a single host backs up. */
export const defaultAuditSpool = './data/audit-spool';
/** Flag values as commander gives them; every one optional. */
export interface ConfigFlags {
  port?: string;
  host?: string;
  db?: string;
  data?: string;
  publicUrl?: string;
  businessDate?: string;
  role?: string;
  logLevel?: string;
  coreTimeoutMs?: string;
  coreUrl?: string;
  duplicateWindow?: string;
  coreBatchWindow?: string;
  trustedIssuer?: string[];
  audience?: string;
  tlsCert?: string;
  tlsKey?: string;
  tlsClientCa?: string;
  clientCertificateHeader?: string;
  trustedProxy?: string[];
  rateLimit?: string;
  reconcileIntervalMs?: string;
  unknownAgeLimit?: string;
  authFailureLimit?: string;
  authFailureWindow?: string;
  redisUrl?: string;
  redisKeyPrefix?: string;
  metricsPort?: string;
  workers?: string;
  sandbox?: boolean;
  operatorApi?: boolean;
  webhookAllowPrivate?: boolean;
  auditSpool?: string;
}

export function resolveConfig(flags: ConfigFlags, env: NodeJS.ProcessEnv = process.env): Config {
  const port = integerSetting('--port / COREGATE_PORT', flags.port ?? env.COREGATE_PORT ?? '8080', 0, 65_535);
  const publicUrl = flags.publicUrl ?? env.COREGATE_PUBLIC_URL;
  if (publicUrl !== undefined && !/^https?:\/\/[^/]+(\/.*)?$/.test(publicUrl)) {
    throw new Error(`--public-url / COREGATE_PUBLIC_URL must be an http(s) URL, got "${publicUrl}"`);
  }
  const businessDate = flags.businessDate ?? env.COREGATE_BUSINESS_DATE;
  if (businessDate !== undefined && !isCalendarDate(businessDate)) {
    throw new Error(`--business-date / COREGATE_BUSINESS_DATE must be a YYYY-MM-DD calendar date, got "${businessDate}"`);
  }
  const role = flags.role ?? env.COREGATE_ROLE ?? 'all';
  if (role !== 'all' && role !== 'auth' && role !== 'api') {
    throw new Error(`--role / COREGATE_ROLE must be all, auth or api, got "${role}"`);
  }
  const coreUrl = flags.coreUrl ?? env.COREGATE_CORE_URL;
  if (coreUrl !== undefined && !/^https?:\/\/[^/]+(\/.*)?$/.test(coreUrl)) {
    throw new Error(`--core-url / COREGATE_CORE_URL must be an http(s) URL, got "${coreUrl}"`);
  }
  const sandbox = flags.sandbox ?? booleanSetting('COREGATE_SANDBOX', env.COREGATE_SANDBOX);
  const db = flags.db ?? env.COREGATE_DB ?? defaultDbUrl;
  if (!/^(sqlite:.+|postgres(ql)?:\/\/.+)$/.test(db)) {
    throw new Error(`--db / COREGATE_DB must be sqlite:PATH or postgres://..., got "${db.replace(/\/\/[^@/]*@/, '//***@')}"`);
  }
  return {
    port,
    host: flags.host ?? env.COREGATE_HOST ?? 'localhost',
    db,
    dataFile: flags.data ?? env.COREGATE_DATA,
    publicUrl: publicUrl?.replace(/\/+$/, ''),
    businessDate,
    role,
    logLevel: flags.logLevel ?? env.COREGATE_LOG_LEVEL ?? 'info',
    masterKey: env.COREGATE_MASTER_KEY,
    shutdownGraceMs: integerSetting('COREGATE_SHUTDOWN_GRACE_MS', env.COREGATE_SHUTDOWN_GRACE_MS ?? '10000', 0, 600_000),
    coreTimeoutMs: integerSetting('--core-timeout-ms / COREGATE_CORE_TIMEOUT_MS', flags.coreTimeoutMs ?? env.COREGATE_CORE_TIMEOUT_MS ?? '5000', 1, 600_000),
    coreUrl,
    duplicateWindowSeconds: integerSetting(
      '--duplicate-window / COREGATE_DUPLICATE_WINDOW_SECONDS',
      flags.duplicateWindow ?? env.COREGATE_DUPLICATE_WINDOW_SECONDS ?? '600',
      0,
      31_536_000,
    ),
    coreBatchWindow: parseBatchWindow(flags.coreBatchWindow ?? env.COREGATE_CORE_BATCH_WINDOW),
    trustedIssuers: parseIssuers(flags.trustedIssuer ?? (env.COREGATE_TRUSTED_ISSUERS ?? '').split(',')),
    audience: flags.audience ?? env.COREGATE_AUDIENCE ?? 'coregate-api',
    rateLimitPerSecond: integerSetting('--rate-limit / COREGATE_RATE_LIMIT', flags.rateLimit ?? env.COREGATE_RATE_LIMIT ?? '0', 0, 1_000_000),
    tls: tlsFiles(flags.tlsCert ?? env.COREGATE_TLS_CERT, flags.tlsKey ?? env.COREGATE_TLS_KEY),
    clientCertificates: clientCertificateSettings(
      flags.tlsClientCa ?? env.COREGATE_TLS_CLIENT_CA,
      flags.clientCertificateHeader ?? env.COREGATE_CLIENT_CERTIFICATE_HEADER,
      flags.trustedProxy ?? (env.COREGATE_TRUSTED_PROXIES ?? '').split(','),
      (flags.tlsCert ?? env.COREGATE_TLS_CERT) !== undefined,
    ),
    reconcileIntervalMs: integerSetting(
      '--reconcile-interval-ms / COREGATE_RECONCILE_INTERVAL_MS',
      flags.reconcileIntervalMs ?? env.COREGATE_RECONCILE_INTERVAL_MS ?? '2000',
      10,
      3_600_000,
    ),
    unknownAgeLimitSeconds: integerSetting(
      '--unknown-age-limit / COREGATE_UNKNOWN_AGE_LIMIT_SECONDS',
      flags.unknownAgeLimit ?? env.COREGATE_UNKNOWN_AGE_LIMIT_SECONDS ?? '300',
      1,
      31_536_000,
    ),
    webhookRetrySeconds: integerSetting('COREGATE_WEBHOOK_RETRY_SECONDS', env.COREGATE_WEBHOOK_RETRY_SECONDS ?? '86400', 1, 604_800),
    webhookFirstRetryMs: integerSetting('COREGATE_WEBHOOK_FIRST_RETRY_MS', env.COREGATE_WEBHOOK_FIRST_RETRY_MS ?? '5000', 10, 3_600_000),
    webhookAllowPrivate: webhookAllowPrivateSetting(flags.webhookAllowPrivate, env),
    reconcileBackoffMaxMs: integerSetting(
      'COREGATE_RECONCILE_BACKOFF_MAX_MS',
      env.COREGATE_RECONCILE_BACKOFF_MAX_MS ?? '60000',
      100,
      3_600_000,
    ),
    authFailureLimit: integerSetting('--auth-failure-limit / COREGATE_AUTH_FAILURE_LIMIT', flags.authFailureLimit ?? env.COREGATE_AUTH_FAILURE_LIMIT ?? '10', 0, 1_000_000),
    authFailureWindowSeconds: integerSetting(
      '--auth-failure-window / COREGATE_AUTH_FAILURE_WINDOW_SECONDS',
      flags.authFailureWindow ?? env.COREGATE_AUTH_FAILURE_WINDOW_SECONDS ?? '60',
      0,
      86_400,
    ),
    redisUrl: redisUrl(flags.redisUrl ?? env.COREGATE_REDIS_URL),
    redisKeyPrefix: redisKeyPrefix(flags.redisKeyPrefix ?? env.COREGATE_REDIS_KEY_PREFIX ?? 'coregate:'),
    redisCommandTimeoutMs: integerSetting('COREGATE_REDIS_COMMAND_TIMEOUT_MS', env.COREGATE_REDIS_COMMAND_TIMEOUT_MS ?? '200', 1, 60_000),
    metricsPort: metricsPortSetting(flags.metricsPort ?? env.COREGATE_METRICS_PORT, port),
    workers: workersSetting(flags.workers ?? env.COREGATE_WORKERS ?? '1'),
    connectionLimits: connectionLimitsSetting(env),
    sandbox,
    operatorApi: sandbox || (flags.operatorApi ?? booleanSetting('COREGATE_OPERATOR_API', env.COREGATE_OPERATOR_API)),
    auditSpool: auditSpoolSetting(flags.auditSpool ?? env.COREGATE_AUDIT_SPOOL ?? defaultAuditSpool),
  };
}

/** A directory path (made at start when missing: src/audit/audit-spool.ts checks it can be used, only where a spool is opened). */
function auditSpoolSetting(value: string): string {
  if (value.trim() === '' || value.includes('\0')) throw new Error(`--audit-spool / COREGATE_AUDIT_SPOOL must be a directory path, got "${value}"`);
  return value;
}

/** Time-outs and the connection cap (src/connection-limits.ts). A head must be able to arrive within the request's time. */
function connectionLimitsSetting(env: NodeJS.ProcessEnv): ConnectionLimits {
  const limits = {
    headersTimeoutMs: integerSetting('COREGATE_HEADERS_TIMEOUT_MS', env.COREGATE_HEADERS_TIMEOUT_MS ?? String(defaultConnectionLimits.headersTimeoutMs), 100, 600_000),
    requestTimeoutMs: integerSetting('COREGATE_REQUEST_TIMEOUT_MS', env.COREGATE_REQUEST_TIMEOUT_MS ?? String(defaultConnectionLimits.requestTimeoutMs), 100, 600_000),
    keepAliveTimeoutMs: integerSetting('COREGATE_KEEP_ALIVE_TIMEOUT_MS', env.COREGATE_KEEP_ALIVE_TIMEOUT_MS ?? String(defaultConnectionLimits.keepAliveTimeoutMs), 100, 600_000),
    connectionsMax: integerSetting('COREGATE_CONNECTIONS_MAX', env.COREGATE_CONNECTIONS_MAX ?? String(defaultConnectionLimits.connectionsMax), 1, 1_000_000),
  };
  if (limits.headersTimeoutMs > limits.requestTimeoutMs) {
    throw new Error(`COREGATE_HEADERS_TIMEOUT_MS (${limits.headersTimeoutMs}) must not exceed COREGATE_REQUEST_TIMEOUT_MS (${limits.requestTimeoutMs})`);
  }
  return limits;
}

/** --webhook-allow-private, else COREGATE_WEBHOOK_ALLOW_PRIVATE; the same for serve and the operator commands that register endpoints. */
export function webhookAllowPrivateSetting(flag: boolean | undefined, env: NodeJS.ProcessEnv): boolean {
  return flag ?? booleanSetting('--webhook-allow-private / COREGATE_WEBHOOK_ALLOW_PRIVATE', env.COREGATE_WEBHOOK_ALLOW_PRIVATE);
}

/** true/false (also 1/0, yes/no); unset is false. */
export function booleanSetting(name: string, value: string | undefined): boolean {
  if (value === undefined || value === '') return false;
  if (/^(true|1|yes)$/i.test(value)) return true;
  if (/^(false|0|no)$/i.test(value)) return false;
  throw new Error(`${name} must be true or false, got "${value}"`);
}

function redisUrl(value: string | undefined): string | undefined {
  if (value === undefined || value === '') return undefined;
  if (!isRedisUrl(value)) throw new Error(`--redis-url / COREGATE_REDIS_URL must be redis://HOST[:PORT][/DB] or rediss://..., got "${redactRedisUrl(value)}"`);
  return value;
}

function redisKeyPrefix(value: string): string {
  if (!/^[\x21-\x7e]{1,64}$/.test(value)) {
    throw new Error(`--redis-key-prefix / COREGATE_REDIS_KEY_PREFIX must be 1-64 printable characters without spaces, got "${value}"`);
  }
  return value;
}

/** A count, or `auto`: one worker per available core. */
function workersSetting(value: string): number {
  if (value === 'auto') return availableParallelism();
  return integerSetting('--workers / COREGATE_WORKERS', value, 1, 64);
}

function metricsPortSetting(value: string | undefined, port: number): number | undefined {
  if (value === undefined || value === '') return undefined;
  const metricsPort = integerSetting('--metrics-port / COREGATE_METRICS_PORT', value, 0, 65_535);
  if (metricsPort !== 0 && metricsPort === port) throw new Error(`--metrics-port / COREGATE_METRICS_PORT must differ from --port / COREGATE_PORT, both are ${port}`);
  return metricsPort;
}

function tlsFiles(certFile: string | undefined, keyFile: string | undefined): Config['tls'] {
  if (!certFile && !keyFile) return undefined;
  if (!certFile || !keyFile) throw new Error('--tls-cert / COREGATE_TLS_CERT and --tls-key / COREGATE_TLS_KEY go together');
  return { certFile, keyFile };
}

/**
 * Client certificates (docs/auth.md, "Mutual TLS") come from the TLS handshake (coregate serves TLS
 * itself) or from a trusted proxy's header; either way --tls-client-ca names the CA that must have
 * issued them.
 */
function clientCertificateSettings(caFile: string | undefined, header: string | undefined, proxies: string[], servesTls: boolean): Config['clientCertificates'] {
  const trustedProxies = proxies.map((proxy) => proxy.trim()).filter((proxy) => proxy !== '');
  if (!caFile) {
    if (header || trustedProxies.length > 0) throw new Error('--client-certificate-header and --trusted-proxy need --tls-client-ca / COREGATE_TLS_CLIENT_CA: the CA that issues the client certificates');
    return undefined;
  }
  if (header !== undefined && !/^[A-Za-z0-9-]{1,64}$/.test(header)) throw new Error(`--client-certificate-header / COREGATE_CLIENT_CERTIFICATE_HEADER must be a header name, got "${header}"`);
  if (header !== undefined && trustedProxies.length === 0) throw new Error('--client-certificate-header needs --trusted-proxy / COREGATE_TRUSTED_PROXIES: the proxies whose header is believed');
  if (header === undefined && trustedProxies.length > 0) throw new Error('--trusted-proxy goes with --client-certificate-header / COREGATE_CLIENT_CERTIFICATE_HEADER');
  if (header !== undefined && servesTls) throw new Error('--client-certificate-header is for a TLS-terminating proxy in front of coregate; with --tls-cert coregate takes the certificate at its own handshake: leave one of them out');
  if (header === undefined && !servesTls) throw new Error('--tls-client-ca needs --tls-cert and --tls-key (coregate asks for the certificates at its own TLS handshake) or, behind a TLS-terminating proxy, --client-certificate-header and --trusted-proxy');
  return { caFile, header: header || undefined, trustedProxies };
}

/** `HH:MM[:SS]-HH:MM[:SS]` in UTC; the window may wrap midnight (23:00-01:00). */
function parseBatchWindow(value: string | undefined): Config['coreBatchWindow'] {
  if (value === undefined || value === '') return undefined;
  const match = /^(\d{2}):(\d{2})(?::(\d{2}))?-(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(value);
  const seconds = (h?: string, m?: string, s?: string) => Number(h) * 3600 + Number(m) * 60 + Number(s ?? '0');
  if (!match || Number(match[1]) > 23 || Number(match[4]) > 23 || Number(match[2]) > 59 || Number(match[5]) > 59) {
    throw new Error(`--core-batch-window / COREGATE_CORE_BATCH_WINDOW must be HH:MM-HH:MM (UTC), got "${value}"`);
  }
  return { startSecond: seconds(match[1], match[2], match[3]), endSecond: seconds(match[4], match[5], match[6]) };
}

function parseIssuers(values: string[]): string[] {
  const issuers = values.map((value) => value.trim().replace(/\/+$/, '')).filter((value) => value !== '');
  for (const issuer of issuers) {
    if (!/^https?:\/\/[^/]+(\/.*)?$/.test(issuer)) throw new Error(`--trusted-issuer / COREGATE_TRUSTED_ISSUERS: "${issuer}" is not an http(s) URL`);
  }
  return issuers;
}

export function integerSetting(name: string, value: string, min: number, max: number): number {
  if (!/^\d+$/.test(value)) throw new Error(`${name} must be an integer, got "${value}"`);
  const number = Number(value);
  if (number < min || number > max) throw new Error(`${name} must be between ${min} and ${max}, got ${number}`);
  return number;
}
