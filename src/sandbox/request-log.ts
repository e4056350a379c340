/**
 * The sandbox's request log (docs/sandbox.md, "The request log"): every authenticated business API
 * request and its answer, as the client sent and received it, so that a team can see what its code
 * actually sent. Never a credential: `Authorization`, `DPoP`, cookies, the client-certificate
 * header and any header named like a secret are left out before anything is kept; and whatever a
 * header's name (`x-jwt`, `x-amzn-oidc-data`, ...), a value that is a credential is replaced by
 * `[redacted: ...]` (redactedValue): a JWT, a `Bearer`/`DPoP`/`Basic` credential, a secret shaped
 * like those coregate generates, or the logging client's own secret, which is recognised as the
 * token endpoint recognises it (its stored HMAC) just before the batch is written.
 *
 * Kept off the request's path: entries are buffered and written in one statement per batch, after
 * the answer went out; a failed write loses log lines (logged), never a request. Kept 7 days and
 * at most 10,000 per client: reads apply both bounds, and a background pass deletes what they
 * exclude.
 */
import type { Clock, Timer } from '../core/clock.js';
import { timeOrderedUuid } from '../core/time-ordered-uuid.js';
import type { Logger } from '../log.js';
import { Periodic } from '../clock/periodic.js';
import type { Store } from '../store/connect.js';
import { insertRequestLogRows, listRequestLog, pruneRequestLog, type RequestLogFilter, type RequestLogRow } from '../store/request-log.js';
import { verifyClientSecret } from '../auth/client-secret.js';

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

/** Why a header's value was not kept, whatever the header's name (docs/sandbox.md). */
export type RedactionRule = 'jwt' | 'authorization-credential' | 'generated-secret' | 'client-secret';

/** What the log keeps instead of a value a rule redacted: the rule's kind, never a part of the value. */
export const redactedValue: Readonly<Record<RedactionRule, string>> = {
  jwt: '[redacted: JWT]',
  'authorization-credential': '[redacted: credential]',
  'generated-secret': '[redacted: secret]',
  'client-secret': '[redacted: secret]',
};

/** A data file's client secrets have 16 to 512 characters (src/sandbox/data-file.ts); generated ones 43. */
const clientSecretChars = { min: 16, max: 512 };

/** A credential of an HTTP authentication scheme that carries one (RFC 9110 §11, RFC 9449): `Bearer x`, `DPoP x`, `Basic x`, any case. */
const schemeCredential = /(?:^|,)\s*(?:bearer|dpop|basic)\s+[A-Za-z0-9\-._~+/]/i;

/**
 * The clients' stored secrets, for the client-secret rule: a header value the logging client's
 * stored hash verifies is its secret. Read from the auth service's snapshot (at most a second old,
 * no database read per entry) when a batch is written, after the answers went out.
 */
export interface ClientSecretLookup {
  /** The store's secret-hash key (src/auth/secret-hash-key.ts). */
  hashKey: Buffer;
  /** The auth service's public base URL: `{publicUrl}/realms/{realm}` issues the tokens of this service's own clients. */
  publicUrl: () => string;
  /** The client as the token endpoint reads it; undefined when unknown. */
  client: (realm: string, clientId: string) => Promise<{ secretHash: string } | undefined>;
}

export interface RequestLogOptions {
  store: Store;
  clock: Clock;
  logger: Logger;
  /** The trusted proxy's client-certificate header (--client-certificate-header), never kept. */
  clientCertificateHeader?: string | undefined;
  /** Without it the client-secret rule is not applied (the shape rules still are). */
  clientSecrets?: ClientSecretLookup | undefined;
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
    // A batch whose clients' secrets cannot be read is not written: a secret may be in it.
    const writing = this.#withoutClientSecrets(batch).then(() => insertRequestLogRows(this.#options.store.db, batch)).then(
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
      const text = Array.isArray(value) ? value.join(', ') : String(value);
      const rule = credentialShapeOf(text, lower);
      kept[lower] = rule === undefined ? text : redactedValue[rule];
    }
    return kept;
  }

  /**
   * The client-secret rule, applied to a batch before it is written: a header value (or a part of
   * one) that the logging client's stored secret hash verifies is replaced. One snapshot read per
   * client in the batch; only this service's own clients have a secret here.
   */
  async #withoutClientSecrets(batch: RequestLogRow[]): Promise<void> {
    const lookup = this.#options.clientSecrets;
    if (lookup === undefined) return;
    const hashes = new Map<string, string | undefined>();
    for (const row of batch) {
      if (!hashes.has(row.clientKey)) hashes.set(row.clientKey, await storedSecretHash(lookup, row.clientKey));
      const hash = hashes.get(row.clientKey);
      if (hash === undefined || hash === '') continue;
      redactClientSecret(row.requestHeaders, lookup.hashKey, hash);
      redactClientSecret(row.responseHeaders, lookup.hashKey, hash);
    }
  }
}

