/**
 * The operator API's webhook routes (docs/webhooks.md, "Registering endpoints"; mounted under
 * /operator/v1 by the operator plugin, which authenticates every request): endpoints of clients and
 * the deliveries of their events. A secret is answered once, when the endpoint is registered;
 * nothing lists it again. Errors are `{ status, reason, message }` with a message that says what to
 * do.
 */
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import type { Vault } from '../../auth/vault.js';
import type { Clock } from '../../core/clock.js';
import type { Store } from '../../store/connect.js';
import type { TargetPolicy } from '../../webhooks/target-address.js';
import { deliveryStatuses, listDeliveries, type DeliveryStatus } from '../../store/webhooks.js';
import { addEndpoint, EndpointRefused, endpointsOf, removeEndpoint, retryDeliveryNow } from '../../webhooks/webhook-admin.js';
import { operatorErrorBody } from '../errors.js';
import { countSchema, logLimitDefault, pageFromAll, pageFromOneMore, pageParameters, pageQuery, recordsLimitDefault } from './query.js';

export interface WebhookRoutesOptions {
  store: Store;
  /** Whose time registers endpoints and makes a retried delivery due (src/core/clock.ts). */
  clock: Clock;
  vault: Vault;
  /** Which URLs may be registered: the instance's own delivery policy (--webhook-allow-private). */
  targets: TargetPolicy;
  /** Wakes the instance's webhook service after a retry, so that it does not wait for its next pass. */
  kick?: () => void;
}

/** Longest identifier, realm or client id accepted in a request. */
const identifierCharsMax = 255;

function refuse(reply: FastifyReply, status: 400 | 404, message: string) {
  return reply.code(status).send(operatorErrorBody(status, message));
}

function stringField(body: Record<string, unknown>, name: string): string | undefined {
  const value = body[name];
  return typeof value === 'string' && value !== '' && value.length <= identifierCharsMax * 8 ? value : undefined;
}

export function webhookRoutes(options: WebhookRoutesOptions): FastifyPluginAsync {
  const { store, vault, targets } = options;
  return async (app) => {
    // Every endpoint, oldest first, or one client's (realm and clientId together): the store answers
    // them all, and a page is cut from them like every other list's.
    app.get<{ Querystring: { realm?: string; clientId?: string; limit?: string; offset?: string } }>(
      '/webhooks/endpoints',
      {
        schema: {
          querystring: {
            type: 'object',
            additionalProperties: false,
            properties: { realm: { type: 'string', minLength: 1, maxLength: identifierCharsMax }, clientId: { type: 'string', minLength: 1, maxLength: identifierCharsMax }, ...pageQuery },
          },
        },
      },
      async (request, reply) => {
        const { realm, clientId } = request.query;
        if ((realm === undefined) !== (clientId === undefined)) return refuse(reply, 400, 'Give realm and clientId together (one client\'s endpoints), or neither (every endpoint)');
        const page = pageParameters(request.query, { limitDefault: recordsLimitDefault });
        const endpoints = await endpointsOf(store.db, realm !== undefined && clientId !== undefined ? { realm, clientId } : undefined);
        const { items, more } = pageFromAll(endpoints, page);
        return { endpoints: items, more };
      },
    );

    app.post('/webhooks/endpoints', async (request, reply) => {
      const body = request.body;
      if (typeof body !== 'object' || body === null || Array.isArray(body)) {
        return refuse(reply, 400, 'Send a JSON object: { "realm", "clientId", "url", "eventTypes"? }');
      }
      const fields = body as Record<string, unknown>;
      const unknown = Object.keys(fields).filter((name) => !['realm', 'clientId', 'url', 'eventTypes'].includes(name));
      if (unknown.length > 0) return refuse(reply, 400, `Unknown field ${unknown.join(', ')}: send realm, clientId, url and optionally eventTypes (the secret is generated)`);
      const realm = stringField(fields, 'realm');
      const clientId = stringField(fields, 'clientId');
      const url = stringField(fields, 'url');
      if (realm === undefined || clientId === undefined || url === undefined) return refuse(reply, 400, 'realm, clientId and url are required, as non-empty strings');
      const eventTypes = fields.eventTypes ?? [];
      if (!Array.isArray(eventTypes) || eventTypes.some((type) => typeof type !== 'string')) {
        return refuse(reply, 400, 'eventTypes must be an array of event type names, e.g. ["operation.executed"]');
      }
      try {
        const endpoint = await addEndpoint(store.db, vault, { realm, clientId, url, eventTypes: eventTypes as string[] }, targets, options.clock.now());
        return reply.code(201).send(endpoint);
      } catch (error) {
        if (error instanceof EndpointRefused) return refuse(reply, 400, error.message);
        throw error;
      }
    });

    app.delete<{ Params: { id: string } }>('/webhooks/endpoints/:id', async (request, reply) => {
      if (!(await removeEndpoint(store.db, request.params.id))) return refuse(reply, 404, `Endpoint ${request.params.id} does not exist: GET /operator/v1/webhooks/endpoints lists them`);
      return reply.code(204).send();
    });

    // Newest first, `limit` as every list takes it. No `offset`: the store reads deliveries from the
    // newest only (filter by status to reach older failures).
    app.get<{ Querystring: { status?: string; limit?: string; reference?: string } }>(
      '/webhooks/deliveries',
      {
        schema: {
          querystring: {
            type: 'object',
            additionalProperties: false,
            properties: { status: { type: 'string', maxLength: 32 }, limit: countSchema, reference: { type: 'string', minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9-]+$' } },
          },
        },
      },
      async (request, reply) => {
        const { limit } = pageParameters(request.query, { limitDefault: logLimitDefault });
        const status = request.query.status === '' ? undefined : request.query.status;
        if (status !== undefined && !(deliveryStatuses as readonly string[]).includes(status)) return refuse(reply, 400, `status must be one of ${deliveryStatuses.join(', ')}`);
        const { reference } = request.query;
        const rows = await listDeliveries(store.db, { limit: limit + 1, ...(status === undefined ? {} : { status: status as DeliveryStatus }), ...(reference === undefined ? {} : { reference }) });
        const { items, more } = pageFromOneMore(rows, limit);
        return { deliveries: items, more };
      },
    );

    app.post<{ Params: { id: string } }>('/webhooks/deliveries/:id/retry', async (request, reply) => {
      if (!(await retryDeliveryNow(store.db, request.params.id, options.clock.now()))) {
        return refuse(reply, 404, `Delivery ${request.params.id} does not exist or was delivered already: GET /operator/v1/webhooks/deliveries lists them`);
      }
      options.kick?.();
      return reply.code(202).send({ id: request.params.id, status: 'pending' });
    });
  };
}
