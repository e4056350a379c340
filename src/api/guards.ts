/**
 * The business API's request guards, run before the body is even parsed (onRequest): the
 * correlation id, the Bearer token (401), the scope (403) and the token's user and workstation
 * against the core's directory (403). RFC 6750 WWW-Authenticate headers on 401 and 403.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { errorCatalogue as E } from '../core/error-catalogue.js';
import type { Directory, DirectorySnapshot } from '../cache/directory-snapshot.js';
import type { DirectoryStatus } from '../core/port.js';
import { TokenRejected, type Principal, type TokenVerifier } from './bearer-auth.js';
import { challenge, type SenderConstraint, type TokenScheme } from './sender-constraint.js';
import { ApiError } from './error-record.js';
import type { BusinessRouteConfig } from './request-context.js';
import type { RateLimiter } from './rate-limit.js';

/** 1-128 characters of A-Z a-z 0-9 . _ : - (docs/api.md, "Correlation ids and duplicates"). */
const correlationIdPattern = /^[A-Za-z0-9._:-]{1,128}$/;
const realmName = 'coregate';
/**
 * Sent by the SDK and the CLI with the id they made for a call: the id keeps the call's retries
 * together (a retry of an executed call is a 409 naming it), and the duplicate window still
 * protects against the same call made twice by accident, as for a request without an id.
 */
export const generatedCorrelationHeader = 'x-correlation-id-generated';

export function readCorrelation(request: FastifyRequest, reply: FastifyReply): void {
  const header = request.headers['x-correlation-id'];
  const supplied = header !== undefined;
  const value = Array.isArray(header) ? undefined : header;
  const valid = !supplied || (value !== undefined && correlationIdPattern.test(value));
  const id = supplied && valid && value !== undefined ? value : randomUUID();
  const generated = supplied && request.headers[generatedCorrelationHeader] === 'true';
  request.correlation = { id, supplied, valid, generated };
  if (valid) void reply.header('x-correlation-id', id);
}

const tokenHint = 'get one with POST /realms/{realm}/protocol/openid-connect/token (grant_type=client_credentials)';

/** What is wrong with the Authorization header, and how to get it right (issue 12: an empty $TOKEN). */
function authorizationProblem(authorization: string | undefined): string {
  if (authorization === undefined) return `A Bearer token is required: send "Authorization: Bearer <token>"; ${tokenHint}`;
  if (/^(Bearer|DPoP)\s*$/i.test(authorization)) return `The Authorization header has no token after "${authorization.trim()}" (an empty shell variable such as $TOKEN?); ${tokenHint}`;
  return 'The Authorization header is not a Bearer token: send "Authorization: Bearer <token>"';
}

/**
 * Authenticates and authorizes a business request (401, 429, 403, in that order). Answers
 * undefined when it could decide at once (a token verified before, no rate limit, the directory
 * fresh in its snapshot: the common case, with no promise), a promise otherwise; throws the
 * refusal either way.
 */
export function authenticate(
  request: FastifyRequest,
  verifier: TokenVerifier,
  constraint: SenderConstraint,
  directory: DirectorySnapshot,
  config: BusinessRouteConfig,
  limiter: RateLimiter,
): Promise<void> | undefined {
  const { scheme, token } = presentedToken(request);
  const cached = rejectedAsInvalidToken(() => verifier.verifyCached(token), scheme);
  if (cached === undefined || limiter.enabled || constraint.needed(cached, scheme)) return authenticateSlowly(request, scheme, token, verifier, constraint, directory, config, limiter);
  request.principal = cached;
  if (config.scope !== undefined) requireScope(request, config.scope);
  return checkDirectory(request, directory);
}

async function authenticateSlowly(
  request: FastifyRequest,
  scheme: TokenScheme,
  token: string,
  verifier: TokenVerifier,
  constraint: SenderConstraint,
  directory: DirectorySnapshot,
  config: BusinessRouteConfig,
  limiter: RateLimiter,
): Promise<void> {
  let principal: Principal;
  try {
    principal = await verifier.verify(token);
  } catch (error) {
    throw invalidTokenError(error, scheme);
  }
  // Authenticated only once a sender-constrained token proved its key and its proof was recorded
  // used (sender-constraint.ts): until then the request names no client, so it is charged to no
  // rate limit and kept in no request log or audit trail (each reads request.principal).
  if (constraint.needed(principal, scheme)) await constraint.check(request, principal, scheme, token);
  request.principal = principal;
  const allowance = await limiter.take(request.principal.clientKey);
  if (!allowance.allowed) {
    throw new ApiError(E.tooManyRequests, `Too many requests from client ${request.principal.clientId}; retry after ${allowance.retryAfterSeconds} s`, {
      'Retry-After': String(allowance.retryAfterSeconds),
    });
  }
  if (config.scope !== undefined) requireScope(request, config.scope);
  await checkDirectory(request, directory);
}

