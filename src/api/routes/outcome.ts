/** Turns a request into an Invocation, and an operation's outcome into the HTTP response. */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { errorBody } from '../error-record.js';
import type { Invocation } from '../../operations/invocation.js';
import type { RunOutcome } from '../../operations/operation-runner.js';

export function preferences(request: FastifyRequest): Set<string> {
  const header = request.headers.prefer;
  const values = Array.isArray(header) ? header.join(',') : (header ?? '');
  return new Set(
    values
      .split(',')
      .map((token) => token.split(';')[0]?.trim().toLowerCase().replace(/\s*=\s*/, '=') ?? '')
      .filter((token) => token !== ''),
  );
}

export function invocationOf(request: FastifyRequest): Invocation {
  if (!request.principal) throw new Error('invocationOf needs an authenticated request');
  const channel = request.headers['x-channel'];
  const { principal } = request;
  return {
    caller: {
      clientKey: principal.clientKey,
      backboneUser: principal.backboneUser,
      workstation: principal.workstation,
      channel: typeof channel === 'string' ? channel.slice(0, 64) : undefined,
    },
    correlationId: request.correlation.id,
    // An id a client library generated is no decision of the caller's: the duplicate window applies.
    correlationSupplied: request.correlation.supplied && !request.correlation.generated,
    path: `${request.method} ${request.url.split('?')[0] ?? ''}`,
    request: { body: request.body, params: (request.params ?? {}) as Record<string, string> },
    numberTextOf: request.numberTextOf,
    respondAsync: preferences(request).has('respond-async'),
    startedAtMs: request.startedAtMs,
    scenario: request.scenario,
  };
}

export function sendOutcome(reply: FastifyReply, outcome: RunOutcome, wrapped: boolean, minimal = false): FastifyReply {
  reply.request.operationReference = outcome.kind === 'refused' ? referenceOf(outcome.headers?.Location) : outcome.reference;
  switch (outcome.kind) {
    case 'done':
      if (minimal) return reply.code(204).header('Preference-Applied', 'return=minimal').send();
      return reply.code(200).send(outcome.body);
    case 'accepted':
      if (outcome.preferenceApplied) void reply.header('Preference-Applied', 'respond-async');
      return reply.code(202).header('Location', `/v1/operations/${outcome.reference}`).send(outcome.body);
    case 'refused':
      reply.request.audited = outcome.audited;
      if (outcome.headers) void reply.headers(outcome.headers);
      return reply.code(outcome.status).send(errorBody(outcome.record, { family: undefined, wrapped }));
  }
}

/** The operation a refusal's Location names (a 409's original, a 502/504's held operation). */
function referenceOf(location: string | undefined): string | undefined {
  return location?.startsWith('/v1/operations/') ? location.slice('/v1/operations/'.length) : undefined;
}
