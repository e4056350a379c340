/**
 * The failover torture's client (issue 24): a business application that keeps its promise to
 * retry safely. Every operation has one correlation id for all its attempts; an attempt that met a
 * 500, 502, 503, 504, a time-out or a connection failure is repeated with the same id, on the other
 * instance (a balancer would send it anywhere), until the operation's time budget runs out. A repeat
 * answered 409 `*-409-001` names the operation an earlier attempt started: the client reads its
 * outcome with GET /v1/operations/{reference}, as the SDK does. Plain fetch rather than the SDK, so
 * that every answer is counted (the SDK neither repeats a 500 nor a time-out).
 */
import { randomUUID } from 'node:crypto';
import { demo } from '../helpers/server.js';
import { sleep } from '../helpers/wait.js';

export type OperationKind = 'termDeposit' | 'loan';

export type ClientOutcome =
  /** 200, or a repeat's 409 whose operation is Executed: the client was told it happened. */
  | { kind: 'executed'; operation: OperationKind; correlationId: string; reference: string; atMs: number; viaRepeat: boolean }
  /** 202: accepted for later execution; it must end Executed or Rejected. */
  | { kind: 'accepted'; operation: OperationKind; correlationId: string; reference: string; atMs: number }
  /** A 4xx, or a repeat's 409 whose operation is Rejected: it must have moved nothing. */
  | { kind: 'refused'; operation: OperationKind; correlationId: string; status: number; code: string | undefined; atMs: number }
  /** The budget ran out with no answer that decides: the database must still hold it settled, or not at all. */
  | { kind: 'unknown'; operation: OperationKind; correlationId: string; reference: string | undefined; reason: string; atMs: number };

export interface OperationRequest {
  operation: OperationKind;
  path: string;
  body: unknown;
  respondAsync: boolean;
}

/** What a request's answer was, counted by the harness: an HTTP status, or the failure's name. */
export type AnswerCounter = (answer: string) => void;
/** Told of every 503 an operation's attempt was answered, with the attempt's correlation id: each must end as an audit record. */
export type UnavailableObserver = (correlationId: string) => void;

/** The longest a single attempt may take before the client gives up on it and repeats. */
const attemptTimeoutMs = 10_000;
const backoffBaseMs = 100;
const backoffMaxMs = 1_000;
/** A token is renewed this long before it expires. */
const tokenMarginMs = 10_000;

interface Answer {
  status: number;
  body: Record<string, unknown> | undefined;
  location: string | null;
}

/** A client of two API instances sharing one database: tokens from either are valid on both. */
export class FailoverClient {
  readonly #baseUrls: readonly string[];
  readonly #count: AnswerCounter;
  readonly #onUnavailable: UnavailableObserver;
  #token: { value: string; expiresAtMs: number } | undefined;

  constructor(baseUrls: readonly string[], count: AnswerCounter, onUnavailable: UnavailableObserver = () => {}) {
    this.#baseUrls = baseUrls;
    this.#count = count;
    this.#onUnavailable = onUnavailable;
  }

  /**
   * Performs one operation to a decided outcome, or to 'unknown' at `giveUpAtMs`. `home` is the
   * instance of the first attempt; repeats alternate. `onCorrelationId` learns the id before the
   * first attempt is sent.
   */
  async perform(request: OperationRequest, home: number, giveUpAtMs: number, onCorrelationId: (correlationId: string) => void = () => {}): Promise<ClientOutcome> {
    const correlationId = randomUUID();
    onCorrelationId(correlationId);
    const { operation } = request;
    let lastFailure = 'no attempt';
    let reference: string | undefined;
    for (let attempt = 0; ; attempt += 1) {
      const baseUrl = this.#baseUrls[(home + attempt) % this.#baseUrls.length] ?? '';
      let answer: Answer;
      try {
        const token = await this.#bearer(baseUrl);
        answer = await this.#send(baseUrl, 'POST', request.path, token, correlationId, request.body, request.respondAsync);
      } catch (error) {
        lastFailure = failureName(error);
        this.#count(lastFailure);
        if (Date.now() >= giveUpAtMs) return { kind: 'unknown', operation, correlationId, reference, reason: lastFailure, atMs: Date.now() };
        await backoff(attempt);
        continue;
      }
      this.#count(String(answer.status));
      if (answer.status === 503) this.#onUnavailable(correlationId);
      if (answer.location) reference = answer.location.split('/').pop();
      const atMs = Date.now();
      if (answer.status === 200) {
        const done = String(answer.body?.operationReference ?? answer.body?.executionReference ?? '');
        return { kind: 'executed', operation, correlationId, reference: done, atMs, viaRepeat: false };
      }
      if (answer.status === 202 && reference) return { kind: 'accepted', operation, correlationId, reference, atMs };
      if (answer.status === 401) {
        this.#token = undefined;
        continue;
      }
      const code = errorCode(answer.body);
      if (answer.status === 409 && code?.endsWith('-409-001')) {
        // An earlier attempt reached the server although its answer was lost; on the first
        // attempt a fresh UUID is never a repeat, and the harness reports it as refused.
        const original = reference ?? /([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})/.exec(errorMessage(answer.body))?.[1];
        if (attempt > 0 && original) return this.#resolveRepeat(request, correlationId, original, baseUrl, giveUpAtMs);
      }
      if (answer.status < 500 && answer.status !== 429) return { kind: 'refused', operation, correlationId, status: answer.status, code, atMs };
      lastFailure = `HTTP ${answer.status}${code ? ` ${code}` : ''}`;
      if (Date.now() >= giveUpAtMs) return { kind: 'unknown', operation, correlationId, reference, reason: lastFailure, atMs: Date.now() };
      await backoff(attempt);
    }
  }

