/**
 * POST /v1/merchandising-loan/{merchandisingLoanId}/repayment-schedules/{installmentSequence}/execute
 * (docs/loans.md): errors wrapped in {"error": ...}, 200 / 202 / 204.
 */
import { identifierCharsMax, identifierPattern } from '../../operations/schemas/field-limits.js';
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { CoreBankingPort } from '../../core/port.js';
import type { OperationRunner } from '../../operations/operation-runner.js';
import { executeScope } from '../../core/scopes.js';
import { loanInstallmentExecutionOperation as operation } from '../../operations/registry.js';
import type { BusinessRouteConfig } from '../request-context.js';
import { errorResponses } from '../../operations/schemas/common.js';
import { LoanExecutionAcceptedSchema, LoanExecutionRequestSchema, LoanExecutionResponseSchema } from '../../operations/schemas/merchandising-loan.js';
import { correlationHeaders } from './term-deposits.js';
import { invocationOf, preferences, sendOutcome } from './outcome.js';
import { businessSecurity } from '../../docs-page/openapi-info.js';

const config: { business: BusinessRouteConfig } = {
  business: { family: 'ML', wrapped: true, scope: executeScope, auditedOperation: operation.name },
};

export async function merchandisingLoanRoutes(app: FastifyInstance, options: { core: CoreBankingPort; runner: OperationRunner }): Promise<void> {
  app.post(
    '/v1/merchandising-loan/:merchandisingLoanId/repayment-schedules/:installmentSequence/execute',
    {
      config,
      schema: {
        summary: 'Execute (pay) one installment of a merchandising loan facility',
        description:
          'Pays the amount from the PaymentAccount and the charges, fees and taxes from the ExpenseAccount. The example pays 1,000.00 USD of installment 1 of the demo facility 7000000001 (PartiallyExecuted): it succeeds again until the installment is paid. The same body sent again within the duplicate window (10 minutes) without an `x-correlation-id` is a 409: change the amount to try again.',
        operationId: 'executeMerchandisingLoanPayment',
        tags: ['Merchandising loans'],
        security: businessSecurity(executeScope),
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
          ...errorResponses(true, [400, 401, 403, 404, 409, 413, 415, 422, 429, 500, 502, 503, 504]),
        },
      },
    },
    async (request, reply) => {
      const outcome = await options.runner.run(operation, invocationOf(request));
      return sendOutcome(reply, outcome, true, preferences(request).has('return=minimal'));
    },
  );
}
