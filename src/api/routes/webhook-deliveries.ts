/**
 * GET /v1/webhooks/deliveries (docs/webhooks.md, "Deliveries seen by the client"): a client sees
 * the deliveries of its own events to its own endpoints, newest first, with their status, attempts
 * and last error, so that it can tell a missed event from one never sent. Any valid token of the
 * client; no scope is needed, as for GET /v1/operations. Another client's deliveries are never
 * listed.
 */
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { Store } from '../../store/connect.js';
import { deliveryFailures, deliveryStatuses, listDeliveries, type DeliveryStatus } from '../../store/webhooks.js';
import { errorResponses } from '../../operations/schemas/common.js';
import { errorCatalogue as E } from '../../core/error-catalogue.js';
import { ApiError } from '../error-record.js';
import { clientOfKey } from '../../webhooks/events.js';
import { deliveriesListedDefault, deliveriesListedMax } from '../../webhooks/webhook-admin.js';
import { businessSecurity } from '../../docs-page/business-security.js';

const NullableString = Type.Union([Type.String(), Type.Null()]);

export const WebhookDeliverySchema = Type.Object(
  {
    id: Type.String(),
    eventId: Type.String({ description: 'The webhook-id header of every attempt' }),
    eventType: Type.String(),
    endpointId: Type.String(),
    url: Type.String(),
    status: Type.Union(deliveryStatuses.map((status) => Type.Literal(status))),
    attempts: Type.Integer(),
    lastStatusCode: Type.Union([Type.Integer(), Type.Null()]),
    lastError: Type.Union([...deliveryFailures.map((failure) => Type.Literal(failure)), Type.Null()], {
      description:
        'How the last failed attempt ended: http_error (the status is lastStatusCode), timeout, connection_failed, forbidden_target (the URL or an address its host resolves to is not public: docs/webhooks.md) or signing_failed',
    }),
    nextAttemptAt: NullableString,
    deliveredAt: NullableString,
    createdAt: Type.String(),
  },
  { $id: 'WebhookDelivery' },
);

export async function webhookDeliveryRoutes(app: FastifyInstance, options: { store: Store }): Promise<void> {
  app.addSchema(WebhookDeliverySchema);
  app.get<{ Querystring: { limit?: string; status?: DeliveryStatus } }>(
    '/v1/webhooks/deliveries',
    {
      config: { business: { family: undefined, wrapped: false, scope: undefined, auditedOperation: undefined } },
      schema: {
        summary: 'Deliveries of the client\'s signed events to its webhook endpoints, newest first',
        operationId: 'listWebhookDeliveries',
        tags: ['Webhooks'],
        security: businessSecurity(undefined),
        querystring: Type.Object(
          {
            // Query strings are not coerced by the business API's validator: the digits are checked here, the bound in the handler.
            limit: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,2}$', description: `1 to ${deliveriesListedMax}; ${deliveriesListedDefault} by default` })),
            status: Type.Optional(Type.Union(deliveryStatuses.map((status) => Type.Literal(status)))),
          },
          { additionalProperties: false },
        ),
        response: { 200: Type.Object({ deliveries: Type.Array(Type.Ref(WebhookDeliverySchema)) }), ...errorResponses(false, [400, 401, 403, 429, 500, 503]) },
      },
    },
    async (request) => {
      const principal = request.principal;
      if (!principal) throw new Error('the business API authenticated no principal');
      const limit = request.query.limit === undefined ? deliveriesListedDefault : Number(request.query.limit);
      if (limit > deliveriesListedMax) throw new ApiError(E.invalidField, `limit must be at most ${deliveriesListedMax}`);
      const client = clientOfKey(principal.clientKey);
      const deliveries = await listDeliveries(options.store.db, {
        client,
        limit,
        ...(request.query.status === undefined ? {} : { status: request.query.status }),
      });
      return { deliveries };
    },
  );
}
