/** Builds the HTTP server: fastify with the routes of the roles this instance serves. */
import type { Tracer } from '@opentelemetry/api';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { randomUUID } from 'node:crypto';
import { frameworkError, pathParameterCharsMax } from './api/framework-errors.js';
import { refusedBodyCanBeSkipped, SkippedBodies } from './skipped-bodies.js';
import { applyConnectionLimits, defaultConnectionLimits, type ConnectionLimits } from './connection-limits.js';
import { businessApi, sharedSchemas, type BusinessApiOptions } from './api/plugin.js';
import { readCorrelation } from './api/guards.js';
import type { AuthContext } from './auth/auth-context.js';
import { ExpectedError } from './core/expected-error.js';
import { reasonOf } from './core/status-reasons.js';
import { authRoutes } from './auth/routes.js';
import { postOnlyEndpoints } from './auth/method-not-allowed.js';
import { homeRoute } from './web/home.js';
import { rememberRouteFacts, routeFactsOf } from './route-facts.js';
import { originFormOf, refuseUnroutableTargets } from './request-target.js';
import { coregateIconSvg, coregateLogoSvg } from './docs-page/logo.js';
import { apiDescription, apiTags, securitySchemes } from './docs-page/openapi-info.js';
import { DatedDocument } from './docs-page/dated-document.js';
import { documentedSchema } from './docs-page/example-secret.js';
import { demoCalendar } from './docs-page/demo-examples.js';
import { postmanCollection, postmanCollectionPath, withBaseUrl } from './docs-page/postman-collection.js';
import type { Role } from './config.js';
import type { Clock } from './core/clock.js';
import { healthRoutes, type Readiness } from './health.js';
import { databaseRetryAfterSeconds, isDatabaseUnavailable } from './store/engine/database-unavailable.js';
import { lazyChildLoggerFactory, requestLineWriter, type Logger, type RequestLine } from './log.js';
import { countHttpRequests } from './metrics/http-metrics.js';
import { metricsRoute } from './metrics/metrics-route.js';
import type { Metrics } from './metrics/registry.js';
import { operatorApi, operatorApiPrefix, type OperatorApiOptions } from './operator/plugin.js';
import { consoleRoutes, type ConsoleRoutesOptions } from './console/routes.js';
import { spanIdsOf, traceHttpRequests, type RequestSpanFacts } from './tracing/http-spans.js';
import { sharedSchemaController } from './schema-compilers.js';

/** Swagger UI's configuration document (configUrl): it names /openapi.json as the page's document. */
const swaggerConfigPath = '/docs/swagger-config.json';

/** Business API bodies are small JSON documents (over 64 KiB → 413: docs/api.md, "Order of checks"). */
export const bodyBytesMax = 64 * 1024;

export interface ServerParts {
  logger: Logger;
  /** The instance's clock: the connection limits' and skipped bodies' timers run on it. */
  clock: Clock;
  role: Role;
  auth: AuthContext;
  api: BusinessApiOptions;
  readiness: Readiness;
  version: string;
  /** True once shutdown began: responses then close their connection so that close() can finish. */
  isClosing: () => boolean;
  /** Serve HTTPS with these PEM contents (TLS 1.2 or higher: docs/deployment.md, "TLS"). */
  /** `ca`: the TLS client certificates' CA (docs/auth.md, "Mutual TLS"): a certificate is asked for, not required. */
  tls?: { cert: Buffer; key: Buffer; ca?: Buffer | undefined } | undefined;
  /** Counts every request; serves GET /metrics here unless a separate metrics port serves it. */
  metrics?: { metrics: Metrics; serveOnMainPort: boolean } | undefined;
  /** Time-outs and the connection cap (slow and greedy clients); the defaults when absent. */
  connectionLimits?: ConnectionLimits | undefined;
  /** The operator API and the console (config.operatorApi); absent when off. */
  operator?: { api: OperatorApiOptions; console: ConsoleRoutesOptions } | undefined;
  /** The realm whose token endpoint the docs page's "Authorize" uses: the data file's first (default "sandbox"). */
  docsRealm?: string | undefined;
  /** A server span per request (src/tracing); none, and no hook, when absent. */
  tracer?: Tracer | undefined;
  /**
   * The public base URL configured (--public-url): the Postman collection's default baseUrl. Absent,
   * the request's own scheme and host (behind a proxy that is the internal host, hence the setting).
   */
  publicUrl?: string | undefined;
}

