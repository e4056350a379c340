/** Term deposit routes (docs/term-deposits.md): initiate, and retrieve under both spellings. */
import { identifierCharsMax, identifierPattern } from '../../operations/schemas/field-limits.js';
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { errorCatalogue as E } from '../../core/error-catalogue.js';
import type { CoreBankingPort } from '../../core/port.js';
import { ApiError } from '../error-record.js';
import type { OperationRunner } from '../../operations/operation-runner.js';
import { termDepositInitiationOperation as operation } from '../../operations/registry.js';
import { initiateScope, retrieveScope } from '../../core/scopes.js';
import { errorResponses } from '../../operations/schemas/common.js';
import {
  TermDepositAcceptedSchema,
  TermDepositInitiationRequestSchema,
  TermDepositInitiationResponseSchema,
  TermDepositRetrieveResponseSchema,
} from '../../operations/schemas/term-deposit.js';
import { retrieveResponse } from '../../operations/term-deposit-presenter.js';
import { invocationOf, sendOutcome } from './outcome.js';
import { businessSecurity } from '../../docs-page/openapi-info.js';
import type { BusinessRouteConfig } from '../request-context.js';
import { scenarioHeaderSchemas } from '../scenario-header.js';


const tdConfig = (scope: string, audited?: string): { business: BusinessRouteConfig } => ({
  business: { family: 'TD', wrapped: false, scope, auditedOperation: audited },
});

export async function termDepositRoutes(app: FastifyInstance, options: { core: CoreBankingPort; runner: OperationRunner }): Promise<void> {

  app.post(
    '/v1/term-deposits/initiate',
    {
      config: tdConfig(initiateScope, operation.name),
      schema: {
        summary: 'Constitute (initiate) a term deposit',
        description:
          'Debits the source account and creates the contract; the answer\'s `termDepositAccount` is the contract number to retrieve. The example succeeds on the demo data: its `valueDate` is the core\'s current business date (the next business day when that is a weekend or holiday). The same body sent again within the duplicate window (10 minutes by default) without an `x-correlation-id` is a 409 naming the first operation, whatever its outcome (a 422 included): change `amountValue` or send a new `x-correlation-id` to try again.',
        operationId: 'initiateTermDeposit',
        tags: ['Term deposits'],
        security: businessSecurity(initiateScope),
        headers: correlationHeaders,
        body: Type.Ref(TermDepositInitiationRequestSchema),
        response: {
          200: Type.Ref(TermDepositInitiationResponseSchema),
          202: Type.Ref(TermDepositAcceptedSchema),
          ...errorResponses(false, [400, 401, 403, 404, 409, 413, 415, 422, 429, 500, 502, 503, 504]),
        },
      },
    },
    async (request, reply) => sendOutcome(reply, await options.runner.run(operation, invocationOf(request)), false),
  );

  for (const segment of ['term-deposits', 'term-deposit']) {
    app.get<{ Params: { termDepositId: string } }>(
      `/v1/${segment}/:termDepositId/retrieve`,
      {
        config: tdConfig(retrieveScope),
        schema: {
          summary: `Retrieve a term deposit (also spelled /v1/${segment === 'term-deposits' ? 'term-deposit' : 'term-deposits'}/...)`,
          operationId: segment === 'term-deposits' ? 'retrieveTermDeposit' : 'retrieveTermDepositSingular',
          tags: ['Term deposits'],
          security: businessSecurity(retrieveScope),
          params: Type.Object({
            termDepositId: Type.String({
              minLength: 1,
              maxLength: identifierCharsMax,
              pattern: identifierPattern,
              description: 'The contract number: `termDepositAccount` in the answer of the initiation (POST /v1/term-deposits/initiate)',
              examples: ['TD000012345678901'],
            }),
          }),
          response: { 200: Type.Ref(TermDepositRetrieveResponseSchema), ...errorResponses(false, [400, 401, 403, 404, 429, 500, 503]) },
        },
      },
      async (request) => {
        const deposit = await options.core.retrieveTermDeposit(request.params.termDepositId);
        if (!deposit) throw new ApiError(E.termDepositNotFound, `term deposit ${request.params.termDepositId} not found`);
        return retrieveResponse(deposit);
      },
    );
  }
}

export const correlationHeaders = Type.Object({
  'x-correlation-id': Type.Optional(Type.String({ description: '1-128 characters of A-Z a-z 0-9 . _ : -; generated when absent; echoed on every response' })),
  'x-channel': Type.Optional(Type.String({ description: 'Originating channel, e.g. SOP, MOBILE, BACKOFFICE' })),
  prefer: Type.Optional(Type.String({ description: 'respond-async → 202 (RFC 7240)' })),
  ...scenarioHeaderSchemas,
});
