/**
 * The coregate client: typed calls of the business API with the token rules of docs/auth.md, "A
 * client's secret and tokens" done once. Safe retries: a call keeps one correlation id across its
 * retries, so a retry can never execute twice, and a 409 that answers its own retry resolves to the
 * original result through GET /v1/operations/{reference}.
 */
import { merchandisingLoanCalls, pending as loanInstallmentPending } from '../operations/loan-installment-execution/sdk.js';
import type { OperationView } from '../operations/schemas/operation-view.js';
import { pending as termDepositPending, termDepositCalls } from '../operations/term-deposit-initiation/sdk.js';
import type { CallOptions, Execution, PendingBody, Read } from './calls.js';
import { apiErrorFrom, CoregateApiError, CoregateNetworkError, CoregateTimeoutError, networkCause } from './errors.js';
import { TokenProvider, type SessionCredentials, type SessionIdentity } from './token-provider.js';
import type { ClientPrivateKey, DpopAlgorithm } from './proof-of-possession.js';
import { assertServerSide } from './server-side.js';

export interface RetryOptions {
  /** Attempts in all, the first included (default 3, at most 10). */
  attempts?: number;
  /** First back-off delay (default 200 ms), doubled each retry, with full jitter. */
  baseDelayMs?: number;
  /** Longest back-off delay (default 2000 ms). */
  maxDelayMs?: number;
}

export interface CoregateClientOptions {
  /** `{base_url}` of the business API, e.g. https://api.bank.example. */
  baseUrl: string;
  /** `{auth_url}`; defaults to baseUrl (one process serves both by default). */
  authUrl?: string;
  realm: string;
  clientId: string;
  /** Server side only: the SDK refuses to run with a secret in a browser. Or `privateKey`, never both. */
  clientSecret?: string;
  /** FAPI 2.0 (docs/auth.md, "The SDK and the CLI"): the client's private key, for `private_key_jwt` instead of a secret. */
  privateKey?: ClientPrivateKey;
  /**
   * DPoP-bound tokens (RFC 9449): each session gets its own key pair (ES256 unless an algorithm is
   * given), its tokens are bound to it, and every call carries a proof of it.
   */
  dpop?: boolean | DpopAlgorithm;
  /** Per-call time-out (default 30 s). */
  timeoutMs?: number;
  retry?: RetryOptions;
  /** Seconds before expiry at which a cached token is renewed (default 5). */
  tokenRefreshMarginSeconds?: number;
  /** Time-out of a token request (default 10 s); a call's own time-out also bounds its wait. */
  tokenTimeoutMs?: number;
  /** The clock the token cache reads to decide when to renew, and assertions' and proofs' `iat` (Date.now by default; tests move a fake one). */
  now?: () => number;
  /**
   * Waits out a retry's back-off: resolves after `delayMs`, rejects with the signal's reason when it
   * aborts (a timer by default; a test records the delays instead of waiting them).
   */
  sleep?: (delayMs: number, signal: AbortSignal | undefined) => Promise<void>;
  fetch?: typeof fetch;
  /** Receives one event per HTTP exchange: never a secret, a token or a body. */
  onEvent?: (event: SdkEvent) => void;
}

export interface SdkEvent {
  method: string;
  path: string;
  status: number | undefined;
  correlationId: string | undefined;
  attempt: number;
  durationMs: number;
}

export type { CallOptions, Execution, Read } from './calls.js';
export type { TermDepositInitiation } from '../operations/term-deposit-initiation/sdk.js';
export type { LoanInstallmentExecution } from '../operations/loan-installment-execution/sdk.js';

/**
 * The SDK's surface of each operation (its folder's sdk.ts): one group of calls per operation on
 * the client and its sessions, and the 202 body of a retry that met its pending original.
 */
const pendingBodies: readonly PendingBody[] = [termDepositPending, loanInstallmentPending];

interface Exchange {
  status: number;
  body: unknown;
  headers: Headers;
  correlationId: string | undefined;
}

const retryableStatuses = new Set([502, 503, 504]);
const attemptsMax = 10;

/** Calls bound to one user session: tokens are never shared with another session. */
export class CoregateSession {
  readonly #client: CoregateClient;
  readonly #identity: SessionIdentity;
  /** Term deposits: initiate, retrieve (src/operations/term-deposit-initiation/sdk.ts). */
  readonly termDeposits: ReturnType<typeof termDepositCalls>;
  /** Merchandising loans: executeInstallment (src/operations/loan-installment-execution/sdk.ts). */
  readonly merchandisingLoans: ReturnType<typeof merchandisingLoanCalls>;

