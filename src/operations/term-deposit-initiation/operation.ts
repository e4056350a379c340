/**
 * The term deposit initiation (docs/term-deposits.md) as one operation: its facts, its checks
 * that need no stored data, its 200 and 202 bodies, and the parts of this folder each other layer
 * plays (docs/adding-an-operation.md). The folder also holds the retrieve of the deposit it makes
 * (route.ts): a read, not an operation, whose scope and paths are listed here with the
 * operation's.
 */
import type { TermDeposit } from '../../core/port.js';
import { initiateScope, retrieveScope } from '../../core/scopes.js';
import { validateInitiation, type TermDepositInitiation, type TermDepositInitiationBody } from '../../core/term-deposits/initiation.js';
import type { NumberSource } from '../../core/money.js';
import { defineOperation, type StoredRequest } from '../operation-definition.js';
import { initiationResponse } from './presenter.js';
import type { TermDepositAccepted, TermDepositInitiationResponse } from './schemas.js';

export const termDepositInitiation = defineOperation({
  name: 'initiateTermDeposit',
  family: 'TD',
  scope: initiateScope,
  scopes: { [initiateScope]: 'Initiate (constitute) term deposits', [retrieveScope]: 'Retrieve term deposits' },
  route: {
    method: 'POST',
    path: '/v1/term-deposits/initiate',
    readPaths: ['/v1/term-deposits/:termDepositId/retrieve', '/v1/term-deposit/:termDepositId/retrieve'],
    wrapped: false,
  },
  tag: {
    name: 'Term deposits',
    description: `Constitute a term deposit from a customer's account, and retrieve it with its expected interest. Scopes: \`${initiateScope}\` to initiate, \`${retrieveScope}\` to retrieve.`,
  },
  port: { execute: 'constituteTermDeposit', lookup: 'findTermDepositConstitution' },
  // The route's schema has validated the body's shape: what remains are the 400s of
  // docs/term-deposits.md, "Checks, in order".
  validate: (request: StoredRequest, numbers?: NumberSource): TermDepositInitiation => validateInitiation(request.body as TermDepositInitiationBody, numbers),
  present: (deposit: TermDeposit): TermDepositInitiationResponse => initiationResponse(deposit),
  outcomeOf: () => 'Executed',
  accepted: (reference): TermDepositAccepted => ({ operationReference: reference, termDepositStatus: 'Pending' }),
  parts: {
    route: () => import('./route.js'),
    wire: () => import('./wire.js'),
    coreHandler: () => import('./core-handler.js'),
    examples: () => import('./examples.js'),
  },
});

