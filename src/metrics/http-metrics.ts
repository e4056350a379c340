/**
 * Counts every HTTP answer of the server (an `onResponse` hook on the root instance, so that it
 * sees every route and the not-found handler) by route pattern, method and status, and the token
 * endpoint's answers by realm. Only the route pattern and the realm path segment are read from
 * the request: never the URL, a header or the body.
 */
import type { FastifyInstance } from 'fastify';
import type { Metrics } from './registry.js';
import { routeFactsOf } from '../route-facts.js';

/** The token endpoint's route pattern (src/auth/routes.ts); a test proves tokens are counted through it. */
export const tokenRoutePattern = '/realms/:realm/protocol/openid-connect/token';

/** Adds the hook to `app` itself: call it on the root instance before registering routes. */
export function countHttpRequests(app: FastifyInstance, metrics: Metrics): void {
  // A callback hook: an async one cost a promise and a microtask on every answer.
  app.addHook('onResponse', (request, reply, done) => {
    const route = routeFactsOf(request).url;
    const status = reply.statusCode;
    metrics.httpRequestFinished({ route, method: request.method, status, durationSeconds: reply.elapsedTime / 1000 });
    if (route === tokenRoutePattern && request.method === 'POST') {
      const realm = (request.params as { realm?: unknown } | undefined)?.realm;
      metrics.tokenRequestFinished(typeof realm === 'string' ? realm : '', status);
    }
    done();
  });
}