/**
 * The rule a header's value falls under whatever the header's name, or undefined for an ordinary
 * value (a correlation id, a UUID, a content type). `name` only spares `x-correlation-id` the
 * generated-secret shape: the entry shows its correlation id anyway (its own field), and a client
 * may choose 43 characters of base64url for it.
 */
export function credentialShapeOf(value: string, name = ''): RedactionRule | undefined {
  if (schemeCredential.test(value)) return 'authorization-credential';
  if (value.includes('.') && holdsCompactJose(value)) return 'jwt';
  if (name !== 'x-correlation-id' && holdsGeneratedSecret(value)) return 'generated-secret';
  return undefined;
}

/** Three or five dot-separated base64(url) segments, not part of a longer run of such characters. */
const compactJose = /(?<![A-Za-z0-9_\-+/])[A-Za-z0-9_\-+/]{4,}=*(?:\.[A-Za-z0-9_\-+/]*=*){2}(?:(?:\.[A-Za-z0-9_\-+/]*=*){2})?(?![A-Za-z0-9_\-+/.=])/g;

/**
 * A compact JWS (three segments) or JWE (five), anywhere in the value: base64url segments
 * separated by dots (padding tolerated: AWS's ALB pads its `x-amzn-oidc-data`), the first the
 * encoding of a JSON object (its header: `{"` is `eyJ`). Payload and signature may be empty (an
 * unsecured or detached JWS is still a token).
 */
function holdsCompactJose(value: string): boolean {
  for (const match of value.matchAll(compactJose)) {
    const header = match[0].slice(0, match[0].indexOf('.'));
    if (/^\s*\{/.test(Buffer.from(header, 'base64').toString('latin1'))) return true;
  }
  return false;
}

/**
 * A secret shaped like those coregate generates: a client secret (`clients create`,
 * `rotate-secret`: 32 random bytes in base64url, 43 characters; a console session's the same), or
 * a webhook signing secret (`whsec_` and base64). 43 characters of base64url with upper- and
 * lower-case letters: a generated one lacks either with a chance of about 2 in 10^10; a UUID, a
 * hex digest or a word never has that shape.
 */
function holdsGeneratedSecret(value: string): boolean {
  if (value.includes('whsec_')) return true;
  if (value.length < 43) return false;
  for (const part of value.split(/[^A-Za-z0-9_-]+/)) {
    if (part.length === 43 && /[A-Z]/.test(part) && /[a-z]/.test(part)) return true;
  }
  return false;
}

/** The stored hash of the client that `clientKey` names when it is this service's own; undefined otherwise (an external issuer's client). */
async function storedSecretHash(lookup: ClientSecretLookup, clientKey: string): Promise<string | undefined> {
  const prefix = `${lookup.publicUrl()}/realms/`;
  const hash = clientKey.lastIndexOf('#');
  if (!clientKey.startsWith(prefix) || hash < prefix.length) return undefined;
  let realm: string;
  try {
    realm = decodeURIComponent(clientKey.slice(prefix.length, hash));
  } catch {
    return undefined;
  }
  return (await lookup.client(realm, clientKey.slice(hash + 1)))?.secretHash;
}

/** Replaces, in place, every value that is (or holds, between separators) the secret `storedHash` verifies. */
function redactClientSecret(headers: Record<string, string>, hashKey: Buffer, storedHash: string): void {
  for (const [name, value] of Object.entries(headers)) {
    if (value.length < clientSecretChars.min || value.startsWith('[redacted: ')) continue;
    if (candidateSecrets(value).some((candidate) => verifyClientSecret(hashKey, candidate, storedHash))) headers[name] = redactedValue['client-secret'];
  }
}

/** The value itself, and its parts between spaces, commas, semicolons, colons and equals signs, of a client secret's length. */
function candidateSecrets(value: string): string[] {
  const candidates = new Set([value.trim(), ...value.split(/[\s,;]+/), ...value.split(/[\s,;:=]+/)]);
  return [...candidates].filter((candidate) => candidate.length >= clientSecretChars.min && candidate.length <= clientSecretChars.max);
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