/**
 * One log line per request at info, with method, path, status and duration: fastify's two lines
 * (incoming, completed) cost a quarter of a 401's CPU. "incoming request" stays, at debug.
 */
class OneLinePerRequest extends LogController {
  readonly #writeLine: (line: RequestLine) => void;

  constructor(logger: Logger) {
    super();
    this.#writeLine = requestLineWriter(logger);
  }

  override incomingRequest(request: FastifyRequest): void {
    if ((request.log as Logger).isLevelEnabled('debug')) request.log.debug({ req: request }, 'incoming request');
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const { correlation, principal } = request as Partial<Pick<FastifyRequest, 'correlation' | 'principal'>>;
    const ids = spanIdsOf(request);
    const facts = {
      route: routeFactsOf(request).url,
      correlationId: correlation?.valid ? correlation.id : undefined,
      client: principal?.clientKey,
      traceId: ids?.traceId,
      spanId: ids?.spanId,
    };
    if (error) {
      reply.log.error({ req: request, res: reply, responseTime: reply.elapsedTime, ...definedOnly(facts), err: error }, 'request errored');
      return;
    }
    this.#writeLine({
      reqId: String(request.id),
      method: request.method,
      url: request.url,
      remoteAddress: request.ip,
      statusCode: reply.statusCode,
      responseTimeMs: reply.elapsedTime,
      ...facts,
    });
  }
}

/**
 * Request ids for the log: this process's random prefix and a counter, unique across instances
 * and cheaper than a UUID per request.
 */
function requestIdGenerator(): () => string {
  const prefix = randomUUID().slice(0, 8);
  let counter = 0;
  return () => `${prefix}-${(counter++).toString(36)}`;
}

/** What a request's span records once answered: the verified token's client and the valid correlation id. */
function requestSpanFacts(request: FastifyRequest): RequestSpanFacts {
  const { correlation, principal } = request as Partial<Pick<FastifyRequest, 'correlation' | 'principal'>>;
  return { clientId: principal?.clientId, correlationId: correlation?.valid ? correlation.id : undefined };
}

function definedOnly<T extends object>(fields: T): Partial<T> {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as Partial<T>;
}

/**
 * The HTTP server of one instance, in four steps: fastify with its options, the hooks every request
 * passes (limits, targets, traces, metrics), the docs (the OpenAPI document, its page and the
 * Postman collection), and the routes of the roles this instance serves, with the answers of last
 * resort (an error no route handled, no route at all).
 */
export async function buildServer(parts: ServerParts): Promise<FastifyInstance> {
  const limits = parts.connectionLimits ?? defaultConnectionLimits;
  const app = Fastify(fastifyOptions(parts, limits));
  addRequestHooks(app, parts, limits);
  for (const schema of sharedSchemas) app.addSchema(schema);
  await registerDocs(app, parts);
  setLastResortHandlers(app);
  await registerRoutes(app, parts);
  return app;
}

