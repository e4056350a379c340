/**
 * The matched route's pattern and config, read once per request. Fastify's `request.routeOptions`
 * builds a new object on every access (and asks the router for its constraint strategies): read
 * by the guards, the error handler, the audit, the log line and the metrics, that was five
 * objects per request. A first hook reads it once; later readers use `routeFactsOf`.
 */
import type { FastifyContextConfig, FastifyInstance, FastifyRequest } from 'fastify';

export interface RouteFacts {
  /** The route pattern (`/v1/term-deposits/:termDepositId/retrieve`), undefined when none matched. */
  url: string | undefined;
  config: FastifyContextConfig;
}

declare module 'fastify' {
  interface FastifyRequest {
    routeFacts: RouteFacts | undefined;
  }
}

/** Call on the root instance before anything else registers a hook, so that it runs first. */
export function rememberRouteFacts(app: FastifyInstance): void {
  app.decorateRequest('routeFacts', undefined);
  app.addHook('onRequest', (request, _reply, done) => {
    const { url, config } = request.routeOptions;
    request.routeFacts = { url, config };
    done();
  });
}

/** The request's route facts; read afresh for a request refused before its hooks ran. */
export function routeFactsOf(request: FastifyRequest): RouteFacts {
  if (request.routeFacts !== undefined) return request.routeFacts;
  const { url, config } = request.routeOptions;
  return { url, config };
}
