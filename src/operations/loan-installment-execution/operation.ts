/**
 * The merchandising loan installment execution (docs/loans.md) as one operation: its facts, its
 * checks that need no stored data, its 200 and 202 bodies, and the parts of this folder each other
 * layer plays (docs/adding-an-operation.md).
 */
import { validateExecution, type LoanExecutionBody, type LoanInstallmentExecution } from '../../core/loans/execution-request.js';
import type { LoanInstallmentResult } from '../../core/port.js';
import { executeScope } from '../../core/scopes.js';
import type { NumberSource } from '../../core/money.js';
import { defineOperation, type StoredRequest } from '../operation-definition.js';
import type { LoanExecutionAccepted, LoanExecutionResponse } from './schemas.js';

export const loanInstallmentExecution = defineOperation({
  name: 'executeMerchandisingLoanPayment',
  family: 'ML',
  scope: executeScope,
  scopes: { [executeScope]: 'Execute (pay) merchandising loan installments' },
  route: {
    method: 'POST',
    path: '/v1/merchandising-loan/:merchandisingLoanId/repayment-schedules/:installmentSequence/execute',
    readPaths: [],
    // The loan operation wraps its error records in {"error": ...} (docs/loans.md).
    wrapped: true,
  },
  tag: {
    name: 'Merchandising loans',
    description: `Pay one installment of a merchandising loan facility (whole or partial), charges and taxes from an expense account. Scope: \`${executeScope}\`. Errors are wrapped in \`{"error": ...}\`.`,
  },
  port: { execute: 'executeLoanInstallment', lookup: 'findLoanInstallmentExecution' },
  // The route's schema has validated the body's shape and the path parameters' patterns.
  validate: (request: StoredRequest, numbers?: NumberSource): LoanInstallmentExecution =>
    validateExecution(request.body as LoanExecutionBody, request.params.merchandisingLoanId ?? '', Number(request.params.installmentSequence), numbers),
  present: (result: LoanInstallmentResult) => loanExecutionResponse(result),
  outcomeOf: (result) => result.facilityStatus,
  accepted: (reference, acceptedAt): LoanExecutionAccepted => ({ executionReference: reference, executionDateTime: acceptedAt.toISOString(), merchandisingLoanFacilityStatus: 'Pending' }),
  rejected: (reference, acceptedAt) => ({ executionReference: reference, executionDateTime: acceptedAt.toISOString(), merchandisingLoanFacilityStatus: 'Rejected' }),
  parts: {
    route: () => import('./route.js'),
    wire: () => import('./wire.js'),
    coreHandler: () => import('./core-handler.js'),
    examples: () => import('./examples.js'),
  },
});

export function loanExecutionResponse(result: LoanInstallmentResult): LoanExecutionResponse {
  return {
    merchandisingLoanOperationId: result.operationId,
    merchandisingLoanFacilityStatus: result.facilityStatus,
    executionReference: result.executionReference,
    executionDateTime: result.executedAt,
  };
}
