/**
 * Structured JSON logs (pino). Secrets never reach a log line: requests are serialized without
 * headers or bodies, sensitive query parameters are masked, and known secret fields are redacted
 * wherever they appear.
 */
import { pino, stdSerializers, type DestinationStream, type Logger } from 'pino';

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
  /** Where lines go; stdout by default. Tests pass a capturing stream. */
  destination?: DestinationStream;
  /** Fields on every line besides the service's name (a worker's number). */
  base?: Record<string, unknown>;
}

export function createLogger(options: LogOptions = {}): Logger {
  return pino(
    {
      level: options.level ?? 'info',
      base: { service: 'coregate', ...options.base },
      timestamp: pino.stdTimeFunctions.isoTime,
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
    options.destination,
  );
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
