/**
 * The term deposit initiation (docs/term-deposits.md) as one operation: its checks that
 * need no stored data, the core call, the reconciliation lookup, the 200 and 202 bodies. The
 * route, the SDK (its types) and the OpenAPI document (its schemas) all come from here.
 */
import type { TermDeposit } from '../core/port.js';
import { initiateScope } from '../core/scopes.js';
import { validateInitiation, type TermDepositInitiation, type TermDepositInitiationBody } from '../core/term-deposits/initiation.js';
import type { OperationDefinition } from './operation-definition.js';
import type { TermDepositAccepted, TermDepositInitiationResponse } from './schemas/term-deposit.js';
import { initiationResponse } from './term-deposit-presenter.js';

export {
  TermDepositAcceptedSchema,
  TermDepositInitiationRequestSchema,
  TermDepositInitiationResponseSchema,
  type TermDepositAccepted,
  type TermDepositInitiationRequest,
  type TermDepositInitiationResponse,
} from './schemas/term-deposit.js';

export const termDepositInitiation: OperationDefinition<TermDepositInitiation, TermDeposit, TermDepositInitiationResponse, TermDepositAccepted> = {
  name: 'initiateTermDeposit',
  scope: initiateScope,
  family: 'TD',
  // The route's schema has validated the body's shape: what remains are the 400s of
  // docs/term-deposits.md, "Checks, in order".
  validate: (request, numbers) => validateInitiation(request.body as TermDepositInitiationBody, numbers),
  execute: (core, reference, command) => core.constituteTermDeposit(reference, command),
  lookup: (core, reference) => core.findTermDepositConstitution(reference),
  present: initiationResponse,
  outcomeOf: () => 'Executed',
  accepted: (reference) => ({ operationReference: reference, termDepositStatus: 'Pending' }),
};
