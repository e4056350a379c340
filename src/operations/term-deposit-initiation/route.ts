/**
 * The term deposit routes (docs/term-deposits.md): the initiation, and the retrieve of the deposit
 * it made under both spellings. The business API registers them (src/api/plugin.ts).
 */
import { Type } from '@sinclair/typebox';
import { errorCatalogue as E } from '../../core/error-catalogue.js';
import { retrieveScope } from '../../core/scopes.js';
import { ApiError } from '../../api/error-record.js';
import { correlationHeaders, operationRouteConfig, readRouteConfig, type OperationRoutes } from '../../api/routes/operation-routes.js';
import { invocationOf, sendOutcome } from '../../api/routes/outcome.js';
import { businessSecurity } from '../../docs-page/business-security.js';
import { errorResponses } from '../schemas/common.js';
import { identifierCharsMax, identifierPattern } from '../schemas/field-limits.js';
import { retrieveResponse } from './presenter.js';
import { TermDepositAcceptedSchema, TermDepositInitiationRequestSchema, TermDepositInitiationResponseSchema, TermDepositRetrieveResponseSchema } from './schemas.js';

export const routes: OperationRoutes = {
  schemas: [TermDepositInitiationRequestSchema, TermDepositInitiationResponseSchema, TermDepositRetrieveResponseSchema, TermDepositAcceptedSchema],
  async register(app, { operation, core, runner }) {
    app.post(
      operation.route.path,
      {
        config: operationRouteConfig(operation),
        schema: {
          summary: 'Constitute (initiate) a term deposit',
          description:
            'Debits the source account and creates the contract; the answer\'s `termDepositAccount` is the contract number to retrieve. The example succeeds on the demo data: its `valueDate` is the core\'s current business date (the next business day when that is a weekend or holiday). The same body sent again within the duplicate window (10 minutes by default) without an `x-correlation-id` is a 409 naming the first operation, whatever its outcome (a 422 included): change `amountValue` or send a new `x-correlation-id` to try again.',
          operationId: operation.name,
          tags: [operation.tag.name],
          security: businessSecurity(operation.scope),
          headers: correlationHeaders,
          body: Type.Ref(TermDepositInitiationRequestSchema),
          response: {
            200: Type.Ref(TermDepositInitiationResponseSchema),
            202: Type.Ref(TermDepositAcceptedSchema),
            ...errorResponses(operation.route.wrapped, [400, 401, 403, 404, 409, 413, 415, 422, 429, 500, 502, 503, 504]),
          },
        },
      },
      async (request, reply) => sendOutcome(reply, await runner.run(operation, invocationOf(request)), operation.route.wrapped),
    );

    // The retrieve, under both spellings of the resource: the plural first, then the singular.
    const spellings = operation.route.readPaths;
    spellings.forEach((path, index) => {
      const resource = (spelling: string | undefined) => (spelling ?? '').split('/:')[0];
      app.get<{ Params: { termDepositId: string } }>(
        path,
        {
          config: readRouteConfig(operation, retrieveScope),
          schema: {
            summary: `Retrieve a term deposit (also spelled ${resource(spellings[1 - index])}/...)`,
            operationId: index === 0 ? 'retrieveTermDeposit' : 'retrieveTermDepositSingular',
            tags: [operation.tag.name],
            security: businessSecurity(retrieveScope),
            params: Type.Object({
              termDepositId: Type.String({
                minLength: 1,
                maxLength: identifierCharsMax,
                pattern: identifierPattern,
                description: `The contract number: \`termDepositAccount\` in the answer of the initiation (${operation.route.method} ${operation.route.path})`,
                examples: ['TD000012345678901'],
              }),
            }),
            response: { 200: Type.Ref(TermDepositRetrieveResponseSchema), ...errorResponses(operation.route.wrapped, [400, 401, 403, 404, 429, 500, 503]) },
          },
        },
        async (request) => {
          const deposit = await core.retrieveTermDeposit(request.params.termDepositId);
          if (!deposit) throw new ApiError(E.termDepositNotFound, `term deposit ${request.params.termDepositId} not found`);
          return retrieveResponse(deposit);
        },
      );
    });
  },
};