  /** GET /v1/operations/{reference} through the instances, until it answers or the budget runs out. */
  async operationStatus(reference: string, giveUpAtMs: number): Promise<{ status: string; error?: { status?: number; code?: string } } | undefined> {
    for (let attempt = 0; ; attempt += 1) {
      const baseUrl = this.#baseUrls[attempt % this.#baseUrls.length] ?? '';
      try {
        const answer = await this.#send(baseUrl, 'GET', `/v1/operations/${reference}`, await this.#bearer(baseUrl), randomUUID(), undefined, false);
        if (answer.status === 200) {
          const error = answer.body?.error as { status?: number; errordetail?: Array<{ code?: string }> } | undefined;
          return { status: String(answer.body?.status), error: error && { status: error.status, code: error.errordetail?.[0]?.code } };
        }
        if (answer.status === 401) this.#token = undefined;
        else if (answer.status < 500) return undefined;
      } catch {
        // Unreachable for now: try the other instance.
      }
      if (Date.now() >= giveUpAtMs) return undefined;
      await backoff(attempt);
    }
  }

  async #resolveRepeat(request: OperationRequest, correlationId: string, reference: string, baseUrl: string, giveUpAtMs: number): Promise<ClientOutcome> {
    const { operation } = request;
    // The repeat was refused: the original's outcome decides. It is read without a deadline of
    // its own beyond the operation's budget.
    const view = await this.operationStatus(reference, Math.max(giveUpAtMs, Date.now() + 30_000));
    const atMs = Date.now();
    if (view?.status === 'Executed') return { kind: 'executed', operation, correlationId, reference, atMs, viaRepeat: true };
    if (view?.status === 'Pending') return { kind: 'accepted', operation, correlationId, reference, atMs };
    if (view?.status === 'Rejected') return { kind: 'refused', operation, correlationId, status: view.error?.status ?? 409, code: view.error?.code, atMs };
    return { kind: 'unknown', operation, correlationId, reference, reason: `409 for ${reference} on ${baseUrl}, then its status ${view?.status ?? 'unreadable'}`, atMs };
  }

  async #bearer(baseUrl: string): Promise<string> {
    if (this.#token && this.#token.expiresAtMs - tokenMarginMs > Date.now()) return this.#token.value;
    const response = await fetch(`${baseUrl}/realms/${demo.realm}/protocol/openid-connect/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: demo.treasury.clientId, client_secret: demo.treasury.secret }),
      signal: AbortSignal.timeout(attemptTimeoutMs),
    });
    const body = (await response.json().catch(() => undefined)) as { access_token?: string; expires_in?: number } | undefined;
    this.#count(`token ${response.status}`);
    if (response.status !== 200 || !body?.access_token) throw new Error(`token request: HTTP ${response.status}`);
    this.#token = { value: body.access_token, expiresAtMs: Date.now() + (body.expires_in ?? 60) * 1000 };
    return body.access_token;
  }

  async #send(baseUrl: string, method: string, path: string, token: string, correlationId: string, body: unknown, respondAsync: boolean): Promise<Answer> {
    const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'application/json', 'x-correlation-id': correlationId };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (respondAsync) headers.prefer = 'respond-async';
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers,
      body: body === undefined ? null : JSON.stringify(body),
      signal: AbortSignal.timeout(attemptTimeoutMs),
    });
    const text = await response.text();
    let parsed: Record<string, unknown> | undefined;
    try {
      parsed = text === '' ? undefined : (JSON.parse(text) as Record<string, unknown>);
    } catch {
      parsed = undefined;
    }
    return { status: response.status, body: parsed, location: response.headers.get('location') };
  }
}

/** The first detail's code (`TD-409-001`), wherever the error record keeps it. */
function errorCode(body: Record<string, unknown> | undefined): string | undefined {
  const record = (typeof body?.error === 'object' && body.error !== null ? body.error : body) as { errordetail?: Array<{ code?: string }> } | undefined;
  return record?.errordetail?.[0]?.code;
}

function errorMessage(body: Record<string, unknown> | undefined): string {
  return JSON.stringify(body ?? {});
}

/** A failure's name for the counts: time-out, or the connection error's code. */
function failureName(error: unknown): string {
  const failure = error as { name?: string; message?: string; cause?: { code?: string; name?: string } };
  if (failure?.name === 'TimeoutError' || failure?.cause?.name === 'TimeoutError') return 'timeout';
  if (failure?.cause?.code) return failure.cause.code;
  return failure?.message?.startsWith('token request') ? failure.message : (failure?.message ?? String(error));
}

function backoff(attempt: number): Promise<void> {
  const ceiling = Math.min(backoffMaxMs, backoffBaseMs * 2 ** Math.min(attempt, 10));
  return sleep(ceiling / 2 + Math.random() * (ceiling / 2));
}
