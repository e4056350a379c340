/**
 * The auth service's POST-only endpoints answer another method with 405 and `Allow: POST`, as
 * Keycloak does (issue 12: a GET on the token endpoint was a business-style 404). The body is an
 * OAuth error, so a client library reading `error` learns what happened.
 */
import type { FastifyInstance } from 'fastify';

const postOnly = ['/realms/:realm/protocol/openid-connect/token', '/realms/:realm/protocol/openid-connect/token/introspect'];

export async function postOnlyEndpoints(app: FastifyInstance): Promise<void> {
  for (const url of postOnly) {
    app.route({
      method: ['GET', 'PUT', 'DELETE', 'PATCH'],
      url,
      schema: { hide: true },
      handler: async (request, reply) =>
        reply
          .code(405)
          .header('allow', 'POST')
          .header('cache-control', 'no-store')
          .send({ error: 'invalid_request', error_description: `${request.method} is not allowed here: send a POST with a form body (application/x-www-form-urlencoded)` }),
    });
  }
}
