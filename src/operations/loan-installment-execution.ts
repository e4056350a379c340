/**
 * The merchandising loan installment execution (docs/loans.md) as one operation:
 * its checks that need no stored data, the core call, the reconciliation lookup, the 200 and 202
 * bodies. The route, the SDK (its types) and the OpenAPI document (its schemas) come from here.
 */
import { validateExecution, type LoanExecutionBody, type LoanInstallmentExecution } from '../core/loans/execution-request.js';
import type { LoanInstallmentResult } from '../core/port.js';
import { executeScope } from '../core/scopes.js';
import type { OperationDefinition } from './operation-definition.js';
import type { LoanExecutionAccepted, LoanExecutionResponse } from './schemas/merchandising-loan.js';

export {
  LoanExecutionAcceptedSchema,
  LoanExecutionRequestSchema,
  LoanExecutionResponseSchema,
  type LoanExecutionAccepted,
  type LoanExecutionRequest,
  type LoanExecutionResponse,
} from './schemas/merchandising-loan.js';

export const loanInstallmentExecution: OperationDefinition<LoanInstallmentExecution, LoanInstallmentResult, LoanExecutionResponse, LoanExecutionAccepted> = {
  name: 'executeMerchandisingLoanPayment',
  scope: executeScope,
  family: 'ML',
  // The route's schema has validated the body's shape and the path parameters' patterns.
  validate: (request, numbers) =>
    validateExecution(request.body as LoanExecutionBody, request.params.merchandisingLoanId ?? '', Number(request.params.installmentSequence), numbers),
  execute: (core, reference, command) => core.executeLoanInstallment(reference, command),
  lookup: (core, reference) => core.findLoanInstallmentExecution(reference),
  present: loanExecutionResponse,
  outcomeOf: (result) => result.facilityStatus,
  accepted: (reference, acceptedAt) => ({ executionReference: reference, executionDateTime: acceptedAt.toISOString(), merchandisingLoanFacilityStatus: 'Pending' }),
  rejected: (reference, acceptedAt) => ({ executionReference: reference, executionDateTime: acceptedAt.toISOString(), merchandisingLoanFacilityStatus: 'Rejected' }),
};

export function loanExecutionResponse(result: LoanInstallmentResult): LoanExecutionResponse {
  return {
    merchandisingLoanOperationId: result.operationId,
    merchandisingLoanFacilityStatus: result.facilityStatus,
    executionReference: result.executionReference,
    executionDateTime: result.executedAt,
  };
}
