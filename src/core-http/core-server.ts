/**
 * The remote core protocol's server side (docs/core-protocol.md): any CoreBankingPort — the
 * reference core in `coregate core serve` — behind HTTP. Routes parse, call the port once, and
 * write its answer; the port keeps at most once per reference, so a repeated POST answers the
 * original outcome (the reference in the path is the idempotency key, as a PUT's URL is).
 *
 * No authentication: the protocol must run on a private network or behind mTLS.
 */
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Tracer } from '@opentelemetry/api';
import Fastify, { type FastifyBaseLogger, type FastifyError, type FastifyInstance } from 'fastify';
import { randomUUID } from 'node:crypto';
import { hasDataLoad, hasRecords } from '../core/port.js';
import type { Logger } from '../log.js';
import { spanIdsOf, traceHttpRequests } from '../tracing/http-spans.js';
import { databaseRetryAfterSeconds, isDatabaseUnavailable } from '../store/engine/database-unavailable.js';
import type { TSchema } from '@sinclair/typebox';
import { BadCommand } from './bad-command.js';
import { coreRoutes, type ServedCore } from './core-routes.js';
import { identifierLengthMax, paths, ReadySchema, UnavailableSchema } from './protocol.js';
import { withNamedSchemas } from './protocol-document.js';
import { sharedSchemaController } from '../schema-compilers.js';

/** Commands are small JSON documents. */
export const coreBodyBytesMax = 64 * 1024;
/** A request that takes longer is cut; the API's own time-out is much shorter. */
const requestTimeoutMs = 30_000;

export interface CoreServerOptions {
  /** The port's operations side, and its read and load sides when the core serves them. */
  core: ServedCore;
  logger: Logger;
  version: string;
  /** A server span per request, joining the caller's trace (its `traceparent`); none when absent. */
  tracer?: Tracer | undefined;
}


/**
 * The document's tags: what each group of routes is for, and whether a core must serve it
 * (docs/core-protocol.md, "What a core must serve").
 */
const protocolTags = [
  { name: 'Term deposits', description: 'Required. Constitutions by reference (at most once), their lookups, and a contract by number.' },
  { name: 'Merchandising loans', description: 'Required. Installment executions by reference (at most once) and their lookups.' },
  { name: 'Reconciliation', description: 'Required. Fences: the API closes a reference whose outcome it does not know, then looks it up.' },
  { name: 'Directory', description: 'Required: a user\'s and a workstation\'s status, checked on every business call (the lists of users and workstations are Records).' },
  { name: 'Business days', description: 'The business date and the events are required (the API reads them on its own); the advance is optional (operators only).' },
  { name: 'Records', description: 'Optional: the read side for operators. Without it the operator views answer 501 and coregate check cannot prove the ledger.' },
  { name: 'Sandbox data', description: 'Optional: the load side. Without it coregate serve --core-url --data refuses to start when the file has a core part.' },
  { name: 'Health', description: 'Required: readiness.' },
];

