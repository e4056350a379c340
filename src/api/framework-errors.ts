/**
 * Errors the framework raises before any route runs (docs/api.md, "Order of checks"): a bad
 * percent-escape in the path, a path parameter longer than the router reads. Under `/v1` they get
 * the documented error record (in the family and wrapping of the operation whose resource the path
 * is under) and the correlation id, like every other answer; under `/realms` an OAuth error
 * (invalid_request).
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { errorCatalogue as E } from '../core/error-catalogue.js';
import { operations } from '../operations/registry.js';
import { errorBody, errorRecord } from './error-record.js';
import { readCorrelation } from './guards.js';

/** The longest path parameter the router reads; longer ones are refused by the schemas' own limits first. */
export const pathParameterCharsMax = 2_048;

/**
 * Each operation's resource: the first segment of its route's path (`/v1/term-deposits`), under
 * which the framework's errors take the operation's family and wrapping.
 */
export const operationResources = operations.map((operation) => ({
  resource: operation.route.path.split('/').slice(0, 3).join('/'),
  family: operation.family,
  wrapped: operation.route.wrapped,
}));

/** The operation resource `path` is under, if any. */
export function operationResourceOf(path: string): (typeof operationResources)[number] | undefined {
  return operationResources.find(({ resource }) => path === resource || path.startsWith(`${resource}/`));
}

export function frameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const message =
    error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? `A path parameter is longer than ${pathParameterCharsMax} characters`
      : error.code === 'FST_ERR_BAD_URL'
        ? 'The path has a malformed percent-escape'
        : 'The request cannot be routed';
  return frameworkRefusal(message, request, reply);
}

/** A 400 before any route runs, in the answer's shape for the path: an OAuth error under `/realms`, the error record elsewhere. */
export function frameworkRefusal(message: string, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const rawPath = request.raw.url?.split('?')[0] ?? '';
  // The path as received, bounded: it is echoed in the record.
  const shownPath = rawPath.length > 200 ? `${rawPath.slice(0, 200)}…` : rawPath;
  const path = `${request.method} ${shownPath}`;
  // The auth service answers in OAuth's words (RFC 6749 §5.2), as its own routes do.
  if (rawPath.startsWith('/realms/')) return reply.code(400).header('Cache-Control', 'no-store').send({ error: 'invalid_request', error_description: message });
  if (rawPath.startsWith('/v1/') || rawPath === '/v1') readCorrelation(request, reply);
  const resource = operationResourceOf(rawPath);
  const wrapped = resource?.wrapped ?? false;
  const family = resource?.family;
  const record = errorRecord(E.invalidPath, message, path, family);
  return reply.code(E.invalidPath.status).send(errorBody(record, { family, wrapped }));
}
