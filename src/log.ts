/**
 * Structured JSON logs (pino). Secrets never reach a log line: requests are serialized without
 * headers or bodies, sensitive query parameters are masked, and known secret fields are redacted
 * wherever they appear.
 */
import { levels, pino, stdSerializers, symbols, type DestinationStream, type Logger } from 'pino';
import { standardOutputDestination } from './log-destination.js';
import { isoTimestamp } from './core/iso-timestamp.js';
import type { Clock } from './core/clock.js';
import { systemClock } from './clock/system-clock.js';

export type { Logger } from 'pino';

const sensitiveNames = ['client_secret', 'secret', 'password', 'access_token', 'token', 'authorization', 'assertion'];

export const redactedPaths = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  'headers.cookie',
  'body',
  '*.body',
  ...sensitiveNames,
  ...sensitiveNames.map((name) => `*.${name}`),
];

export interface LogOptions {
  level?: string;
  /** Where lines go; standard output, batched per turn of the event loop, by default (log-destination.ts). Tests pass a capturing stream. */
  destination?: DestinationStream;
  /** Fields on every line besides the service's name (a worker's number). */
  base?: Record<string, unknown>;
  /** Whose time stamps the lines (src/core/clock.ts); the system's unless the wiring hands one in. */
  clock?: Clock;
}

export function createLogger(options: LogOptions = {}): Logger {
  const clock = options.clock ?? systemClock;
  return pino(
    {
      level: options.level ?? 'info',
      base: { service: 'coregate', ...options.base },
      // pino's isoTime, on the clock: the same text, `,"time":"2026-03-02T09:00:00.000Z"`.
      timestamp: () => `,"time":"${isoTimestamp(clock.now())}"`,
      redact: { paths: redactedPaths, censor: '[REDACTED]' },
      serializers: {
        req: (request: { method?: string; url?: string; ip?: string; id?: string }) => ({
          id: request.id,
          method: request.method,
          url: maskQuery(request.url ?? ''),
          remoteAddress: request.ip,
        }),
        res: (reply: { statusCode?: number }) => ({ statusCode: reply.statusCode }),
        err: stdSerializers.err,
      },
    },
    options.destination ?? standardOutputDestination(),
  );
}

/** The fields of the one line logged per request (server.ts): safe by construction, no header or body. */
export interface RequestLine {
  reqId: string;
  method: string;
  url: string;
  remoteAddress: string | undefined;
  statusCode: number;
  responseTimeMs: number;
  route: string | undefined;
  correlationId: string | undefined;
  client: string | undefined;
  /** The request's trace and span (src/tracing/http-spans.ts); undefined when it is not traced. */
  traceId: string | undefined;
  spanId: string | undefined;
}

/**
 * Writes the per-request line straight to the logger's destination, in pino's own format and
 * with the logger's bindings. pino's general path (serializers, then redaction of every line,
 * then a generic stringify) was a third of the CPU of a refused request (measured: 11 µs of a
 * 401). These fields are known and hold no secret (the URL's sensitive query parameters are
 * masked as the `req` serializer does), so nothing here needs redacting.
 */
export function requestLineWriter(logger: Logger): (line: RequestLine) => void {
  const stream = (logger as unknown as Record<symbol, DestinationStream>)[symbols.streamSym];
  const bindings = (logger as unknown as Record<symbol, string>)[symbols.chindingsSym] ?? '';
  // The logger's own time field (createLogger's clock), so that a request's line and every other
  // line of the instance are stamped by one clock.
  const timeField = (logger as unknown as Record<symbol, (() => string) | undefined>)[symbols.timeSym] ?? (() => '');
  const infoLevel = levels.values.info ?? 30;
  return (line) => {
    if (!stream || !logger.isLevelEnabled('info')) return;
    const reqId = JSON.stringify(line.reqId);
    let text =
      `{"level":${infoLevel}${timeField.call(logger)}${bindings},"reqId":${reqId},` +
      `"req":{"id":${reqId},"method":${JSON.stringify(line.method)},"url":${JSON.stringify(maskQuery(line.url))}` +
      `${line.remoteAddress === undefined ? '' : `,"remoteAddress":${JSON.stringify(line.remoteAddress)}`}},` +
      `"res":{"statusCode":${line.statusCode}},"responseTime":${line.responseTimeMs}`;
    if (line.route !== undefined) text += `,"route":${JSON.stringify(line.route)}`;
    if (line.correlationId !== undefined) text += `,"correlationId":${JSON.stringify(line.correlationId)}`;
    if (line.client !== undefined) text += `,"client":${JSON.stringify(line.client)}`;
    // Hexadecimal ids: nothing to escape.
    if (line.traceId !== undefined) text += `,"traceId":"${line.traceId}","spanId":"${line.spanId}"`;
    stream.write(`${text},"msg":"request completed"}\n`);
  };
}

/**
 * A request's logger, made only when something logs through it. Fastify gives every request a
 * child logger (bound to its request id); the one line per request is written without it
 * (requestLineWriter), so most requests never log through it, and making pino's child on every
 * request was a twentieth of a 401's CPU.
 */
class LazyChildLogger {
  #child: Logger | undefined;

  constructor(
    readonly parent: Logger,
    readonly childBindings: Record<string, unknown>,
    readonly childOptions: object,
  ) {}

  #logger(): Logger {
    this.#child ??= this.parent.child(this.childBindings, this.childOptions);
    return this.#child;
  }

  get level(): string {
    return this.#child?.level ?? this.parent.level;
  }

  set level(level: string) {
    this.#logger().level = level;
  }

  isLevelEnabled(level: string): boolean {
    return (this.#child ?? this.parent).isLevelEnabled(level);
  }

  bindings(): Record<string, unknown> {
    return this.#logger().bindings();
  }

  child(bindings: Record<string, unknown>, options?: object): Logger {
    return this.#logger().child(bindings, options);
  }

  fatal(...args: unknown[]): void {
    (this.#logger().fatal as (...a: unknown[]) => void)(...args);
  }

  error(...args: unknown[]): void {
    (this.#logger().error as (...a: unknown[]) => void)(...args);
  }

  warn(...args: unknown[]): void {
    (this.#logger().warn as (...a: unknown[]) => void)(...args);
  }

  info(...args: unknown[]): void {
    (this.#logger().info as (...a: unknown[]) => void)(...args);
  }

  debug(...args: unknown[]): void {
    if (this.isLevelEnabled('debug')) (this.#logger().debug as (...a: unknown[]) => void)(...args);
  }

  trace(...args: unknown[]): void {
    if (this.isLevelEnabled('trace')) (this.#logger().trace as (...a: unknown[]) => void)(...args);
  }

  silent(): void {}
}

/** Fastify's `childLoggerFactory`: a request's child logger, created on first use. */
export function lazyChildLoggerFactory(logger: Logger, bindings: Record<string, unknown>, options: object): Logger {
  return new LazyChildLogger(logger, bindings, options) as unknown as Logger;
}

/** Replaces the value of any sensitive query parameter (a client may misplace a secret there). */
export function maskQuery(url: string): string {
  const question = url.indexOf('?');
  if (question < 0) return url;
  const params = new URLSearchParams(url.slice(question + 1));
  for (const name of [...params.keys()]) {
    if (sensitiveNames.includes(name.toLowerCase())) params.set(name, '[REDACTED]');
  }
  return `${url.slice(0, question)}?${params.toString()}`;
}
