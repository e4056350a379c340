/**
 * Which database errors mean "the database cannot serve this now" rather than "this request is
 * wrong" (issue 24). A connection cut under load (a failover, a network blip, a pgbouncer restart,
 * `pg_terminate_backend`), a server that refuses connections or is not writable (a standby, a
 * read-only database) is an outage: the request is answered 503 and may be repeated with its
 * correlation id, the connection it met is dropped from the pool, and readiness says not ready
 * until a writable database answers again. Nothing here is specific to one request.
 */

/**
 * SQLSTATEs of an outage. Class 08 (connection exception) by its prefix; 57P01–57P03: the server
 * is shutting down, crashed, or cannot accept connections yet (a standby being promoted);
 * 25006: a write on a read-only server or session (a standby, `default_transaction_read_only`);
 * 53300: the server has no connection slot left.
 */
const outageCodes = new Set(['57P01', '57P02', '57P03', '25006', '53300']);

/** Errors of the socket or the resolver under a connection. */
const socketCodes = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'ECONNABORTED', 'ERR_STREAM_WRITE_AFTER_END', 'ERR_STREAM_DESTROYED']);

/**
 * pg's own errors for a connection that is gone or could not be made: they carry no code, only
 * these messages (pg/lib/client.js, pg-pool). Matched at their start, as pg words them.
 */
const lostConnectionMessages = [
  'Connection terminated',
  'Client has encountered a connection error and is not queryable',
  'Client was closed and is not queryable',
  'timeout exceeded when trying to connect',
  'Cannot use a pool after calling end on the pool',
];

/**
 * Seconds a client is asked to wait (Retry-After) before repeating a request the database could
 * not serve: a lost connection is replaced at once, a failover takes some seconds.
 */
export const databaseRetryAfterSeconds = 1;

/** How deep a chain of causes is followed (a batch's skipped statement carries the failure that skipped it). */
const causeDepthMax = 4;

/** The database is unreachable, gone, or not writable: the answer is 503, and the request may be repeated. */
export function isDatabaseUnavailable(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < causeDepthMax && current instanceof Error; depth += 1) {
    if (isOutage(current)) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

function isOutage(error: Error): boolean {
  const { code } = error as { code?: unknown };
  if (typeof code === 'string') {
    if (code.startsWith('08') && code.length === 5) return true;
    if (outageCodes.has(code) || socketCodes.has(code)) return true;
  }
  if (error instanceof DatabaseNotWritable) return true;
  return lostConnectionMessages.some((message) => error.message.startsWith(message));
}

/** The database answers but will not take writes (a standby, or a read-only session): readiness and writes fail with it. */
export class DatabaseNotWritable extends Error {
  override name = 'DatabaseNotWritable';
  readonly code = '25006';
}
