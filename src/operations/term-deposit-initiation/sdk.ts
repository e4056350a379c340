/**
 * The SDK's term deposit calls (`client.termDeposits`, a session's too): the initiation and the
 * retrieve (docs/term-deposits.md). Type imports only: the SDK loads no server code.
 */
import type { CallOptions, CallTransport, Execution, PendingBody, Read } from '../../sdk/calls.js';
import type { SessionIdentity } from '../../sdk/token-provider.js';
import type { TermDepositAccepted, TermDepositInitiationRequest, TermDepositInitiationResponse, TermDepositRetrieveResponse } from './schemas.js';

export type TermDepositInitiation = Execution<TermDepositInitiationResponse, TermDepositAccepted>;

export function termDepositCalls(transport: CallTransport, identity: SessionIdentity) {
  return {
    initiate: (request: TermDepositInitiationRequest, options: CallOptions = {}): Promise<TermDepositInitiation> =>
      transport.execute(identity, 'POST', '/v1/term-deposits/initiate', request, options) as Promise<TermDepositInitiation>,
    retrieve: (termDepositId: string, options: CallOptions = {}): Promise<Read<TermDepositRetrieveResponse>> =>
      transport.read(identity, `/v1/term-deposits/${encodeURIComponent(termDepositId)}/retrieve`, options) as Promise<Read<TermDepositRetrieveResponse>>,
  };
}

export const pending: PendingBody = {
  operation: 'initiateTermDeposit',
  accepted: (reference): TermDepositAccepted => ({ operationReference: reference, termDepositStatus: 'Pending' }),
};
