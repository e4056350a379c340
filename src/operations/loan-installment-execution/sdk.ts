/**
 * The SDK's merchandising loan calls (`client.merchandisingLoans`, a session's too): the
 * installment execution (docs/loans.md). Type imports only: the SDK loads no server code.
 */
import type { CallOptions, CallTransport, Execution, PendingBody } from '../../sdk/calls.js';
import type { SessionIdentity } from '../../sdk/token-provider.js';
import type { LoanExecutionAccepted, LoanExecutionRequest, LoanExecutionResponse } from './schemas.js';

export type LoanInstallmentExecution = Execution<LoanExecutionResponse, LoanExecutionAccepted>;

export function merchandisingLoanCalls(transport: CallTransport, identity: SessionIdentity) {
  return {
    executeInstallment: (merchandisingLoanId: string, installmentSequence: number, request: LoanExecutionRequest, options: CallOptions = {}): Promise<LoanInstallmentExecution> =>
      transport.execute(
        identity,
        'POST',
        `/v1/merchandising-loan/${encodeURIComponent(merchandisingLoanId)}/repayment-schedules/${encodeURIComponent(String(installmentSequence))}/execute`,
        request,
        options,
      ) as Promise<LoanInstallmentExecution>,
  };
}

export const pending: PendingBody = {
  operation: 'executeMerchandisingLoanPayment',
  accepted: (reference, at): LoanExecutionAccepted => ({ executionReference: reference, executionDateTime: at.toISOString(), merchandisingLoanFacilityStatus: 'Pending' }),
};
