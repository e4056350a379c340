/**
 * Tokens as docs/auth.md, "A client's secret and tokens" says: one cached token per session key
 * (realm, client, username, workstation, scope), reused while valid, renewed when expired or within
 * a margin of its expiry, with concurrent callers sharing one in-flight request. A token is never
 * used for another session.
 *
 * The client proves itself with its secret or, for FAPI 2.0 (docs/auth.md, "private_key_jwt"), with
 * a client assertion signed by its private key (`private_key_jwt`), a fresh one per token request.
 * With `dpop`, each session has its own DPoP key pair, made once: its tokens are bound to it, and a
 * realm that asks for a server nonce (`use_dpop_nonce`) is asked again once with it.
 */
import { CoregateAuthError, CoregateNetworkError, CoregateTimeoutError, networkCause } from './errors.js';
import type { ClientPrivateKey, ClientSigningKey, DpopAlgorithm, DpopKey } from './proof-of-possession.js';
import { clientSigningKey } from './private-key.js';

/** jose loads with the first assertion or proof: a client with a secret and bearer tokens never needs it (nor the CLI's other commands). */
const proofs = () => import('./proof-of-possession.js');
import { assertServerSide, untilAborted } from './server-side.js';

export interface SessionIdentity {
  username?: string | undefined;
  workstation?: string | undefined;
  /** Narrows the token to these scopes (space-separated), e.g. "termDeposit:retrieve". */
  scope?: string | undefined;
}

export interface TokenProviderOptions {
  /** `{auth_url}/realms/{realm}/protocol/openid-connect/token`. */
  tokenUrl: string;
  clientId: string;
  /** The client's secret; or `privateKey`, never both. */
  clientSecret?: string | undefined;
  /** The client's private key (`private_key_jwt`); or `clientSecret`, never both. */
  privateKey?: ClientPrivateKey | undefined;
  /** DPoP-bound tokens (RFC 9449): true for ES256 keys, or the algorithm of the sessions' keys. */
  dpop?: boolean | DpopAlgorithm | undefined;
  /** Renew this many seconds before expiry (default 5), capped at half the token's lifetime. */
  refreshMarginSeconds?: number;
  /** Token request time-out (default 10 s). */
  timeoutMs?: number;
  fetch?: typeof fetch;
  /** Clock, for tests. */
  now?: () => number;
}

interface CachedToken {
  accessToken: string;
  /** Epoch ms after which the token is renewed (expiry minus the margin). */
  renewAtMs: number;
  /** The session's DPoP key when the token is bound to it (token_type DPoP). */
  dpop: DpopKey | undefined;
}

interface CacheEntry {
  token?: CachedToken;
  inflight?: Promise<CachedToken>;
  /** The session's DPoP key pair, made with its first token and kept for the session's life. */
  dpopKey?: Promise<DpopKey>;
}

/** A session's token and, when it is DPoP-bound, the key its proofs are signed with. */
export interface SessionCredentials {
  accessToken: string;
  dpop: DpopKey | undefined;
}

/** Sessions cached at most: the least recently used one is dropped beyond it. */
const sessionsMax = 10_000;
const defaultMarginSeconds = 5;
const defaultTimeoutMs = 10_000;

export class TokenProvider {
  readonly #tokenUrl: string;
  readonly #clientId: string;
  readonly #clientSecret: string | undefined;
  readonly #privateKey: ClientSigningKey | undefined;
  readonly #dpopAlgorithm: DpopAlgorithm | undefined;
  /** The realm's last DPoP nonce (DPoP-Nonce), sent with the next proofs. */
  #nonce: string | undefined;
  readonly #marginSeconds: number;
  readonly #timeoutMs: number;
  readonly #fetch: typeof fetch;
  readonly #now: () => number;
  readonly #cache = new Map<string, CacheEntry>();

  constructor(options: TokenProviderOptions) {
    assertServerSide('TokenProvider');
    if (!options.clientSecret === !options.privateKey) throw new TypeError('coregate SDK: give clientSecret or privateKey (private_key_jwt), one of them');
    this.#tokenUrl = options.tokenUrl;
    this.#clientId = options.clientId;
    this.#clientSecret = options.clientSecret || undefined;
    // A key the SDK cannot sign with is refused here, not at the first token request.
    this.#privateKey = options.privateKey === undefined ? undefined : clientSigningKey(options.privateKey);
    this.#dpopAlgorithm = options.dpop === true ? 'ES256' : options.dpop || undefined;
    this.#marginSeconds = Math.max(0, options.refreshMarginSeconds ?? defaultMarginSeconds);
    this.#timeoutMs = options.timeoutMs ?? defaultTimeoutMs;
    this.#fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.#now = options.now ?? Date.now;
  }

  /**
   * A valid token for the session: the cached one, or one fresh request shared by concurrent
   * callers. `signal` ends this caller's wait (its call was aborted or timed out), not the request.
   */
  async token(session: SessionIdentity = {}, signal?: AbortSignal): Promise<string> {
    return (await this.credentials(session, signal)).accessToken;
  }

