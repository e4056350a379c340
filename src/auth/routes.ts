/**
 * HTTP wiring of the auth service, per realm (docs/auth.md, "Endpoints"). This encapsulated plugin
 * parses every body as text so that the token endpoint itself decides what a malformed request is,
 * and maps every failure to an OAuth error body.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Realm } from '../store/realms.js';
import { databaseRetryAfterSeconds, isDatabaseUnavailable } from '../store/engine/database-unavailable.js';
import type { AuthContext } from './auth-context.js';
import { discoveryDocument } from './discovery.js';
import { handleIntrospection } from './introspection.js';
import { OAuthError } from './oauth-error.js';
import { handleTokenRequest, type TokenRequest } from './token-endpoint.js';
import { discoveryRouteSchema, introspectionRouteSchema, jwksRouteSchema, tokenRouteSchema } from './route-schemas.js';

/** Token and introspection requests are a few hundred bytes; this bounds what a caller can send. */
export const authBodyBytesMax = 16 * 1024;

type RealmRoute = { Params: { realm: string } };
type RealmRequest = FastifyRequest<RealmRoute>;

/**
 * The schemas of these routes document them (the API docs page) and nothing more: the endpoints
 * read and check their forms themselves, and answer exactly what they send.
 */
const documentationOnly = {
  validatorCompiler: () => () => true,
  serializerCompiler: () => (data: unknown) => JSON.stringify(data),
};

export async function authRoutes(app: FastifyInstance, options: { ctx: AuthContext }): Promise<void> {
  const { ctx } = options;
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string', bodyLimit: authBodyBytesMax }, (_request, body, done) => done(null, body));
  app.setErrorHandler(oauthErrorHandler);

  const noStore = (_request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    reply.header('Cache-Control', 'no-store').header('Pragma', 'no-cache');
    done();
  };

  app.post<RealmRoute>('/realms/:realm/protocol/openid-connect/token', { onRequest: noStore, schema: tokenRouteSchema, ...documentationOnly }, async (request, reply) => {
    // From the snapshot (at most a second old): a key rotated meanwhile stays published until the
    // tokens it signs expire, and a not-before is set to "now", so no token is born revoked.
    const realm = await realmOf(ctx, request);
    const response = await handleTokenRequest(ctx, realm, tokenRequestOf(ctx, request));
    return reply.send(response);
  });

  app.post<RealmRoute>('/realms/:realm/protocol/openid-connect/token/introspect', { onRequest: noStore, schema: introspectionRouteSchema, ...documentationOnly }, async (request, reply) => {
    // Read afresh: "active" reflects the realm's keys and not-before as stored now.
    const realm = await realmOf(ctx, request, true);
    return reply.send(await handleIntrospection(ctx, realm, tokenRequestOf(ctx, request)));
  });

  app.get<RealmRoute>('/realms/:realm/protocol/openid-connect/certs', { schema: jwksRouteSchema, ...documentationOnly }, async (request, reply) => {
    // Read afresh: a key is published here before any instance signs with it.
    const realm = await realmOf(ctx, request, true);
    const keys = await ctx.keyring.publishedKeys(realm);
    return reply.header('Cache-Control', 'no-cache').send({ keys: keys.map((key) => key.publicJwk) });
  });

  app.get<RealmRoute>('/realms/:realm/.well-known/openid-configuration', { schema: discoveryRouteSchema, ...documentationOnly }, async (request, reply) => {
    const realm = await realmOf(ctx, request);
    return reply.send(discoveryDocument(ctx.issuer(realm.name), { profile: realm.profile, clientCertificates: ctx.clientCertificates !== undefined }));
  });
}

/** The realm of the URL from the auth snapshot (`fresh`: from the store); one not found is read again before the 404. */
async function realmOf(ctx: AuthContext, request: RealmRequest, fresh = false): Promise<Realm> {
  const name = request.params.realm;
  const realm = (await ctx.snapshot.realm(name, fresh)) ?? (fresh ? undefined : await ctx.snapshot.realm(name, true));
  if (!realm) throw new OAuthError(404, 'not_found', 'Realm does not exist');
  return realm;
}

function tokenRequestOf(ctx: AuthContext, request: FastifyRequest): TokenRequest {
  return {
    contentType: request.headers['content-type'],
    authorization: request.headers.authorization,
    body: request.body,
    rawHeaders: request.raw.rawHeaders,
    // trustProxy is off: this is the TCP peer, which a caller cannot forge with a header.
    sourceAddress: request.ip,
    clientCertificate: ctx.clientCertificates?.of(request.raw),
  };
}

function oauthErrorHandler(error: FastifyError | OAuthError, request: FastifyRequest, reply: FastifyReply): void {
  if (error instanceof OAuthError) {
    if (error.logDetail) request.log.info({ oauthError: error.error, detail: error.logDetail }, 'oauth request refused');
    void reply.code(error.status).headers(error.headers).send(error.toBody());
    return;
  }
  const status = error.statusCode ?? 500;
  if (status === 413) {
    void reply.code(413).send({ error: 'invalid_request', error_description: `The request body exceeds ${authBodyBytesMax} bytes` });
    return;
  }
  if (status >= 400 && status < 500) {
    void reply.code(400).send({ error: 'invalid_request', error_description: 'The request is malformed' });
    return;
  }
  if (isDatabaseUnavailable(error)) {
    // RFC 6749 §5.2 has no 503 code; `temporarily_unavailable` is what its authorization endpoint uses for the same.
    request.log.warn({ err: error }, 'auth endpoint met a database outage');
    void reply.code(503).header('retry-after', String(databaseRetryAfterSeconds)).send({ error: 'temporarily_unavailable', error_description: 'The service is temporarily unavailable; try again shortly' });
    return;
  }
  request.log.error({ err: error }, 'auth endpoint failed');
  void reply.code(500).send({ error: 'server_error', error_description: 'Unexpected internal error' });
}