/** The token of the request and its scheme (Bearer, or DPoP: docs/auth.md, "DPoP at the API"), or the 400/401 that says what is wrong with its Authorization header. */
function presentedToken(request: FastifyRequest): { scheme: TokenScheme; token: string } {
  // Node keeps the first of two Authorization headers and drops the other: count them in the raw
  // headers. RFC 6750 §3.1: a request with more than one credential is an invalid_request.
  if (authorizationHeaderCount(request.raw.rawHeaders) > 1) {
    const message = 'The request has more than one Authorization header';
    throw new ApiError(E.multipleAuthorizationHeaders, message, { 'WWW-Authenticate': challenge('Bearer', 'invalid_request', message) });
  }
  const authorization = request.headers.authorization;
  const match = authorization === undefined ? null : /^(Bearer|DPoP)\s+([A-Za-z0-9\-._~+/]+=*)\s*$/i.exec(authorization);
  if (!match?.[2]) {
    const message = authorizationProblem(authorization);
    // RFC 6750 §3.1: no error code when the client sent no Bearer credentials at all.
    const bearerAttempt = authorization !== undefined && /^Bearer\b/i.test(authorization);
    throw new ApiError(authorization === undefined ? E.missingToken : E.invalidToken, message, {
      'WWW-Authenticate': bearerAttempt ? challenge('Bearer', 'invalid_request', message) : `Bearer realm="${realmName}"`,
    });
  }
  return { scheme: match[1]?.toLowerCase() === 'dpop' ? 'DPoP' : 'Bearer', token: match[2] };
}

function rejectedAsInvalidToken<T>(verify: () => T, scheme: TokenScheme): T {
  try {
    return verify();
  } catch (error) {
    throw invalidTokenError(error, scheme);
  }
}

function invalidTokenError(error: unknown, scheme: TokenScheme): unknown {
  if (!(error instanceof TokenRejected)) return error;
  return new ApiError(E.invalidToken, error.message, { 'WWW-Authenticate': challenge(scheme, 'invalid_token', error.message) });
}

export function requireScope(request: FastifyRequest, scope: string): void {
  if (request.principal?.scopes.has(scope)) return;
  const message = `The token lacks the scope ${scope}`;
  // A DPoP-bound token was sent with the DPoP scheme (any other way is refused before): its challenge is DPoP's.
  const scheme: TokenScheme = request.principal?.confirmation?.jkt !== undefined ? 'DPoP' : 'Bearer';
  throw new ApiError(E.insufficientScope, message, { 'WWW-Authenticate': challenge(scheme, 'insufficient_scope', message, `, scope="${scope}"`) });
}

/**
 * backbone_user and workstation, when present, must be active in the directory (a snapshot at
 * most a second old; docs/api.md, "Tokens"). Undefined when the snapshot answered at once.
 */
function checkDirectory(request: FastifyRequest, directory: DirectorySnapshot): Promise<void> | undefined {
  const { backboneUser, workstation } = request.principal ?? {};
  const active = { value: 'Active' as const };
  const user = backboneUser === undefined ? active : directory.peekUserStatus(backboneUser);
  const station = workstation === undefined ? active : directory.peekWorkstationStatus(workstation);
  if (user === undefined || station === undefined) return checkDirectorySlowly(request, directory);
  requireActive(backboneUser, user.value, workstation, station.value);
  return undefined;
}

async function checkDirectorySlowly(request: FastifyRequest, directory: Directory): Promise<void> {
  const { backboneUser, workstation } = request.principal ?? {};
  const userStatus = backboneUser === undefined ? 'Active' : await directory.userStatus(backboneUser);
  requireActive(backboneUser, userStatus, undefined, 'Active');
  const workstationStatus = workstation === undefined ? 'Active' : await directory.workstationStatus(workstation);
  requireActive(undefined, 'Active', workstation, workstationStatus);
}

function requireActive(backboneUser: string | undefined, userStatus: DirectoryStatus, workstation: string | undefined, workstationStatus: DirectoryStatus): void {
  if (userStatus !== 'Active') throw new ApiError(E.userNotAuthorized, `User ${backboneUser ?? ''} is not an active user of the core`);
  if (workstationStatus !== 'Active') throw new ApiError(E.workstationNotAuthorized, `Workstation ${workstation ?? ''} is not an active workstation of the core`);
}

export function requireValidCorrelation(request: FastifyRequest): void {
  if (!request.correlation.valid) {
    throw new ApiError(E.invalidCorrelationId, 'x-correlation-id must be 1-128 characters of A-Z a-z 0-9 . _ : -');
  }
}


function authorizationHeaderCount(rawHeaders: readonly string[]): number {
  let count = 0;
  for (let index = 0; index < rawHeaders.length; index += 2) if (rawHeaders[index]?.toLowerCase() === 'authorization') count += 1;
  return count;
}
