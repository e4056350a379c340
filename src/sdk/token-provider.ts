/**
 * Tokens per SPEC Authentication §6: one cached token per session key (realm, client, username,
 * workstation, scope), reused while valid, renewed when expired or within a margin of its
 * expiry, with concurrent callers sharing one in-flight request. A token is never used for
 * another session.
 */
import { CoregateAuthError, CoregateNetworkError, CoregateTimeoutError, networkCause } from './errors.js';
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
  clientSecret: string;
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
}

interface CacheEntry {
  token?: CachedToken;
  inflight?: Promise<CachedToken>;
}

/** Sessions cached at most: the least recently used one is dropped beyond it. */
const sessionsMax = 10_000;
const defaultMarginSeconds = 5;
const defaultTimeoutMs = 10_000;

export class TokenProvider {
  readonly #tokenUrl: string;
  readonly #clientId: string;
  readonly #clientSecret: string;
  readonly #marginSeconds: number;
  readonly #timeoutMs: number;
  readonly #fetch: typeof fetch;
  readonly #now: () => number;
  readonly #cache = new Map<string, CacheEntry>();

  constructor(options: TokenProviderOptions) {
    assertServerSide('TokenProvider');
    if (!options.clientSecret) throw new TypeError('coregate SDK: clientSecret is required');
    this.#tokenUrl = options.tokenUrl;
    this.#clientId = options.clientId;
    this.#clientSecret = options.clientSecret;
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
    const key = this.#key(session);
    const entry = this.#entry(key);
    if (entry.token && this.#now() < entry.token.renewAtMs) return entry.token.accessToken;
    if (!entry.inflight) {
      entry.inflight = this.#request(session).then(
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
    return (await untilAborted(entry.inflight, signal)).accessToken;
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

  async #request(session: SessionIdentity): Promise<CachedToken> {
    const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: this.#clientId, client_secret: this.#clientSecret });
    if (session.username) form.set('username', session.username);
    if (session.workstation) form.set('workstation', session.workstation);
    if (session.scope) form.set('scope', session.scope);
    const requestedAt = this.#now();
    let response: Response;
    try {
      response = await this.#fetch(this.#tokenUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: form.toString(),
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
    } catch (error) {
      if ((error as Error)?.name === 'TimeoutError') throw new CoregateTimeoutError(`token request to ${this.#tokenUrl} timed out after ${this.#timeoutMs} ms`);
      throw new CoregateNetworkError(`token request to ${this.#tokenUrl} failed: ${networkCause(error)}`, { cause: error });
    }
    const body = (await response.json().catch(() => ({}))) as Record<string, unknown>;
    if (!response.ok || typeof body.access_token !== 'string') {
      throw new CoregateAuthError(response.status, String(body.error ?? 'invalid_response'), String(body.error_description ?? ''));
    }
    const expiresInSeconds = typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in : 60;
    // Never so large a margin that a token would be renewed on every call.
    const marginSeconds = Math.min(this.#marginSeconds, Math.floor(expiresInSeconds / 2));
    return { accessToken: body.access_token, renewAtMs: requestedAt + (expiresInSeconds - marginSeconds) * 1000 };
  }
}