  /** The session's token and its DPoP key (when bound): what a call needs to present it. */
  async credentials(session: SessionIdentity = {}, signal?: AbortSignal): Promise<SessionCredentials> {
    const key = this.#key(session);
    const entry = this.#entry(key);
    if (entry.token && this.#now() < entry.token.renewAtMs) return entry.token;
    if (!entry.inflight) {
      entry.inflight = this.#request(session, entry).then(
        (token) => {
          entry.token = token;
          entry.inflight = undefined;
          return token;
        },
        (error: unknown) => {
          entry.inflight = undefined;
          throw error;
        },
      );
    }
    return untilAborted(entry.inflight, signal);
  }

  /** Drops the session's token if it is still `accessToken` (after a 401 the next call renews). */
  invalidate(session: SessionIdentity, accessToken: string): void {
    const entry = this.#cache.get(this.#key(session));
    if (entry?.token?.accessToken === accessToken) entry.token = undefined;
  }

  get [Symbol.toStringTag](): string {
    return 'TokenProvider';
  }

  toJSON(): Record<string, unknown> {
    return { tokenUrl: this.#tokenUrl, clientId: this.#clientId, sessions: this.#cache.size };
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `TokenProvider { tokenUrl: '${this.#tokenUrl}', clientId: '${this.#clientId}', sessions: ${this.#cache.size} }`;
  }

  #key(session: SessionIdentity): string {
    return JSON.stringify([this.#tokenUrl, this.#clientId, session.username ?? '', session.workstation ?? '', session.scope ?? '']);
  }

  #entry(key: string): CacheEntry {
    let entry = this.#cache.get(key);
    if (entry) {
      // Map order is insertion order: re-inserting marks the session as recently used.
      this.#cache.delete(key);
    } else {
      entry = {};
    }
    this.#cache.set(key, entry);
    if (this.#cache.size > sessionsMax) {
      const oldest = this.#cache.keys().next().value;
      if (oldest !== undefined) this.#cache.delete(oldest);
    }
    return entry;
  }

  /** The realm's issuer identifier: a client assertion's audience. */
  get #issuer(): string {
    return this.#tokenUrl.replace(/\/protocol\/openid-connect\/token$/, '');
  }

  async #request(session: SessionIdentity, entry: CacheEntry): Promise<CachedToken> {
    const algorithm = this.#dpopAlgorithm;
    const dpop = algorithm === undefined ? undefined : await (entry.dpopKey ??= proofs().then(({ DpopKey }) => DpopKey.generate(algorithm)));
    const requestedAt = this.#now();
    let { response, body } = await this.#post(session, dpop);
    if (response.status === 400 && body.error === 'use_dpop_nonce' && dpop !== undefined && response.headers.get('dpop-nonce')) {
      // RFC 9449 §8: the realm wants its nonce in the proof; asked again once, with a new proof.
      ({ response, body } = await this.#post(session, dpop));
    }
    if (!response.ok || typeof body.access_token !== 'string') {
      throw new CoregateAuthError(response.status, String(body.error ?? 'invalid_response'), String(body.error_description ?? ''));
    }
    const bound = String(body.token_type).toLowerCase() === 'dpop';
    const expiresInSeconds = typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in : 60;
    // Never so large a margin that a token would be renewed on every call.
    const marginSeconds = Math.min(this.#marginSeconds, Math.floor(expiresInSeconds / 2));
    return { accessToken: body.access_token, renewAtMs: requestedAt + (expiresInSeconds - marginSeconds) * 1000, dpop: bound ? dpop : undefined };
  }

  async #post(session: SessionIdentity, dpop: DpopKey | undefined): Promise<{ response: Response; body: Record<string, unknown> }> {
    const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: this.#clientId });
    if (this.#privateKey !== undefined) {
      form.set('client_assertion_type', 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer');
      form.set('client_assertion', await (await proofs()).clientAssertion(this.#clientId, this.#issuer, this.#privateKey, this.#now()));
    } else {
      form.set('client_secret', this.#clientSecret ?? '');
    }
    if (session.username) form.set('username', session.username);
    if (session.workstation) form.set('workstation', session.workstation);
    if (session.scope) form.set('scope', session.scope);
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
    if (dpop !== undefined) headers.dpop = await dpop.proof('POST', this.#tokenUrl, this.#now(), { nonce: this.#nonce });
    let response: Response;
    try {
      response = await this.#fetch(this.#tokenUrl, { method: 'POST', headers, body: form.toString(), signal: AbortSignal.timeout(this.#timeoutMs) });
    } catch (error) {
      if ((error as Error)?.name === 'TimeoutError') throw new CoregateTimeoutError(`token request to ${this.#tokenUrl} timed out after ${this.#timeoutMs} ms`);
      throw new CoregateNetworkError(`token request to ${this.#tokenUrl} failed: ${networkCause(error)}`, { cause: error });
    }
    this.#nonce = response.headers.get('dpop-nonce') ?? this.#nonce;
    return { response, body: (await response.json().catch(() => ({}))) as Record<string, unknown> };
  }
}
