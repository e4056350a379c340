/**
 * POST /v1/merchandising-loan/{merchandisingLoanId}/repayment-schedules/{installmentSequence}/execute
 * (docs/loans.md): errors wrapped in {"error": ...}, 200 / 202 / 204. The business API registers it
 * (src/api/plugin.ts).
 */
import { Type } from '@sinclair/typebox';
import { correlationHeaders, operationRouteConfig, type OperationRoutes } from '../../api/routes/operation-routes.js';
import { invocationOf, preferences, sendOutcome } from '../../api/routes/outcome.js';
import { businessSecurity } from '../../docs-page/business-security.js';
import { errorResponses } from '../schemas/common.js';
import { identifierCharsMax, identifierPattern } from '../schemas/field-limits.js';
import {
  AccountIdentificationSchema,
  LoanExecutionAcceptedSchema,
  LoanExecutionRequestSchema,
  LoanExecutionResponseSchema,
  LoanFacilityStatusSchema,
  MonetaryAmountSchema,
  TypedDateSchema,
} from './schemas.js';

export const routes: OperationRoutes = {
  schemas: [TypedDateSchema, MonetaryAmountSchema, AccountIdentificationSchema, LoanFacilityStatusSchema, LoanExecutionRequestSchema, LoanExecutionResponseSchema, LoanExecutionAcceptedSchema],
  async register(app, { operation, runner }) {
    app.post(
      operation.route.path,
      {
        config: operationRouteConfig(operation),
        schema: {
          summary: 'Execute (pay) one installment of a merchandising loan facility',
          description:
            'Pays the amount from the PaymentAccount and the charges, fees and taxes from the ExpenseAccount. The example pays 1,000.00 USD of installment 1 of the demo facility 7000000001 (PartiallyExecuted): it succeeds again until the installment is paid. The same body sent again within the duplicate window (10 minutes) without an `x-correlation-id` is a 409: change the amount to try again.',
          operationId: operation.name,
          tags: [operation.tag.name],
          security: businessSecurity(operation.scope),
          headers: Type.Object({
            ...correlationHeaders.properties,
            prefer: Type.Optional(Type.String({ description: 'respond-async → 202; return=minimal → 204 on success (RFC 7240)' })),
          }),
          params: Type.Object({
            merchandisingLoanId: Type.String({ minLength: 1, maxLength: identifierCharsMax, pattern: identifierPattern, description: 'The facility: its credit account number', examples: ['7000000001'] }),
            installmentSequence: Type.String({ pattern: '^[1-9][0-9]{0,8}$', description: 'Sequence of the installment, from 1', examples: ['1'] }),
          }),
          body: Type.Ref(LoanExecutionRequestSchema),
          response: {
            200: Type.Ref(LoanExecutionResponseSchema),
            202: Type.Ref(LoanExecutionAcceptedSchema),
            204: { type: 'null', description: 'Executed (Prefer: return=minimal)' },
            ...errorResponses(operation.route.wrapped, [400, 401, 403, 404, 409, 413, 415, 422, 429, 500, 502, 503, 504]),
          },
        },
      },
      async (request, reply) => {
        const outcome = await runner.run(operation, invocationOf(request));
        return sendOutcome(reply, outcome, operation.route.wrapped, preferences(request).has('return=minimal'));
      },
    );
  },
};
