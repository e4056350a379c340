/**
 * The business API (`/v1/...`): guards, error records, routes. HTTP concerns only; the rules
 * live in the core, the guarantees (correlation, audit, 202) in the operation runner.
 */
import type { SenderConstraint } from './sender-constraint.js';
import type { Clock } from '../core/clock.js';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errorCatalogue as E } from '../core/error-catalogue.js';
import type { CoreBankingPort } from '../core/port.js';
import type { RefusalAudit } from '../audit/refusal-audit.js';
import { DirectorySnapshot } from '../cache/directory-snapshot.js';
import type { Store } from '../store/connect.js';
import type { TokenVerifier } from './bearer-auth.js';
import type { RateLimiter } from './rate-limit.js';
import { ApiError, errorBody, errorRecord } from './error-record.js';
import { JsonInputError, parseStrictJson } from './strict-json.js';
import { mapError } from './errors-http.js';
import { authenticate, readCorrelation, requireValidCorrelation } from './guards.js';
import { readScenario, sentScenario } from './scenario-header.js';
import type { RequestLog } from '../sandbox/request-log.js';
import { sandboxRequestRoutes } from './routes/sandbox-requests.js';
import { auditEntry } from '../operations/operation-audit.js';
import type { OperationRunner } from '../operations/operation-runner.js';
import type { BusinessRouteConfig } from './request-context.js';
import { routeFactsOf } from '../route-facts.js';
import { operationRoutes } from './routes/operations.js';
import { webhookDeliveryRoutes } from './routes/webhook-deliveries.js';
import { partsOf } from '../operations/registry.js';
import { ErrorDetailSchema, ErrorRecordSchema, WrappedErrorRecordSchema } from '../operations/schemas/common.js';
import { OperationViewSchema } from '../operations/schemas/operation-view.js';

export interface BusinessApiOptions {
  store: Store;
  /** Whose time stamps requests and their audit records (src/core/clock.ts). */
  clock: Clock;
  core: CoreBankingPort;
  verifier: TokenVerifier;
  /** DPoP- and certificate-bound tokens' checks (docs/auth.md, "DPoP at the API"). */
  constraint: SenderConstraint;
  runner: OperationRunner;
  /** Audit records of refused requests, written in batches. */
  refusals: RefusalAudit;
  limiter: RateLimiter;
  /** Sandbox mode: scenarios may be forced (docs/sandbox.md, "Scenarios"); refused with 400 otherwise. */
  sandbox: boolean;
  /** Sandbox mode: the request log (docs/sandbox.md, "The request log") and GET /v1/sandbox/requests. */
  requestLog?: RequestLog | undefined;
}

/** Each registered operation's routes (its folder's route.ts), loaded once with this module. */
const registeredRoutes = await partsOf('route');

/** Shared schemas, registered once so that routes and the OpenAPI document refer to them by name: the error records', then each operation's. */
export const sharedSchemas = [
  ErrorDetailSchema,
  ErrorRecordSchema,
  WrappedErrorRecordSchema,
  OperationViewSchema,
  ...registeredRoutes.flatMap(({ part }) => part.routes.schemas),
];

/** The error line of an audit record that could not be kept (docs/api.md, Audit). */
const auditLostMessage = 'audit record of a refused request could not be written';

