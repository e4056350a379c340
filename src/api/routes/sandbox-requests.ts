/**
 * GET /v1/sandbox/requests (sandbox mode only; docs/sandbox.md, "The request log"): the calling
 * client's own requests and answers, newest first, with the filters the console shares. Any valid
 * token of the client reads them; another client's are never shown.
 */
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { errorCatalogue as E } from '../../core/error-catalogue.js';
import { errorResponses } from '../../operations/schemas/common.js';
import { businessSecurity } from '../../docs-page/business-security.js';
import { requestLogQuery, requestLogView, type RequestLog } from '../../sandbox/request-log.js';
import { ApiError } from '../error-record.js';


const Exchange = Type.Object({
  id: Type.String(),
  recordedAt: Type.String({ format: 'date-time', description: 'When the request arrived' }),
  method: Type.String(),
  path: Type.String({ description: 'Without the query string' }),
  status: Type.Integer(),
  correlationId: Type.Union([Type.String(), Type.Null()]),
  durationMs: Type.Integer(),
  operationReference: Type.Union([Type.String(), Type.Null()], { description: 'The operation the answer is about: GET /v1/operations/{reference}' }),
  scenario: Type.Union([Type.String(), Type.Null()], { description: 'The Coregate-Scenario the request carried' }),
  request: Type.Object({ headers: Type.Record(Type.String(), Type.String(), { description: 'Without Authorization, DPoP, cookies or any credential' }), body: Type.Unknown() }),
  response: Type.Object({ headers: Type.Record(Type.String(), Type.String()), body: Type.Unknown() }),
});

export async function sandboxRequestRoutes(app: FastifyInstance, options: { requestLog: RequestLog }): Promise<void> {
  app.get<{ Querystring: Record<string, string | undefined> }>(
    '/v1/sandbox/requests',
    {
      config: { business: { family: undefined, wrapped: false, scope: undefined, auditedOperation: undefined, requestLogged: false } },
      schema: {
        summary: 'Your requests to this sandbox and their answers (request log)',
        description:
          'Sandbox mode only (docs/sandbox.md, "The request log"). The calling client\'s business API requests of the last 7 days (at most its newest 10,000), newest first, with their answers: method, path, status, correlation id, duration, bodies and headers, never a credential. Each links to its operation (`operationReference`).',
        operationId: 'listSandboxRequests',
        tags: ['Sandbox'],
        security: businessSecurity(undefined),
        // No examples: Swagger UI's Try it out would send them as filters.
        querystring: Type.Object({
          correlationId: Type.Optional(Type.String({ description: 'Only this x-correlation-id' })),
          reference: Type.Optional(Type.String({ description: 'Only the requests about this operation (its execution, repeats, polls)' })),
          status: Type.Optional(Type.String({ description: 'A status (404) or a class (4xx)' })),
          path: Type.Optional(Type.String({ description: 'Paths starting with this' })),
          since: Type.Optional(Type.String({ description: 'Recorded at or after this ISO 8601 date or date-time' })),
          limit: Type.Optional(Type.String({ description: '1-100, default 20' })),
          offset: Type.Optional(Type.String({ description: 'Entries to skip, default 0' })),
        }),
        response: {
          200: Type.Object({ requests: Type.Array(Exchange), more: Type.Boolean({ description: 'More entries follow: ask with offset + limit' }) }),
          ...errorResponses(false, [400, 401, 429, 500, 503]),
        },
      },
    },
    async (request) => {
      const parsed = requestLogQuery(request.query);
      if ('problem' in parsed) throw new ApiError(E.invalidField, parsed.problem);
      const page = await options.requestLog.list({ ...parsed.filter, clientKey: request.principal?.clientKey ?? '' });
      return { requests: page.items.map((row) => requestLogView(row)), more: page.more };
    },
  );
}
