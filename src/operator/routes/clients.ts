/**
 * The operator API's client controls (mounted under /operator/v1 by the operator plugin, which
 * authenticates every request and needs a JSON body on unsafe methods):
 *   POST /clients/{realm}/{clientId}/revoke-tokens  {}  → 200 { realm, clientId, tokensNotBefore }
 * refuses every token that client holds, as `coregate clients revoke-tokens` does (docs/auth.md,
 * "Client revocation"): its not-before becomes the first whole second after now, the realm's
 * other clients keep their tokens, and its new tokens work. At once on this instance (its auth
 * snapshot forgets the client), within the snapshot's second on the others. 404 when the realm
 * or the client does not exist. Errors: { status, reason, message }.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { AuthSnapshot } from '../../auth/auth-snapshot.js';
import type { Clock } from '../../core/clock.js';
import type { Store } from '../../store/connect.js';
import { revokeClientTokens } from '../../store/clients.js';
import { findRealm } from '../../store/realms.js';
import { OperatorError } from '../errors.js';

export interface ClientRoutesOptions {
  store: Store;
  /** Whose time the revocation is (the token endpoint's and Bearer validation's). */
  clock: Clock;
  /** The instance's auth snapshot: a client revoked here is read afresh by this instance's next request. */
  snapshot: Pick<AuthSnapshot, 'forgetClient'>;
}

/** The longest realm name and client id (migration 0001's columns). */
const realmCharsMax = 64;
const clientIdCharsMax = 128;

export function clientRoutes(options: ClientRoutesOptions): FastifyPluginAsync {
  const { store, clock, snapshot } = options;
  return async (app) => {
    app.post<{ Params: { realm: string; clientId: string } }>(
      '/clients/:realm/:clientId/revoke-tokens',
      {
        schema: {
          hide: true,
          params: {
            type: 'object',
            required: ['realm', 'clientId'],
            properties: { realm: { type: 'string', minLength: 1, maxLength: realmCharsMax }, clientId: { type: 'string', minLength: 1, maxLength: clientIdCharsMax } },
          },
          // Nothing to say: the operator plugin asks every POST for a JSON body, `{}` here.
          body: { type: 'object', additionalProperties: false, properties: {} },
        },
      },
      async (request) => {
        const { realm, clientId } = request.params;
        if (!(await findRealm(store.db, realm))) throw new OperatorError(404, `Realm "${realm}" does not exist: coregate realms list names them`);
        const tokensNotBefore = await revokeClientTokens(store.db, realm, clientId, clock.now());
        if (tokensNotBefore === undefined) throw new OperatorError(404, `Client "${clientId}" does not exist in realm "${realm}": GET /operator/v1/clients lists them`);
        snapshot.forgetClient(realm, clientId);
        request.log.info({ realm, clientId, tokensNotBefore, operator: request.operator?.via === 'bearer' ? request.operator.clientId : 'console session' }, 'client tokens revoked');
        return { realm, clientId, tokensNotBefore };
      },
    );
  };
}
