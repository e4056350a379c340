/**
 * A server span per HTTP request, from two fastify hooks (onRequest starts it, onResponse ends it)
 * rather than an instrumentation package: the same few attributes on the business API, the auth
 * service, the operator API and the remote core's protocol, and nothing at all when the server is
 * built without a tracer (the hooks are then never added).
 *
 * A `traceparent` header (W3C trace context) makes the span a child of the caller's: the load
 * balancer's on the API, the API's core call on the remote core. The span's context is made
 * active for the rest of the request, so that the store's transactions and the core calls the
 * request makes become its children (src/store/traced-store.ts, the remote core's adapter).
 *
 * The caller's `tracestate` is dropped here, at the trust boundary: it is text the caller chose
 * (vendors' entries this service does not own, which W3C Trace Context lets a participant drop).
 * Kept, it would be in the span's context, exported to the bank's trace back end with every span
 * and sent on to the remote core beside `traceparent` (docs/deployment.md, "Tracing").
 */
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span, type Tracer } from '@opentelemetry/api';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { routeFactsOf } from '../route-facts.js';
import { attribute } from './attributes.js';

/** A traced request's span and the context that carries it. */
export interface RequestSpan {
  span: Span;
  context: Context;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by traceHttpRequests; absent when the server does not trace, or for an untraced route. */
    traceSpan?: RequestSpan | undefined;
  }
}

/** What a request adds to its span once it is answered; only identifiers that are safe to record. */
export interface RequestSpanFacts {
  /** The OAuth client of the verified Bearer token. */
  clientId: string | undefined;
  /** The x-correlation-id, when valid. */
  correlationId: string | undefined;
}

export interface HttpSpanOptions {
  tracer: Tracer;
  /** Read when the request is answered (the business API's principal and correlation id). */
  factsOf?: (request: FastifyRequest) => RequestSpanFacts;
}

/**
 * Probes and scrapes are not traced: a load balancer and Prometheus call them every few seconds,
 * and a trace of each would bury the requests worth following.
 */
const untracedRoutes: ReadonlySet<string> = new Set(['/health/live', '/health/ready', '/metrics']);

/** Methods the semantic conventions name; any other is recorded as `_OTHER` (a client chooses it). */
const knownMethods: ReadonlySet<string> = new Set(['CONNECT', 'DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT', 'TRACE']);

/** Adds the hooks to `app` itself: call it on the root instance before registering routes. */
export function traceHttpRequests(app: FastifyInstance, options: HttpSpanOptions): void {
  const { tracer, factsOf } = options;
  app.decorateRequest('traceSpan', undefined);
  // Callback hooks: an async one would cost a promise per request, and `done` is what must run
  // inside the span's context for the hooks and the handler after it to inherit it.
  app.addHook('onRequest', (request, _reply, done) => {
    const route = routeFactsOf(request).url;
    if (route !== undefined && untracedRoutes.has(route)) return done();
    const method = knownMethods.has(request.method) ? request.method : '_OTHER';
    const attributes: Attributes = { [attribute.httpRequestMethod]: method, [attribute.urlScheme]: request.protocol };
    if (route !== undefined) attributes[attribute.httpRoute] = route;
    const parent = withoutTraceState(propagation.extract(ROOT_CONTEXT, request.headers));
    const span = tracer.startSpan(route === undefined ? method : `${method} ${route}`, { kind: SpanKind.SERVER, attributes }, parent);
    const spanContext = trace.setSpan(parent, span);
    request.traceSpan = { span, context: spanContext };
    context.with(spanContext, done);
  });
  // The body is read between onRequest and the handler, in the socket's callbacks, outside the
  // span's context: the handler is entered in it again here.
  app.addHook('preHandler', (request, _reply, done) => {
    const traced = request.traceSpan;
    if (traced === undefined) return done();
    context.with(traced.context, done);
  });
  app.addHook('onResponse', (request, reply, done) => {
    endSpan(request, reply.statusCode, factsOf);
    done();
  });
  // A client that hangs up before its request is read gets no answer, and no onResponse.
  app.addHook('onRequestAbort', (request, done) => {
    const span = request.traceSpan?.span;
    if (span?.isRecording()) {
      span.setAttribute(attribute.errorType, 'aborted');
      span.end();
    }
    done();
  });
}

/**
 * The caller's trace context (its trace id, its span as the parent, its sampled flag) without its
 * `tracestate`: a span takes its parent's trace state, exports it and propagates it, so none is
 * kept from a caller.
 */
export function withoutTraceState(extracted: Context): Context {
  const caller = trace.getSpanContext(extracted);
  if (caller?.traceState === undefined) return extracted;
  const { traceId, spanId, traceFlags, isRemote } = caller;
  return trace.setSpanContext(extracted, { traceId, spanId, traceFlags, ...(isRemote === undefined ? {} : { isRemote }) });
}

function endSpan(request: FastifyRequest, statusCode: number, factsOf: HttpSpanOptions['factsOf']): void {
  const span = request.traceSpan?.span;
  // Not recording: not sampled (nothing to add), or ended already (an aborted request).
  if (span === undefined || !span.isRecording()) return;
  span.setAttribute(attribute.httpResponseStatusCode, statusCode);
  const facts = factsOf?.(request);
  if (facts?.clientId !== undefined) span.setAttribute(attribute.clientId, facts.clientId);
  if (facts?.correlationId !== undefined) span.setAttribute(attribute.correlationId, facts.correlationId);
  // A server span fails on 5xx only: a 4xx is the caller's error, answered as designed.
  if (statusCode >= 500) {
    span.setAttribute(attribute.errorType, String(statusCode));
    span.setStatus({ code: SpanStatusCode.ERROR });
  }
  span.end();
}

/** The request's trace and span ids, for its log line; undefined when it is not traced. */
export function spanIdsOf(request: FastifyRequest): { traceId: string; spanId: string } | undefined {
  const span = request.traceSpan?.span;
  if (span === undefined) return undefined;
  const { traceId, spanId } = span.spanContext();
  return { traceId, spanId };
}