export async function buildCoreServer(options: CoreServerOptions): Promise<FastifyInstance> {
  const { core } = options;
  // The bodies and answers of the routes this core serves: named components of the document.
  const documented: TSchema[] = [ReadySchema, UnavailableSchema];
  const app = Fastify({
    loggerInstance: options.logger as FastifyBaseLogger,
    bodyLimit: coreBodyBytesMax,
    requestTimeout: requestTimeoutMs,
    genReqId: () => randomUUID(),
    return503OnClosing: true,
    // Longer than any identifier the protocol allows, so that an over-long one is a 400 of its schema.
    routerOptions: { maxParamLength: 2 * identifierLengthMax },
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, allErrors: false } },
    schemaController: sharedSchemaController,
  }).withTypeProvider<TypeBoxTypeProvider>();
  app.removeContentTypeParser('text/plain');
  if (options.tracer) {
    traceHttpRequests(app, { tracer: options.tracer });
    // The request's log lines (its "request completed" among them) carry its trace and span ids.
    app.addHook('onRequest', (request, reply, done) => {
      const ids = spanIdsOf(request);
      if (ids !== undefined) request.log = reply.log = request.log.child(ids);
      done();
    });
  }

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'coregate remote core protocol',
        version: options.version,
        description:
          'The CoreBankingPort over HTTP (docs/core-protocol.md). The reference in a command\'s path is its idempotency key: the same reference again answers the original outcome. ' +
          'Amounts are integer minor units as decimal strings. A refusal is a 200 answer {status: Rejected, refusal: {name, code, message}} whose name and code come from the list in docs/core-protocol.md (Refusals). ' +
          'No authentication: run it on a private network or behind mTLS. The same document is checked in as docs/core-protocol.openapi.json.',
      },
      tags: protocolTags,
    },
    // Every titled schema a component, referred to by name (protocol-document.ts); the routes validate as before.
    transformObject: (document) => ('openapiObject' in document ? withNamedSchemas(document.openapiObject, documented) : document.swaggerObject),
  });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  app.setNotFoundHandler(async (request, reply) =>
    reply.code(404).send({ error: 'NO_ROUTE', message: `No route ${request.method} ${request.url.split('?')[0] ?? ''}` }),
  );
  app.setErrorHandler(async (error: FastifyError, request, reply) => {
    if (error instanceof BadCommand || (error.validation && error.validation.length > 0)) {
      return reply.code(400).send({ error: 'BAD_REQUEST', message: error.message });
    }
    if (error.statusCode === 413) return reply.code(413).send({ error: 'PAYLOAD_TOO_LARGE', message: `The body exceeds ${coreBodyBytesMax} bytes` });
    if (error.statusCode === 415) return reply.code(415).send({ error: 'UNSUPPORTED_MEDIA_TYPE', message: 'Content-Type must be application/json' });
    if (error.statusCode === 400) return reply.code(400).send({ error: 'BAD_REQUEST', message: 'The body is not valid JSON' });
    if (isDatabaseUnavailable(error)) {
      // The core's own database failed over or was cut: the API holds the outcome as unknown and reconciles.
      request.log.warn({ err: error }, 'core request met a database outage');
      return reply.code(503).header('retry-after', String(databaseRetryAfterSeconds)).send({ error: 'UNAVAILABLE', message: 'The core\'s database is unavailable' });
    }
    request.log.error({ err: error }, 'core request failed');
    return reply.code(500).send({ error: 'INTERNAL_ERROR', message: 'Internal error; the core\'s log has the cause' });
  });

  // Every route of the protocol is a row of one table (core-routes.ts); a side the core does not serve is left out.
  for (const row of coreRoutes) {
    if (row.side === 'records' && !hasRecords(core)) continue;
    if (row.side === 'data' && !hasDataLoad(core)) continue;
    documented.push(...(row.body ? [row.body] : []), ...Object.values(row.response));
    app.route({
      method: row.method,
      url: row.path,
      ...(row.bodyLimit === undefined ? {} : { bodyLimit: row.bodyLimit }),
      schema: {
        summary: row.summary,
        operationId: row.portMethod,
        tags: [row.tag],
        ...(row.params ? { params: row.params } : {}),
        ...(row.query ? { querystring: row.query } : {}),
        ...(row.body ? { body: row.body } : {}),
        response: row.response,
      },
      handler: (request, reply) =>
        row.handle(core as Required<ServedCore>, { params: request.params, query: request.query, body: request.body } as Parameters<typeof row.handle>[1], reply),
    });
  }

  app.get(
    paths.ready,
    {
      schema: {
        summary: 'Readiness: 200 when the core answers (its store included)',
        operationId: 'ready',
        tags: ['Health'],
        response: { 200: ReadySchema, 503: UnavailableSchema },
      },
    },
    async (request, reply) => {
      try {
        await core.ping();
        return { status: 'ready' as const };
      } catch (error) {
        request.log.warn({ err: error }, 'core not ready');
        return reply.code(503).send({ status: 'unavailable' as const });
      }
    },
  );
  app.get('/health/live', { schema: { hide: true } }, async () => ({ status: 'ok' }));

  return app;
}
