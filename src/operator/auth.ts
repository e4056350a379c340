/**
 * Authentication of the operator API (issue 11): the console's session cookie, or a bearer token
 * of the auth service carrying the scope `coregate:operator` (verified like the business API's
 * tokens, by its TokenVerifier). Unsafe methods also need a JSON body and, with the cookie, a
 * same-origin `Origin` when the browser sends one (CSRF; SameSite=Strict is the first line).
 */
import type { Clock } from '../core/clock.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { TokenRejected, type TokenVerifier } from '../api/bearer-auth.js';
import { ApiError } from '../api/error-record.js';
import { challenge, type SenderConstraint, type TokenScheme } from '../api/sender-constraint.js';
import type { Store } from '../store/connect.js';
import { findOperatorSession } from '../store/operator-sessions.js';
import { OperatorError } from './errors.js';
import { operatorScope } from '../core/scopes.js';

export const sessionCookieName = 'coregate_operator';

/** Who is calling the operator API, and how. */
export type OperatorIdentity =
  | { via: 'session'; sessionValue: string; expiresAt: string; issuedBy: string }
  | { via: 'bearer'; clientId: string; issuer: string };

declare module 'fastify' {
  interface FastifyRequest {
    operator: OperatorIdentity | undefined;
  }
}

const unsafeMethods = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const bearerChallenge = 'Bearer realm="coregate-operator"';

export interface OperatorAuthOptions {
  store: Store;
  verifier: TokenVerifier;
  /** The service's public base URL: its origin is accepted in `Origin` besides the request's own. */
  publicUrl: () => string;
  /** The instance's clock: whether a console session has expired. */
  clock: Clock;
  /** DPoP- and certificate-bound tokens (docs/auth.md, "DPoP at the API"): checked here as at the business API. */
  constraint: SenderConstraint;
}

/** The value of one cookie in a Cookie header, or undefined. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const separator = part.indexOf('=');
    if (separator < 0) continue;
    if (part.slice(0, separator).trim() === name) return part.slice(separator + 1).trim();
  }
  return undefined;
}

export function operatorAuthHook(options: OperatorAuthOptions) {
  return async function authenticateOperator(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    const authorization = request.headers.authorization;
    if (authorization !== undefined) {
      request.operator = await bearerIdentity(options, request, authorization);
    } else {
      const value = readCookie(request.headers.cookie, sessionCookieName);
      const session = value === undefined ? undefined : await findOperatorSession(options.store.db, value, options.clock.now());
      if (value === undefined || session === undefined) {
        throw new OperatorError(401, value === undefined ? 'Log in to the console with the one-time URL of `coregate console`, or send a bearer token with the scope coregate:operator' : 'The console session has expired or was ended: run `coregate console` again for a new login URL', {
          'www-authenticate': bearerChallenge,
        });
      }
      request.operator = { via: 'session', sessionValue: value, expiresAt: new Date(session.expiresEpochMs).toISOString(), issuedBy: session.issuedBy };
    }
    if (!unsafeMethods.has(request.method)) return;
    if (request.operator.via === 'session') requireSameOrigin(request, options.publicUrl());
    // A DELETE carries no body, and no form or simple request can send one (a cross-origin
    // DELETE needs a CORS preflight this API never grants): only a body needs to be JSON.
    if (request.method === 'DELETE' && !hasBody(request)) return;
    const contentType = (request.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
    if (contentType !== 'application/json') throw new OperatorError(415, `${request.method} on the operator API needs Content-Type: application/json (send {} when there is nothing to say)`);
  };
}

function hasBody(request: FastifyRequest): boolean {
  const length = request.headers['content-length'];
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * An operator client's token: a bearer token, or a sender-constrained one presented as the
 * business API takes it (`Authorization: DPoP` with a proof, or over its certificate's connection).
 */
async function bearerIdentity(options: OperatorAuthOptions, request: FastifyRequest, authorization: string): Promise<OperatorIdentity> {
  const match = /^(Bearer|DPoP) ([^\s]+)$/i.exec(authorization);
  if (!match?.[2]) throw new OperatorError(401, 'The Authorization header must be "Bearer <token>" (or "DPoP <token>" with a DPoP proof)', { 'www-authenticate': `${bearerChallenge}, error="invalid_request"` });
  const scheme: TokenScheme = match[1]?.toLowerCase() === 'dpop' ? 'DPoP' : 'Bearer';
  const token = match[2];
  const schemeChallenge = (error: string, description: string, extra = '') => (scheme === 'DPoP' ? challenge('DPoP', error, description, extra) : `${bearerChallenge}, error="${error}"${extra}`);
  try {
    const principal = await options.verifier.verify(token);
    // Authenticated once the token's sender constraint holds and its proof is recorded used, as at the business API.
    if (options.constraint.needed(principal, scheme)) await options.constraint.check(request, principal, scheme, token);
    if (!principal.scopes.has(operatorScope)) {
      throw new OperatorError(403, `The token lacks the scope ${operatorScope}`, { 'www-authenticate': schemeChallenge('insufficient_scope', `The token lacks the scope ${operatorScope}`, `, scope="${operatorScope}"`) });
    }
    return { via: 'bearer', clientId: principal.clientId, issuer: principal.issuer };
  } catch (error) {
    if (error instanceof TokenRejected) throw new OperatorError(401, error.message, { 'www-authenticate': schemeChallenge('invalid_token', error.message) });
    // The sender constraint's refusals (401, with their DPoP or Bearer challenge) in the operator API's shape.
    if (error instanceof ApiError) throw new OperatorError(error.entry.status, error.message, Object.fromEntries(Object.entries(error.headers).map(([name, value]) => [name.toLowerCase(), value])));
    throw error;
  }
}

/**
 * A browser sends `Origin` on every cross-origin POST; a page of another site riding on the
 * session cookie is refused here even where SameSite would not stop it (an old browser, a
 * sibling subdomain). `Sec-Fetch-Site: cross-site` is refused as well.
 */
function requireSameOrigin(request: FastifyRequest, publicUrl: string): void {
  const fetchSite = request.headers['sec-fetch-site'];
  if (fetchSite === 'cross-site' || fetchSite === 'same-site') throw new OperatorError(403, 'A cross-site request may not use the console session');
  const origin = request.headers.origin;
  if (origin === undefined) return;
  const own = new Set([`${request.protocol}://${request.host}`]);
  try {
    if (publicUrl !== '') own.add(new URL(publicUrl).origin);
  } catch {
    // A malformed public URL names no origin.
  }
  if (!own.has(origin)) throw new OperatorError(403, `Origin ${origin} is not this service's origin: the console session works only from the console`);
}
