/**
 * The sandbox's request log (CONTRACT §14): every authenticated business API request and its
 * answer, as the client sent and received it, so that a team can see what its code actually
 * sent. Never a credential: `Authorization`, `DPoP`, cookies, the client-certificate header and
 * any header named like a secret are left out before anything is kept.
 *
 * Kept off the request's path: entries are buffered and written in one statement per batch, after
 * the answer went out; a failed write loses log lines (logged), never a request. Kept 7 days and
 * at most 10,000 per client: reads apply both bounds, and a background pass deletes what they
 * exclude.
 */
import type { Clock, Timer } from '../core/clock.js';
import { timeOrderedUuid } from '../core/time-ordered-uuid.js';
import type { Logger } from '../log.js';
import { Periodic } from '../operations/periodic.js';
import type { Store } from '../store/connect.js';
import { insertRequestLogRows, listRequestLog, pruneRequestLog, type RequestLogFilter, type RequestLogRow } from '../store/request-log.js';

export const requestLogRetentionMs = 7 * 24 * 60 * 60 * 1000;
export const requestLogPerClientMax = 10_000;
/** A body is kept up to this many characters (a business body is at most 64 KiB anyway). */
const bodyCharsMax = 65_536;
/** Entries waiting for their write; past it the oldest are dropped (the database is down). */
const bufferedMax = 5_000;
/** How long an entry may wait for its batch. */
const flushDelayMs = 50;
const pruneIntervalMs = 60_000;

/** Header names never kept, whatever their value. */
const credentialHeaders = new Set(['authorization', 'proxy-authorization', 'dpop', 'cookie', 'set-cookie', 'x-api-key']);
/** Names that say they carry a credential (a challenge names none: it is kept). */
const secretLikeName = /secret|token|passw|auth|key|assertion|hmac|signature|session|credential|dpop|cert/i;

export interface RequestLogOptions {
  store: Store;
  clock: Clock;
  logger: Logger;
  /** The trusted proxy's client-certificate header (--client-certificate-header), never kept. */
  clientCertificateHeader?: string | undefined;
}

/** What one answered request leaves in the log (the hooks of src/api/plugin.ts make it). */
export interface LoggedExchange {
  clientKey: string;
  method: string;
  path: string;
  status: number;
  correlationId: string | undefined;
  startedAtMs: number;
  operationReference: string | undefined;
  scenario: string | undefined;
  requestHeaders: Readonly<Record<string, string | string[] | undefined>>;
  responseHeaders: Readonly<Record<string, string | number | string[] | undefined>>;
  requestBody: string | undefined;
  responseBody: string | undefined;
}

export class RequestLog {
  readonly #options: RequestLogOptions;
  readonly #excluded: Set<string>;
  readonly #prune: Periodic;
  #buffer: RequestLogRow[] = [];
  #timer: Timer | undefined;
  /** The write under way, if any. */
  #writing: Promise<void> | undefined;
  #dropped = 0;

  constructor(options: RequestLogOptions) {
    this.#options = options;
    this.#excluded = new Set(credentialHeaders);
    if (options.clientCertificateHeader) this.#excluded.add(options.clientCertificateHeader.toLowerCase());
    this.#prune = new Periodic(options.clock, pruneIntervalMs, () => this.prune().then(() => undefined), (error) => options.logger.warn({ err: error }, 'request log prune failed'));
  }

  start(): void {
    this.#prune.start();
  }

  async stop(): Promise<void> {
    await this.#prune.stop();
    await this.flush();
  }