export async function businessApi(app: FastifyInstance, options: BusinessApiOptions): Promise<void> {
  const { store, clock, core, verifier, constraint, runner, refusals, limiter, sandbox, requestLog } = options;
  // text/plain would otherwise be parsed and reach validation: it is a 415 (docs/api.md, "Order of
  // checks").
  app.removeContentTypeParser('text/plain');
  // Numbers as written, no repeated member, bounded nesting, valid UTF-8 (strict-json.ts;
  // docs/api.md, "Order of checks").
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const bytes = body as Buffer;
    if (bytes.length === 0) return done(new ApiError(E.missingField, 'The request body is required'), undefined);
    try {
      // The body as sent, for the sandbox's request log only.
      if (requestLog) request.loggedRequestBody = bytes.toString('utf8');
      const parsed = parseStrictJson(bytes);
      // The numbers' texts travel with the request, to the operation (routes/outcome.ts).
      request.numberTextOf = parsed.numberTextOf;
      done(null, parsed.value);
    } catch (error) {
      done(error instanceof JsonInputError ? new ApiError(E.malformedJson, error.message) : (error as Error), undefined);
    }
  });
  app.decorateRequest('principal', undefined);
  app.decorateRequest('audited', false);
  app.decorateRequest('startedAtMs', 0);
  app.decorateRequest('numberTextOf', undefined);
  app.decorateRequest('scenario', undefined);
  app.decorateRequest('operationReference', undefined);
  if (requestLog) logRequests(app, requestLog);
  app.decorateRequest('correlation', undefined as unknown as FastifyRequest['correlation']);

  const directory = new DirectorySnapshot(core, clock);
  // A callback hook, not an async one: a request whose token and directory entries are at hand
  // (the common case) passes without a promise (guards.ts).
  app.addHook('onRequest', (request, reply, done) => {
    request.startedAtMs = clock.now();
    readCorrelation(request, reply);
    const config = routeFactsOf(request).config.business;
    if (!config) return done();
    let pending: Promise<void> | undefined;
    try {
      pending = authenticate(request, verifier, constraint, directory, config, limiter);
      if (pending === undefined) checkHeaders(request, config, sandbox);
    } catch (error) {
      return done(error as FastifyError);
    }
    if (pending === undefined) return done();
    pending.then(
      () => {
        try {
          checkHeaders(request, config, sandbox);
        } catch (error) {
          return done(error as FastifyError);
        }
        done();
      },
      (error: FastifyError) => done(error),
    );
  });

  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const config = routeFactsOf(request).config.business;
    const mapped = mapError(error);
    if (mapped.unexpected) request.log.error({ err: error }, 'business API request failed');
    const record = errorRecord(mapped.entry, mapped.message, `${request.method} ${request.url.split('?')[0] ?? ''}`, config?.family, mapped.details);
    const send = () =>
      reply
        .code(mapped.entry.status)
        .headers(mapped.headers)
        .send(errorBody(record, { family: config?.family, wrapped: config?.wrapped ?? false }));
    // Only a refusal that must be audited waits for a write; the others are answered at once. A
    // 503 of a database outage is audited too, but not waited for: the write goes to the database
    // that just failed (failing, to the audit spool: src/audit/refusal-audit.ts), and waiting (up
    // to the connect time-out) would only delay the answer.
    // An audit that already failed for this request (AuditUnavailable) is not tried a second time.
    if (mapped.auditUnavailable) {
      request.audited = true;
      request.log.error({ err: error }, auditLostMessage);
    }
    const audit = auditRefusal(request, mapped.entry.status, record.errordetail?.[0]?.code ?? null);
    // Says whether this 503 is audited (not when the outage came before authentication finished)
    // and its correlation id: the failover torture matches the 503s it received to audit records by them.
    if (mapped.outage) {
      const correlationId = request.correlation?.valid ? request.correlation.id : undefined;
      request.log.warn({ err: error, correlationId, refusalAudited: audit !== undefined }, 'business API request met a database outage');
    }
    return audit === undefined || mapped.outage ? send() : audit.then(send);
  });

  /** Every execution attempt that passed authentication is audited, refusals too (docs/api.md, "Audit"); undefined when none is owed. */
  function auditRefusal(request: FastifyRequest, status: number, code: string | null): Promise<void> | undefined {
    const operation = routeFactsOf(request).config.business?.auditedOperation;
    if (!operation || !request.principal || request.audited) return undefined;
    request.audited = true;
    return writeRefusalAudit(request, operation, status, code);
  }

  async function writeRefusalAudit(request: FastifyRequest, operation: string, status: number, code: string | null): Promise<void> {
    if (!request.principal) return;
    try {
      await refusals.record(
        auditEntry({
          operation,
          clientId: request.principal.clientKey,
          backboneUser: request.principal.backboneUser ?? null,
          workstation: request.principal.workstation ?? null,
          correlationId: request.correlation.valid ? request.correlation.id : null,
          reference: null,
          httpStatus: status,
          outcome: 'Refused',
          durationMs: clock.now() - request.startedAtMs,
          details: { path: `${request.method} ${request.url.split('?')[0] ?? ''}`, code },
        }, clock.now()),
      );
    } catch (error) {
      request.log.error({ err: error }, auditLostMessage);
    }
  }

  for (const { operation, part } of registeredRoutes) await app.register((scope) => part.routes.register(scope, { operation, core, runner }));
  await app.register(operationRoutes, { store, runner });
  await app.register(webhookDeliveryRoutes, { store });
  if (requestLog) await app.register(sandboxRequestRoutes, { requestLog });
}

/**
 * The sandbox's request log (docs/sandbox.md, "The request log"): an authenticated business request
 * and its answer are recorded once the answer went out (onResponse), never on its way. An
 * unauthenticated one names no client it could be shown to, and anyone's garbage must not fill the
 * log: it is not kept.
 */
function logRequests(app: FastifyInstance, requestLog: RequestLog): void {
  app.decorateRequest('loggedRequestBody', undefined);
  app.decorateRequest('loggedResponseBody', undefined);
  app.addHook('onSend', (request, _reply, payload, done) => {
    if (typeof payload === 'string') request.loggedResponseBody = payload;
    done(null, payload);
  });
  app.addHook('onResponse', (request, reply, done) => {
    const { config } = routeFactsOf(request);
    if (config.business && config.business.requestLogged !== false && request.principal) {
      requestLog.record({
        clientKey: request.principal.clientKey,
        method: request.method,
        path: request.url.split('?')[0] ?? '',
        status: reply.statusCode,
        correlationId: request.correlation?.valid ? request.correlation.id : undefined,
        startedAtMs: request.startedAtMs,
        operationReference: request.operationReference,
        // A refused scenario is logged as it was sent: the 400 is about it.
        scenario: request.scenario?.name ?? sentScenario(request),
        requestHeaders: request.headers,
        responseHeaders: reply.getHeaders(),
        requestBody: request.loggedRequestBody,
        responseBody: request.loggedResponseBody,
      });
    }
    done();
  });
}

/** The headers' own checks, after the 401/403: an unauthenticated caller learns nothing from them. */
function checkHeaders(request: FastifyRequest, config: BusinessRouteConfig, sandbox: boolean): void {
  requireValidCorrelation(request);
  request.scenario = readScenario(request, config, sandbox);
}