  constructor(client: CoregateClient, identity: SessionIdentity) {
    this.#client = client;
    this.#identity = { ...identity };
    this.termDeposits = termDepositCalls(client, this.#identity);
    this.merchandisingLoans = merchandisingLoanCalls(client, this.#identity);
  }

  get identity(): Readonly<SessionIdentity> {
    return this.#identity;
  }

  readonly operations = {
    get: (reference: string, options: CallOptions = {}): Promise<Read<OperationView>> =>
      this.#client.read(this.#identity, `/v1/operations/${encodeURIComponent(reference)}`, options) as Promise<Read<OperationView>>,
  };
}

export class CoregateClient {
  readonly #baseUrl: string;
  readonly #tokens: TokenProvider;
  readonly #timeoutMs: number;
  readonly #retry: Required<RetryOptions>;
  readonly #fetch: typeof fetch;
  readonly #onEvent: ((event: SdkEvent) => void) | undefined;
  readonly #sleep: (delayMs: number, signal: AbortSignal | undefined) => Promise<void>;
  readonly #clientId: string;
  readonly #now: () => number;
  readonly #default: CoregateSession;
  /** The business API's last DPoP nonce (RFC 9449 §9: its `DPoP-Nonce` header), sent in the next proofs. */
  #resourceNonce: string | undefined;

  constructor(options: CoregateClientOptions) {
    assertServerSide('CoregateClient');
    this.#baseUrl = options.baseUrl.replace(/\/+$/, '');
    const authUrl = (options.authUrl ?? options.baseUrl).replace(/\/+$/, '');
    this.#fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.#clientId = options.clientId;
    this.#now = options.now ?? Date.now;
    this.#tokens = new TokenProvider({
      tokenUrl: `${authUrl}/realms/${encodeURIComponent(options.realm)}/protocol/openid-connect/token`,
      clientId: options.clientId,
      clientSecret: options.clientSecret,
      privateKey: options.privateKey,
      dpop: options.dpop,
      fetch: this.#fetch,
      ...(options.tokenRefreshMarginSeconds === undefined ? {} : { refreshMarginSeconds: options.tokenRefreshMarginSeconds }),
      ...(options.tokenTimeoutMs === undefined ? {} : { timeoutMs: options.tokenTimeoutMs }),
      ...(options.now === undefined ? {} : { now: options.now }),
    });
    this.#timeoutMs = options.timeoutMs ?? 30_000;
    this.#retry = {
      attempts: Math.min(Math.max(1, options.retry?.attempts ?? 3), attemptsMax),
      baseDelayMs: options.retry?.baseDelayMs ?? 200,
      maxDelayMs: options.retry?.maxDelayMs ?? 2_000,
    };
    this.#onEvent = options.onEvent;
    this.#sleep = options.sleep ?? timerSleep;
    this.#default = new CoregateSession(this, {});
  }

  /** A client bound to one user session: each logged-in user has a token of its own (docs/auth.md, "A client's secret and tokens"). */
  session(identity: SessionIdentity): CoregateSession {
    return new CoregateSession(this, identity);
  }

  /** The client's own session: the application's technical user, if it has one. */
  get termDeposits(): CoregateSession['termDeposits'] {
    return this.#default.termDeposits;
  }

  get merchandisingLoans(): CoregateSession['merchandisingLoans'] {
    return this.#default.merchandisingLoans;
  }

  get operations(): CoregateSession['operations'] {
    return this.#default.operations;
  }

  /** The access token of a session (cached per the token rules). */
  token(identity: SessionIdentity = {}): Promise<string> {
    return this.#tokens.token(identity);
  }

  toJSON(): Record<string, unknown> {
    return { baseUrl: this.#baseUrl, clientId: this.#clientId };
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `CoregateClient { baseUrl: '${this.#baseUrl}', clientId: '${this.#clientId}' }`;
  }

  /** @internal A business execution: 200 / 202 / 204, or a thrown CoregateApiError. */
  async execute(identity: SessionIdentity, method: string, path: string, body: unknown, options: CallOptions): Promise<Execution<unknown, unknown>> {
    const generated = options.correlationId === undefined;
    const correlationId = options.correlationId ?? crypto.randomUUID();
    const prefer = [options.respondAsync ? 'respond-async' : '', options.returnMinimal ? 'return=minimal' : ''].filter(Boolean).join(', ');
    let retried = false;
    const exchange = await this.#withRetries(identity, method, path, body, { ...options, correlationId, generated }, prefer, () => {
      retried = true;
    });
    if (exchange.status === 200) return { status: 200, result: exchange.body, correlationId };
    if (exchange.status === 204) return { status: 204, result: undefined, correlationId };
    if (exchange.status === 202) {
      const location = exchange.headers.get('location') ?? '';
      return { status: 202, accepted: exchange.body, reference: location.split('/').pop() ?? '', correlationId };
    }
    const error = apiErrorFrom(exchange.body, exchange.status, correlationId) ?? new CoregateApiError({ status: exchange.status, reason: 'UNKNOWN', message: `HTTP ${exchange.status}`, path: `${method} ${path}` }, correlationId, false);
    if (retried && error.code?.endsWith('-409-001')) return this.#resolveOwnDuplicate(identity, exchange, error, options);
    throw error;
  }

  /** @internal A read: its 200 body as `result`, or a thrown CoregateApiError. */
  async read(identity: SessionIdentity, path: string, options: CallOptions): Promise<Read<unknown>> {
    const correlationId = options.correlationId ?? crypto.randomUUID();
    const exchange = await this.#withRetries(identity, 'GET', path, undefined, { ...options, correlationId }, '', () => {});
    if (exchange.status === 200) return { status: 200, result: exchange.body, correlationId };
    throw apiErrorFrom(exchange.body, exchange.status, correlationId) ?? new CoregateApiError({ status: exchange.status, reason: 'UNKNOWN', message: `HTTP ${exchange.status}`, path: `GET ${path}` }, correlationId, false);
  }

  /**
   * Our earlier attempt reached the server although we saw no answer: the 409 names that
   * attempt's operation, whose outcome is the call's outcome.
   */
  async #resolveOwnDuplicate(identity: SessionIdentity, exchange: Exchange, error: CoregateApiError, options: CallOptions): Promise<Execution<unknown, unknown>> {
    const reference = (exchange.headers.get('location') ?? '').split('/').pop() || /operation ([0-9a-f-]{36})/.exec(error.message)?.[1];
    if (!reference) throw error;
    const view = (await this.read(identity, `/v1/operations/${encodeURIComponent(reference)}`, { ...options, correlationId: undefined })).result as OperationView;
    const correlationId = error.correlationId ?? '';
    if (view.status === 'Executed') return view.result === undefined ? { status: 204, result: undefined, correlationId } : { status: 200, result: view.result, correlationId };
    if (view.status === 'Pending') return { status: 202, accepted: pendingBodies.find((body) => body.operation === view.operation)?.accepted(reference, new Date()), reference, correlationId };
    throw (view.error && apiErrorFrom(view.error, view.error.status, correlationId)) ?? error;
  }

  async #withRetries(
    identity: SessionIdentity,
    method: string,
    path: string,
    body: unknown,
    options: CallOptions & { correlationId: string; generated?: boolean },
    prefer: string,
    onRetry: () => void,
  ): Promise<Exchange> {
    let renewedAfter401 = false;
    let nonceRetried = false;
    const timeoutMs = options.timeoutMs ?? this.#timeoutMs;
    for (let attempt = 1; ; attempt += 1) {
      const credentials = await this.#token(identity, options.signal, timeoutMs);
      let exchange: Exchange;
      try {
        exchange = await this.#send(method, path, body, credentials, options, prefer, attempt);
      } catch (error) {
        if (error instanceof CoregateNetworkError && attempt < this.#retry.attempts && !options.signal?.aborted) {
          onRetry();
          await this.#backoff(attempt, options.signal);
          continue;
        }
        throw error;
      }
      if (exchange.status === 401 && credentials.dpop !== undefined && !nonceRetried && asksForNonce(exchange)) {
        // RFC 9449 §9: the realm demands the server's nonce in proofs; the refused request executed
        // nothing (it was not authenticated), and it is repeated once with a proof carrying it.
        nonceRetried = true;
        attempt -= 1;
        continue;
      }
      if (exchange.status === 401 && !renewedAfter401) {
        // The token may have been revoked or rotated away: renew once and repeat.
        renewedAfter401 = true;
        this.#tokens.invalidate(identity, credentials.accessToken);
        attempt -= 1;
        continue;
      }
      if (retryableStatuses.has(exchange.status) && attempt < this.#retry.attempts) {
        onRetry();
        await this.#backoff(attempt, options.signal);
        continue;
      }
      if (retryableStatuses.has(exchange.status) && exchange.status !== 502 && exchange.status !== 504) {
        throw new CoregateNetworkError(`${method} ${path}: HTTP ${exchange.status} after ${attempt} attempts`);
      }
      return exchange;
    }
  }

  /** The session's token, waited for no longer than the call may last. */
  async #token(identity: SessionIdentity, signal: AbortSignal | undefined, timeoutMs: number): Promise<SessionCredentials> {
    const deadline = AbortSignal.timeout(timeoutMs);
    try {
      return await this.#tokens.credentials(identity, anySignal(signal ? [deadline, signal] : [deadline]));
    } catch (error) {
      if (signal?.aborted) throw signal.reason ?? error;
      if (deadline.aborted) throw new CoregateTimeoutError(`no token within the call's time-out of ${timeoutMs} ms`);
      throw error;
    }
  }

  async #send(
    method: string,
    path: string,
    body: unknown,
    credentials: SessionCredentials,
    options: CallOptions & { correlationId: string; generated?: boolean },
    prefer: string,
    attempt: number,
  ): Promise<Exchange> {
    const { accessToken, dpop } = credentials;
    const headers: Record<string, string> = {
      authorization: `${dpop === undefined ? 'Bearer' : 'DPoP'} ${accessToken}`,
      accept: 'application/json',
      'x-correlation-id': options.correlationId,
    };
    // A DPoP-bound token: a new proof of the session's key for each attempt (its jti is used once).
    if (dpop !== undefined) headers.dpop = await dpop.proof(method, `${this.#baseUrl}${path}`, this.#now(), { accessToken, nonce: this.#resourceNonce });
    if (options.generated) headers['x-correlation-id-generated'] = 'true';
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (prefer) headers.prefer = prefer;
    if (options.channel) headers['x-channel'] = options.channel;
    const timeoutMs = options.timeoutMs ?? this.#timeoutMs;
    const signals = [AbortSignal.timeout(timeoutMs), ...(options.signal ? [options.signal] : [])];
    const started = Date.now();
    let response: Response;
    let text: string;
    try {
      response = await this.#fetch(`${this.#baseUrl}${path}`, {
        method,
        headers,
        body: body === undefined ? null : JSON.stringify(body),
        signal: anySignal(signals),
      });
      // The body is read under the same signals: a body that stalls is a time-out too.
      text = await response.text();
    } catch (error) {
      this.#emit(method, path, undefined, options.correlationId, attempt, started);
      if (options.signal?.aborted) throw options.signal.reason ?? error;
      if ((error as Error)?.name === 'TimeoutError') throw new CoregateTimeoutError(`${method} ${path} timed out after ${timeoutMs} ms`);
      throw new CoregateNetworkError(`${method} ${this.#baseUrl}${path} failed: ${networkCause(error)}`, { cause: error });
    }
    this.#emit(method, path, response.status, options.correlationId, attempt, started);
    // A server that demands nonces may hand out the next one on any answer (RFC 9449 §8.2).
    this.#resourceNonce = response.headers.get('dpop-nonce') ?? this.#resourceNonce;
    let parsed: unknown;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    return { status: response.status, body: parsed, headers: response.headers, correlationId: response.headers.get('x-correlation-id') ?? options.correlationId };
  }

  #emit(method: string, path: string, status: number | undefined, correlationId: string, attempt: number, started: number): void {
    this.#onEvent?.({ method, path, status, correlationId, attempt, durationMs: Date.now() - started });
  }

  /** Exponential back-off with full jitter, bounded by maxDelayMs; stops early on abort. */
  #backoff(attempt: number, signal: AbortSignal | undefined): Promise<void> {
    const ceiling = Math.min(this.#retry.maxDelayMs, this.#retry.baseDelayMs * 2 ** (attempt - 1));
    return this.#sleep(Math.random() * ceiling, signal);
  }
}

function timerSleep(delayMs: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, delayMs);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(signal.reason);
    }, { once: true });
  });
}

/** AbortSignal.any is Node 20.3+; this keeps the SDK independent of it. */
function anySignal(signals: AbortSignal[]): AbortSignal {
  if (signals.length === 1 && signals[0]) return signals[0];
  const controller = new AbortController();
  for (const signal of signals) {
    if (signal.aborted) {
      controller.abort(signal.reason);
      break;
    }
    signal.addEventListener('abort', () => controller.abort(signal.reason), { once: true });
  }
  return controller.signal;
}

/** A 401 whose challenge is `DPoP error="use_dpop_nonce"` with a `DPoP-Nonce` to use (RFC 9449 §9). */
function asksForNonce(exchange: Exchange): boolean {
  return exchange.headers.get('dpop-nonce') !== null && /\berror="use_dpop_nonce"/.test(exchange.headers.get('www-authenticate') ?? '');
}