  record(exchange: LoggedExchange): void {
    const now = this.#options.clock.now();
    if (this.#buffer.length >= bufferedMax) {
      this.#buffer.shift();
      this.#dropped += 1;
    }
    this.#buffer.push({
      id: timeOrderedUuid(now),
      clientKey: exchange.clientKey,
      recordedAt: new Date(exchange.startedAtMs).toISOString(),
      recordedEpochMs: exchange.startedAtMs,
      method: exchange.method,
      path: exchange.path,
      status: exchange.status,
      correlationId: exchange.correlationId ?? null,
      durationMs: Math.max(0, now - exchange.startedAtMs),
      operationReference: exchange.operationReference ?? null,
      scenario: exchange.scenario ?? null,
      requestHeaders: this.#kept(exchange.requestHeaders),
      responseHeaders: this.#kept(exchange.responseHeaders),
      requestBody: storedBody(exchange.requestBody),
      responseBody: storedBody(exchange.responseBody),
    });
    if (this.#writing === undefined) this.#timer ??= this.#options.clock.setTimeout(() => void this.flush(), flushDelayMs, { background: true });
  }

  /**
   * Writes what is buffered; resolves when every entry recorded before the call is written or
   * dropped. One write at a time: while one is under way new entries stay in the buffer, so that
   * what waits in memory is bounded (the buffer's 5,000 and one batch) even when the database
   * stalls.
   */
  flush(): Promise<void> {
    this.#timer?.clear();
    this.#timer = undefined;
    if (this.#writing !== undefined) return this.#writing.then(() => this.flush());
    const batch = this.#buffer;
    this.#buffer = [];
    if (this.#dropped > 0) {
      this.#options.logger.warn({ dropped: this.#dropped }, 'request log entries dropped: their writes could not keep up');
      this.#dropped = 0;
    }
    if (batch.length === 0) return Promise.resolve();
    const writing = insertRequestLogRows(this.#options.store.db, batch).then(
      () => undefined,
      (error: unknown) => this.#options.logger.warn({ err: error, entries: batch.length }, 'request log entries not written'),
    );
    this.#writing = writing.finally(() => {
      this.#writing = undefined;
      if (this.#buffer.length > 0) this.#timer ??= this.#options.clock.setTimeout(() => void this.flush(), flushDelayMs, { background: true });
    });
    return this.#writing;
  }

  /** A page of the log, newest first, within its bounds (what is older or beyond a client's newest 10,000 is never shown). */
  async list(filter: Omit<RequestLogFilter, 'sinceEpochMs'> & { sinceEpochMs?: number | undefined }): Promise<{ items: RequestLogRow[]; more: boolean }> {
    await this.flush();
    const oldest = this.#options.clock.now() - requestLogRetentionMs;
    const sinceEpochMs = Math.max(oldest, filter.sinceEpochMs ?? oldest);
    // One client's newest 10,000 only; the operator's view of every client reads what the prune left.
    const bound = filter.clientKey === undefined ? Number.MAX_SAFE_INTEGER : requestLogPerClientMax;
    if (filter.offset >= bound) return { items: [], more: false };
    const limit = Math.min(filter.limit, bound - filter.offset);
    const page = await listRequestLog(this.#options.store.db, { ...filter, sinceEpochMs, limit });
    return { items: page.items, more: page.more && filter.offset + limit < bound };
  }

  /** Deletes what the log no longer keeps (the background pass; tests call it). */
  prune(): Promise<number> {
    return pruneRequestLog(this.#options.store.db, this.#options.clock.now() - requestLogRetentionMs, requestLogPerClientMax);
  }

  #kept(headers: Readonly<Record<string, string | number | string[] | undefined>>): Record<string, string> {
    const kept: Record<string, string> = {};
    for (const [name, value] of Object.entries(headers)) {
      if (value === undefined) continue;
      const lower = name.toLowerCase();
      if (this.#excluded.has(lower) || (secretLikeName.test(lower) && lower !== 'www-authenticate')) continue;
      kept[lower] = Array.isArray(value) ? value.join(', ') : String(value);
    }
    return kept;
  }
}

/**
 * A body as the log keeps it: cut at its bound, and without NUL characters, which PostgreSQL's
 * text refuses (a malformed body may hold one; the whole batch would fail with it).
 */
function storedBody(body: string | undefined): string | null {
  if (body === undefined) return null;
  const cut = body.length > bodyCharsMax ? body.slice(0, bodyCharsMax) : body;
  return cut.includes('\u0000') ? cut.replaceAll('\u0000', '\uFFFD') : cut;
}

/** An entry as the API and the console show it: bodies as JSON when they are JSON. */
export function requestLogView(row: RequestLogRow): Record<string, unknown> {
  return {
    id: row.id,
    recordedAt: row.recordedAt,
    method: row.method,
    path: row.path,
    status: row.status,
    correlationId: row.correlationId,
    durationMs: row.durationMs,
    operationReference: row.operationReference,
    scenario: row.scenario,
    request: { headers: row.requestHeaders, body: bodyOf(row.requestBody) },
    response: { headers: row.responseHeaders, body: bodyOf(row.responseBody) },
  };
}

function bodyOf(text: string | null): unknown {
  if (text === null || text === '') return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** The filters of `GET /v1/sandbox/requests` and of the console's view, checked; a message says what is wrong. */
export function requestLogQuery(query: Readonly<Record<string, string | undefined>>): { filter: Omit<RequestLogFilter, 'clientKey' | 'sinceEpochMs'> & { sinceEpochMs?: number } } | { problem: string } {
  const { correlationId, reference, status, path, since, limit, offset } = query;
  const filter: Omit<RequestLogFilter, 'clientKey' | 'sinceEpochMs'> & { sinceEpochMs?: number } = { limit: 20, offset: 0 };
  if (correlationId !== undefined) {
    if (!/^[A-Za-z0-9._:-]{1,128}$/.test(correlationId)) return { problem: 'correlationId must be 1-128 characters of A-Z a-z 0-9 . _ : -' };
    filter.correlationId = correlationId;
  }
  if (reference !== undefined) {
    if (!/^[A-Za-z0-9-]{1,64}$/.test(reference)) return { problem: 'reference must be an operation reference (a UUID)' };
    filter.operationReference = reference;
  }
  if (status !== undefined) {
    if (/^[1-5][0-9]{2}$/.test(status)) filter.status = { exact: Number(status) };
    else if (/^[1-5]xx$/i.test(status)) filter.status = { hundreds: Number(status[0]) };
    else return { problem: 'status must be a status code (404) or a class (4xx)' };
  }
  if (path !== undefined) {
    // No control character: PostgreSQL's text refuses NUL, and no path holds one.
    if (path === '' || path.length > 512 || /[\u0000-\u001f\u007f]/.test(path)) return { problem: 'path must be 1-512 printable characters: the start of the paths to show, e.g. /v1/term-deposits' };
    filter.pathPrefix = path;
  }
  if (since !== undefined) {
    const epochMs = /^\d{4}-\d{2}-\d{2}(T[0-9:.]+(Z|[+-]\d{2}:\d{2}))?$/.test(since) ? Date.parse(since) : Number.NaN;
    if (Number.isNaN(epochMs)) return { problem: 'since must be an ISO 8601 date or date-time, e.g. 2026-03-02T09:00:00Z' };
    filter.sinceEpochMs = epochMs;
  }
  if (limit !== undefined) {
    if (!/^[0-9]{1,3}$/.test(limit) || Number(limit) < 1 || Number(limit) > 100) return { problem: 'limit must be an integer from 1 to 100' };
    filter.limit = Number(limit);
  }
  if (offset !== undefined) {
    if (!/^[0-9]{1,5}$/.test(offset) || Number(offset) >= requestLogPerClientMax) return { problem: `offset must be an integer from 0 to ${requestLogPerClientMax - 1}` };
    filter.offset = Number(offset);
  }
  return { filter };
}
