/**
 * coregate's client SDK (`import { CoregateClient } from 'coregate/sdk'`). It loads no server
 * code: only type imports reach the API's schemas.
 */
export { CoregateClient, CoregateSession } from './client.js';
export type {
  CallOptions,
  CoregateClientOptions,
  Execution,
  LoanInstallmentExecution,
  Read,
  RetryOptions,
  SdkEvent,
  TermDepositInitiation,
} from './client.js';
export { TokenProvider } from './token-provider.js';
export { verifyWebhook, WebhookSignatureError } from './webhooks.js';
export type { WebhookEvent, WebhookEventType, WebhookHeaders } from './webhooks.js';
export type { SessionCredentials, SessionIdentity, TokenProviderOptions } from './token-provider.js';
export type { ClientPrivateKey, ClientSigningAlgorithm, DpopAlgorithm } from './proof-of-possession.js';
export { CoregateApiError, CoregateAuthError, CoregateNetworkError, CoregateTimeoutError } from './errors.js';
export type { ErrorDetail } from './errors.js';
export type { ErrorRecordBody } from '../operations/schemas/common.js';
export type { OperationView } from '../operations/schemas/operation-view.js';
export type {
  TermDepositAccepted,
  TermDepositInitiationRequest,
  TermDepositInitiationResponse,
  TermDepositRetrieveResponse,
} from '../operations/term-deposit-initiation/schemas.js';
export type { LoanExecutionAccepted, LoanExecutionRequest, LoanExecutionResponse, LoanFacilityStatus } from '../operations/loan-installment-execution/schemas.js';
