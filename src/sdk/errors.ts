/**
 * Typed errors of the SDK. None of them ever holds a client secret or a token: messages are
 * built from the server's error records and from URLs without credentials.
 */

export interface ErrorDetail {
  code: string;
  reason: string;
  message: string;
}

/** A business API error record (docs/errors.md, "The error record"), whether it came top-level or wrapped in `{"error": ...}`. */
export class CoregateApiError extends Error {
  override name = 'CoregateApiError';
  readonly status: number;
  readonly reason: string;
  readonly path: string;
  readonly details: readonly ErrorDetail[];
  /** The first detail's domain code, e.g. TD-422-002. */
  readonly code: string | undefined;
  readonly correlationId: string | undefined;
  /** True when the server wrapped the record (the loan operation). */
  readonly wrapped: boolean;

  constructor(record: { status: number; reason: string; message: string; path: string; errordetail?: ErrorDetail[] }, correlationId: string | undefined, wrapped: boolean) {
    super(record.message);
    this.status = record.status;
    this.reason = record.reason;
    this.path = record.path;
    this.details = record.errordetail ?? [];
    this.code = this.details[0]?.code;
    this.correlationId = correlationId;
    this.wrapped = wrapped;
  }
}

/**
 * The token endpoint refused the client (OAuth `error` / `error_description`), or the SDK refused
 * the client's own credentials before any request (`status` 0: a private key it cannot sign with).
 */
export class CoregateAuthError extends Error {
  override name = 'CoregateAuthError';
  constructor(
    readonly status: number,
    readonly error: string,
    readonly description: string,
  ) {
    super(status === 0 ? `coregate SDK: ${description}` : `token request refused: ${error}${description ? ` (${description})` : ''}`);
  }
}

/** The server could not be reached, or the retries ran out on 502/503/504 (see `cause`). */
export class CoregateNetworkError extends Error {
  override name = 'CoregateNetworkError';
}

/** The call took longer than its time-out. */
export class CoregateTimeoutError extends Error {
  override name = 'CoregateTimeoutError';
}

/** Parses an error body into a CoregateApiError; undefined when it is no error record. */
export function apiErrorFrom(body: unknown, status: number, correlationId: string | undefined): CoregateApiError | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const wrapped = 'error' in body && typeof (body as { error: unknown }).error === 'object';
  const record = (wrapped ? (body as { error: unknown }).error : body) as Record<string, unknown>;
  if (typeof record?.message !== 'string') return undefined;
  return new CoregateApiError(
    {
      status: typeof record.status === 'number' ? record.status : status,
      reason: typeof record.reason === 'string' ? record.reason : 'UNKNOWN',
      message: record.message,
      path: typeof record.path === 'string' ? record.path : '',
      errordetail: Array.isArray(record.errordetail) ? (record.errordetail as ErrorDetail[]) : [],
    },
    correlationId,
    wrapped,
  );
}

/**
 * What went wrong on the wire, in words a person can act on: fetch says only "fetch failed" and
 * keeps the reason (ECONNREFUSED 127.0.0.1:18099, ENOTFOUND, a TLS error) in its cause.
 */
export function networkCause(error: unknown): string {
  const parts: string[] = [];
  for (let current = error, depth = 0; current instanceof Error && depth < 4; current = current.cause, depth += 1) {
    const { code, address, port, hostname } = current as Error & { code?: string; address?: string; port?: number; hostname?: string };
    const where = address ? `${address}${port ? `:${port}` : ''}` : hostname;
    if (code) parts.push([code, where].filter(Boolean).join(' '));
    else if (current.message && current.message !== 'fetch failed') parts.push(current.message);
  }
  return parts.length > 0 ? [...new Set(parts)].join(': ') : error instanceof Error ? error.message : 'network error';
}