/** fastify's options: TLS, the logger, body and parameter bounds, time-outs, validation. */
function fastifyOptions(parts: ServerParts, limits: ConnectionLimits) {
  return {
    ...(parts.tls
      ? {
          https: {
            cert: parts.tls.cert,
            key: parts.tls.key,
            minVersion: 'TLSv1.2' as const,
            // A client certificate is optional (a secret client needs none); one the CA did not
            // issue leaves the connection unauthorized, and no certificate is taken from it.
            ...(parts.tls.ca ? { ca: parts.tls.ca, requestCert: true, rejectUnauthorized: false } : {}),
          },
        }
      : {}),
    // pino's Logger is a FastifyBaseLogger; the cast keeps the instance's default generic types.
    loggerInstance: parts.logger as FastifyBaseLogger,
    bodyLimit: bodyBytesMax,
    routerOptions: { maxParamLength: pathParameterCharsMax },
    // The absolute form of a target read as its path (src/request-target.ts).
    rewriteUrl: originFormOf,
    frameworkErrors: frameworkError,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    genReqId: requestIdGenerator(),
    return503OnClosing: true,
    logController: new OneLinePerRequest(parts.logger),
    childLoggerFactory: lazyChildLoggerFactory as never,
    trustProxy: false,
    // allErrors: a refused request hears every problem at once (its cost is on refused requests only).
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, allErrors: true, verbose: true } },
    // The error records are built from the validation issues (errors-http.ts): fastify's own
    // message, which formatted every issue into text, was 3 % of a 400's CPU and never shown.
    schemaErrorFormatter: (_issues: unknown, dataVar: string) => new ExpectedError(`the request's ${dataVar} is invalid`),
    schemaController: sharedSchemaController,
  };
}

/** The hooks every request passes: connection limits, route facts, unroutable targets, traces, closing and skipped bodies, metrics. */
function addRequestHooks(app: FastifyInstance, parts: ServerParts, limits: ConnectionLimits): void {
  applyConnectionLimits(app.server, limits, parts.clock);
  rememberRouteFacts(app);
  refuseUnroutableTargets(app);
  if (parts.tracer) traceHttpRequests(app, { tracer: parts.tracer, factsOf: requestSpanFacts });
  const skippedBodies = new SkippedBodies(parts.clock);
  app.addHook('onSend', (request, reply, payload, done) => {
    if (parts.isClosing()) void reply.header('Connection', 'close');
    // Set only by fastify's refusal of a body it could not take (skipped-bodies.ts).
    else if (reply.statusCode < 500 && reply.hasHeader('connection') && refusedBodyCanBeSkipped(request)) {
      void reply.removeHeader('connection');
      // The request's deadline, counted from when fastify received it.
      skippedBodies.skip(request.raw, limits.requestTimeoutMs - reply.elapsedTime);
    }
    done(null, payload);
  });
  app.addHook('preClose', (done) => {
    skippedBodies.closeAll();
    done();
  });
  if (parts.metrics) countHttpRequests(app, parts.metrics.metrics);
}

