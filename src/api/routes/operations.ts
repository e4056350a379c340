/**
 * GET /v1/operations/{reference} (docs/api.md, "200, 202, 204"): the state of an operation, for the
 * client that submitted it and with the scope of the original operation. Another client's reference
 * is 404, exactly as an unknown one, so references leak nothing.
 */
import { identifierCharsMax, identifierPattern } from '../../operations/schemas/field-limits.js';
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { errorCatalogue as E } from '../../core/error-catalogue.js';
import { findOperation } from '../../store/operations.js';
import type { Store } from '../../store/connect.js';
import { ApiError } from '../error-record.js';
import { requireScope } from '../guards.js';
import type { OperationRunner } from '../../operations/operation-runner.js';
import { visibleStatus } from '../../operations/operation-states.js';
import { errorResponses } from '../../operations/schemas/common.js';
import { OperationViewSchema, type OperationView } from '../../operations/schemas/operation-view.js';
import { businessSecurity } from '../../docs-page/business-security.js';

export async function operationRoutes(app: FastifyInstance, options: { store: Store; runner: OperationRunner }): Promise<void> {
  app.get<{ Params: { reference: string } }>(
    '/v1/operations/:reference',
    {
      config: { business: { family: undefined, wrapped: false, scope: undefined, auditedOperation: undefined } },
      schema: {
        summary: 'State of an operation accepted with 202 (or any operation of the client)',
        operationId: 'getOperation',
        tags: ['Operations'],
        security: businessSecurity(undefined),
        params: Type.Object({
          reference: Type.String({
            minLength: 1,
            maxLength: identifierCharsMax,
            pattern: identifierPattern,
            description: 'The `operationReference` (term deposit) or `executionReference` (loan) of a 202 answer',
            examples: ['0192f0c4-5b6e-7c1a-9d2e-3f4a5b6c7d8e'],
          }),
        }),
        response: { 200: Type.Ref(OperationViewSchema), ...errorResponses(false, [401, 403, 404, 429, 500, 503]) },
      },
    },
    async (request) => {
      const stored = await findOperation(options.store.db, request.params.reference);
      if (!stored || stored.clientKey !== request.principal?.clientKey) {
        throw new ApiError(E.operationNotFound, `operation ${request.params.reference} not found`);
      }
      requireScope(request, stored.scope);
      request.operationReference = stored.reference;
      const record = await options.runner.refresh(stored);
      const view: OperationView = {
        reference: record.reference,
        operation: record.operation,
        // An outcome not final yet (queued, in flight, unknown) shows as Pending.
        status: visibleStatus(record.status),
      };
      if (record.result !== undefined) view.result = record.result;
      // Executed shows its result alone: a record stored before settling cleared the error may
      // still hold the 502/504 of the unknown outcome it once was.
      if (record.error !== undefined && record.status !== 'Executed') view.error = record.error as OperationView['error'];
      return view;
    },
  );
}
