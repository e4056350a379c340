/**
 * The operator API (`/operator/v1`, issue 11): what the console reads and the controls it offers,
 * for operators only. Every route, the other branches' route modules included, is registered in
 * this plugin's scope, so the authentication hook (auth.ts) runs before each of them.
 */
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import type { TokenVerifier } from '../api/bearer-auth.js';
import type { Store } from '../store/connect.js';
import { deleteOperatorSession } from '../store/operator-sessions.js';
import { operatorScope } from '../core/scopes.js';
import { operatorAuthHook, sessionCookieName } from './auth.js';
import { handleOperatorError } from './errors.js';
import type { Clock } from '../core/clock.js';
import type { SenderConstraint } from '../api/sender-constraint.js';

export const operatorApiPrefix = '/operator/v1';

export interface OperatorApiOptions {
  store: Store;
  verifier: TokenVerifier;
  /** Sandbox mode: the console shows the sandbox controls (reset). */
  sandbox: boolean;
  /** The service's public base URL (its origin is accepted in `Origin`). */
  publicUrl: () => string;
  /** The instance's clock: whether a console session has expired. */
  clock: Clock;
  /** DPoP- and certificate-bound operator tokens (docs/auth.md, "DPoP at the API"). */
  constraint: SenderConstraint;
  /** Route modules (this branch's read routes, business date, webhooks, sandbox), registered behind the authentication hook. */
  routes: FastifyPluginAsync[];
}

export async function operatorApi(app: FastifyInstance, options: OperatorApiOptions): Promise<void> {
  // The operator API is documented in docs/console.md, not in the business API's public document
  // (/openapi.json, the Postman collection): every route of this scope is hidden from it.
  app.addHook('onRoute', (route) => {
    route.schema = { ...route.schema, hide: true };
  });
  app.decorateRequest('operator', undefined);
  app.setErrorHandler(handleOperatorError);
  app.addHook('onRequest', operatorAuthHook({ store: options.store, verifier: options.verifier, publicUrl: options.publicUrl, clock: options.clock, constraint: options.constraint }));
  app.addHook('onSend', async (_request, reply) => {
    // Operator answers name customers and balances: never kept by a cache.
    void reply.header('cache-control', 'no-store');
  });

  app.get('/session', { schema: { hide: true } }, async (request) => {
    const operator = request.operator;
    if (operator?.via === 'bearer') return { via: 'bearer', clientId: operator.clientId, issuer: operator.issuer, scope: operatorScope, sandbox: options.sandbox };
    return { via: 'session', issuedBy: operator?.issuedBy, expiresAt: operator?.expiresAt, sandbox: options.sandbox };
  });

  app.post('/session/logout', { schema: { hide: true } }, async (request, reply) => {
    if (request.operator?.via === 'session') await deleteOperatorSession(options.store.db, request.operator.sessionValue);
    return reply
      .code(204)
      .header('set-cookie', `${sessionCookieName}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0`)
      .send();
  });

  for (const routes of options.routes) await app.register(routes);
}