/** The OpenAPI document (/openapi.json), its page (/docs) and the Postman collection, dated by the core's business date. */
async function registerDocs(app: FastifyInstance, parts: ServerParts): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'coregate API', version: parts.version, description: apiDescription },
      tags: apiTags,
      components: { securitySchemes: securitySchemes(parts.docsRealm ?? 'sandbox') },
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, index) => (typeof json.$id === 'string' ? json.$id : `def-${index}`) },
    // The probes declare no schema of their own: they get their tag here rather than "default".
    // Outside sandbox mode the examples show no usable secret (docs-page/example-secret.ts).
    transform: ({ schema, url }) => ({ schema: documentedSchema(url.startsWith('/health') ? { ...schema, tags: ['Health'] } : schema, parts.api.sandbox), url }),
  });
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    theme: {
      title: 'coregate API',
      favicon: [{ filename: 'coregate.svg', rel: 'icon', type: 'image/svg+xml', sizes: 'any', content: coregateIconSvg }],
    },
    logo: { type: 'image/svg+xml', content: coregateLogoSvg, href: '/docs', target: '_self' },
    // The plugin fixes the page's document URL to /docs/json; Swagger UI's configUrl is read after
    // it, so the page loads (and its URL box names) /openapi.json, the one URL the docs give.
    uiConfig: { configUrl: swaggerConfigPath },
    uiHooks: {
      onRequest: async (request, reply) => {
        const queryAt = request.url.indexOf('?');
        const path = queryAt >= 0 ? request.url.slice(0, queryAt) : request.url;
        // The plugin's own copy, undated: the served document is the dated one.
        if (path === '/docs/json') return reply.redirect('/openapi.json');
        // The plugin sends /docs/static/index.html to the page by rewriting the path's end, which a
        // query string (`?url=...`) hides: it redirected to itself, forever. Redirected here, once,
        // to the page, with the query kept.
        if (queryAt >= 0 && path === '/docs/static/index.html') return reply.redirect(`/docs${request.url.slice(queryAt)}`, 302);
        return undefined;
      },
    },
  });
  app.get(swaggerConfigPath, { schema: { hide: true } }, async () => ({ url: '/openapi.json' }));
  // The document's examples are dated by the core's business date (built again when it moves), and
  // the Postman collection is made from that document (docs/collections.md), wherever the document
  // is served.
  const docs = new DatedDocument({
    base: () => app.swagger() as Record<string, unknown>,
    businessDate: () => parts.api.core.businessDate(),
    fallbackBusinessDate: demoCalendar.businessDate,
    derive: (document) => postmanCollection(document, '', { sandbox: parts.api.sandbox }),
  });
  app.get('/openapi.json', { schema: { hide: true } }, async () => (await docs.current()).document);
  app.get(postmanCollectionPath, { schema: { hide: true } }, async (request) => withBaseUrl((await docs.current()).derived, parts.publicUrl ?? `${request.protocol}://${request.host}`));
}

/**
 * The answers of last resort: an error no route handled, and a request no route serves.
 */
function setLastResortHandlers(app: FastifyInstance): void {
  // The routes without an error handler of their own (the console's login, the docs, health):
  // a database outage is 503, a failure of ours a 500 that names no internal detail (fastify's
  // own handler would send the error's message, a driver's text included).
  app.setErrorHandler(async (error: Error & { statusCode?: number }, request, reply) => {
    if (isDatabaseUnavailable(error)) {
      request.log.warn({ err: error }, 'request met a database outage');
      return reply.code(503).header('retry-after', String(databaseRetryAfterSeconds)).send({ status: 503, reason: reasonOf(503), message: 'The service\'s database is unavailable; try again shortly' });
    }
    // A client's error keeps fastify's own answer (the parent handler).
    if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) throw error;
    request.log.error({ err: error }, 'request failed');
    return reply.code(500).send({ status: 500, reason: reasonOf(500), message: 'Unexpected internal error; the log has the cause' });
  });

  app.setNotFoundHandler(async (request, reply) => {
    const path = `${request.method} ${request.url.split('?')[0] ?? ''}`;
    // The business API echoes (or generates) x-correlation-id on every response (docs/api.md,
    // "Correlation ids and duplicates").
    if (request.url.startsWith('/v1/') || request.url === '/v1') readCorrelation(request, reply);
    return reply.code(404).send({ status: 404, reason: reasonOf(404), message: `No route ${path}`, path });
  });
}

/** The routes of the roles this instance serves: health, metrics, auth, the home page, the business API, the operator's. */
async function registerRoutes(app: FastifyInstance, parts: ServerParts): Promise<void> {
  await app.register(healthRoutes, { readiness: parts.readiness });
  if (parts.metrics?.serveOnMainPort) await app.register(metricsRoute, { metrics: parts.metrics.metrics });
  if (parts.role === 'all' || parts.role === 'auth') {
    await app.register(authRoutes, { ctx: parts.auth });
    await app.register(postOnlyEndpoints);
  }
  await app.register(homeRoute, { version: parts.version, console: parts.operator !== undefined });
  if (parts.role === 'all' || parts.role === 'api') await app.register(businessApi, parts.api);
  if (parts.operator) {
    await app.register(operatorApi, { prefix: operatorApiPrefix, ...parts.operator.api });
    await app.register(consoleRoutes, parts.operator.console);
  }
}
