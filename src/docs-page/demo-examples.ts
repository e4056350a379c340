/**
 * The examples of the API docs page (/docs, /openapi.json) and of the Postman collection: request
 * and response bodies of the demo data (demo/sandbox.json: customer C0001, its USD accounts,
 * product TDFIX/TD30-365, loan facility 7000000001 and its installment 1), dated by the core's
 * business date. Swagger UI invents an example from a schema's patterns when none is given (a
 * product code of random punctuation), so every JSON answer gets one here; and the dates follow
 * the business date, so that "Try it out" still succeeds after `coregate core advance`.
 * Values the core generates (contract numbers, references) have the core's own formats.
 */
import { BusinessCalendar } from '../core/business-calendar.js';
import { addDays, daysBetween } from '../core/calendar-date.js';
import { errorCatalogue as E, type ErrorEntry, type Family } from '../core/error-catalogue.js';
import { minorToNumber, toMinorUnits } from '../core/money.js';
import { interestAtMaturityMinor } from '../core/term-deposits/interest.js';
import { errorRecord, type ErrorRecord } from '../operations/error-record.js';
import { loanExecutionExample } from '../operations/schemas/merchandising-loan.js';
import { termDepositInitiationExample } from '../operations/schemas/term-deposit.js';

/**
 * The demo data's calendar (demo/sandbox.json; test/docs-page checks they agree): the example's
 * value date is the first business day on or after the core's business date, as the core wants.
 */
export const demoCalendar = new BusinessCalendar(['SATURDAY', 'SUNDAY'], ['2026-04-03', '2026-05-01', '2026-12-25'], '2026-03-02');

/** The demo product's day count (TDFIX/TD30-365 is ACT/360): the expected interest is the core's. */
const demoDayCount = 'ACT/360';

/** Sample values in the formats the core generates (TD + 15 digits, MLO + 15 digits, time-ordered UUIDs). */
export const sampleContractNumber = 'TD000012345678901';
export const sampleOperationReference = '0192f0c4-5b6e-7c1a-9d2e-3f4a5b6c7d8e';
const sampleExecutionReference = '0192f0c4-6a1b-7d2c-8e3f-4a5b6c7d8e9f';
const sampleLoanOperationId = 'MLO000098765432101';

/** The request body of POST /v1/term-deposits/initiate, valued on the business date. */
export function termDepositRequestExample(businessDate: string) {
  return { ...termDepositInitiationExample, valueDate: demoCalendar.rollForward(businessDate) };
}

/** The request body of the loan installment execution (no date follows the business date: 2026-12-31 is the facility's final maturity). */
export function loanRequestExample() {
  return structuredClone(loanExecutionExample);
}

/** What the core answers for the term deposit example: its maturity rolled to a business day, its interest. */
function termDepositContract(businessDate: string) {
  const request = termDepositRequestExample(businessDate);
  const maturityDate = demoCalendar.rollForward(addDays(request.valueDate, request.termDepositPeriod.numberOfDays));
  const numberOfDays = daysBetween(request.valueDate, maturityDate);
  const currency = request.principalAmount.amountCurrency.currencycode;
  const principalMinor = toMinorUnits(request.principalAmount.amountValue, currency);
  return {
    termDepositAccount: sampleContractNumber,
    customerReference: request.customerReference,
    termDepositProduct: request.termDepositProduct,
    principalAmount: { amountValue: request.principalAmount.amountValue, amountCurrency: { currencycode: currency } },
    termDepositPeriod: { numberOfDays, maturityDate },
    valueDate: request.valueDate,
    sourceAccount: { accountIdentification: request.sourceAccount.accountIdentification, valueDate: request.valueDate },
    interestSettlementAccount: { accountIdentification: request.interestSettlementAccount.accountIdentification },
    transactionDescription: request.transactionDescription,
    operationReference: sampleOperationReference,
    expectedInterest: {
      amountValue: minorToNumber(interestAtMaturityMinor(principalMinor, String(request.interestRate.rateValue), numberOfDays, demoDayCount), currency),
      amountCurrency: { currencycode: currency },
    },
    interestRate: request.interestRate,
  };
}

/** The 200 and 202 bodies, by operationId and status. */
export function successExamples(businessDate: string): Record<string, Record<string, unknown>> {
  const { expectedInterest, interestRate, ...initiation } = termDepositContract(businessDate);
  const retrieve = { ...initiation, termDepositStatus: 'Active', interestRate, expectedInterestAmount: expectedInterest };
  const executionDateTime = `${businessDate}T10:15:30.123Z`;
  const termDepositAccepted = { operationReference: sampleOperationReference, termDepositStatus: 'Pending' };
  return {
    initiateTermDeposit: { 200: initiation, 202: termDepositAccepted },
    retrieveTermDeposit: { 200: retrieve },
    retrieveTermDepositSingular: { 200: retrieve },
    executeMerchandisingLoanPayment: {
      200: { merchandisingLoanOperationId: sampleLoanOperationId, merchandisingLoanFacilityStatus: 'PartiallyExecuted', executionReference: sampleExecutionReference, executionDateTime },
      202: { executionReference: sampleExecutionReference, executionDateTime, merchandisingLoanFacilityStatus: 'Pending' },
    },
    getOperation: { 200: { reference: sampleOperationReference, operation: 'initiateTermDeposit', status: 'Executed', result: initiation } },
    listWebhookDeliveries: {
      200: {
        deliveries: [
          {
            id: '0192f0c5-1a2b-7c3d-8e4f-5a6b7c8d9e0f',
            eventId: 'msg_0192f0c5-0f1e-7d2c-9b3a-4c5d6e7f8a9b',
            eventType: 'operation.executed',
            endpointId: '0192f0b0-2c3d-7e4f-8a5b-6c7d8e9f0a1b',
            url: 'https://treasury.example.com/webhooks/coregate',
            status: 'delivered',
            attempts: 1,
            lastStatusCode: 204,
            lastError: null,
            nextAttemptAt: null,
            deliveredAt: `${businessDate}T10:15:31.004Z`,
            createdAt: `${businessDate}T10:15:30.456Z`,
          },
        ],
      },
    },
    listSandboxRequests: {
      200: {
        requests: [
          {
            id: '0192f0c4-5b6d-7a1b-8c2d-3e4f5a6b7c8d',
            recordedAt: `${businessDate}T10:15:30.101Z`,
            method: 'POST',
            path: '/v1/term-deposits/initiate',
            status: 200,
            correlationId: 'order-4711',
            durationMs: 14,
            operationReference: sampleOperationReference,
            scenario: null,
            request: { headers: { 'content-type': 'application/json', 'x-correlation-id': 'order-4711' }, body: termDepositRequestExample(businessDate) },
            response: { headers: { 'content-type': 'application/json; charset=utf-8', 'x-correlation-id': 'order-4711' }, body: initiation },
          },
        ],
        more: false,
      },
    },
    ...authExamples(),
  };
}

const demoScopes = 'termDeposit:initiate termDeposit:retrieve merchandisingLoan:execute';
const demoIssuer = 'http://localhost:8080/realms/sandbox';

/** The auth service's answers for the demo client treasury-app of the realm sandbox. */
function authExamples(): Record<string, Record<string, unknown>> {
  const oauthErrors = {
    400: { error: 'invalid_scope', error_description: 'scope "payments:write" is not granted to client treasury-app' },
    401: { error: 'invalid_client', error_description: 'Client authentication failed' },
    404: { error: 'not_found', error_description: 'Realm "sandbox-typo" not found' },
    413: { error: 'invalid_request', error_description: 'The request body exceeds 16 KiB' },
    429: { error: 'temporarily_unavailable', error_description: 'Too many failed client authentications; retry after 60 seconds' },
  };
  const realmNotFound = { 404: oauthErrors[404] };
  return {
    requestToken: {
      200: {
        access_token: 'eyJhbGciOiJFUzI1NiIsImtpZCI6InNhbmRib3gtMSIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJodHRwOi8vbG9jYWxob3N0OjgwODAvcmVhbG1zL3NhbmRib3giLCJhenAiOiJ0cmVhc3VyeS1hcHAifQ.c2lnbmF0dXJl',
        expires_in: 300,
        refresh_expires_in: 0,
        token_type: 'Bearer',
        'not-before-policy': 0,
        scope: demoScopes,
      },
      ...oauthErrors,
    },
    introspectToken: {
      200: {
        active: true,
        token_type: 'Bearer',
        iss: demoIssuer,
        sub: 'svc-treasury',
        aud: 'coregate-api',
        azp: 'treasury-app',
        client_id: 'treasury-app',
        scope: demoScopes,
        backbone_user: 'svc-treasury',
        workstation: 'WS-TREASURY-01',
        iat: 1772445600,
        exp: 1772445900,
      },
      ...oauthErrors,
      400: { error: 'invalid_request', error_description: 'the token parameter is missing' },
    },
    realmKeys: {
      200: {
        keys: [
          {
            kty: 'EC',
            crv: 'P-256',
            x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU',
            y: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0',
            kid: 'sandbox-1',
            alg: 'ES256',
            use: 'sig',
          },
        ],
      },
      ...realmNotFound,
    },
    realmDiscovery: {
      200: {
        issuer: demoIssuer,
        token_endpoint: `${demoIssuer}/protocol/openid-connect/token`,
        jwks_uri: `${demoIssuer}/protocol/openid-connect/certs`,
        introspection_endpoint: `${demoIssuer}/protocol/openid-connect/token/introspect`,
        grant_types_supported: ['client_credentials'],
        token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      },
      ...realmNotFound,
    },
  };
}

/** The refusal each status illustrates, with a message naming demo values as the real one does. */
function refusalOf(status: number, family: Family | undefined, businessDate: string): { entry: ErrorEntry; message: string } {
  const loan = family === 'ML';
  switch (status) {
    case 400:
      return family === undefined
        ? { entry: E.invalidField, message: 'limit must be at most 500' }
        : { entry: E.missingField, message: loan ? 'accountReferences is required' : 'customerReference is required' };
    case 401:
      return { entry: E.invalidToken, message: 'The access token expired' };
    case 403:
      return { entry: E.insufficientScope, message: `The token lacks the scope ${loan ? 'merchandisingLoan:execute' : 'termDeposit:initiate'}` };
    case 404:
      if (family === undefined) return { entry: E.operationNotFound, message: `operation ${sampleOperationReference} not found` };
      return loan ? { entry: E.installmentNotFound, message: 'facility 7000000001 has no installment 4' } : { entry: E.termDepositNotFound, message: `term deposit ${sampleContractNumber} not found` };
    case 409:
      return { entry: E.duplicateRequest, message: `The same request was already received as operation ${loan ? sampleExecutionReference : sampleOperationReference} (Executed) within the duplicate window` };
    case 413:
      return { entry: E.payloadTooLarge, message: 'The body exceeds 65536 bytes' };
    case 415:
      return { entry: E.unsupportedMediaType, message: 'Content-Type text/plain is not supported; send application/json' };
    case 422:
      return loan
        ? { entry: E.insufficientFundsExpense, message: 'expense account 1000000002 (balance 30.00 USD) cannot cover the charges of 40.60 USD' }
        : { entry: E.valueDateBeforeBusinessDate, message: `value date ${addDays(businessDate, -1)} is before the core's business date ${businessDate}` };
    case 429:
      return { entry: E.tooManyRequests, message: 'Too many requests from client treasury-app; retry after 1 second' };
    case 500:
      return { entry: E.internalError, message: 'Unexpected internal error; the log has the cause' };
    case 502:
      return { entry: E.coreUnavailable, message: 'The core banking system is unavailable; repeat with x-correlation-id order-2026-0042 to reconcile' };
    case 503:
      return { entry: E.databaseUnavailable, message: 'The service\'s database is unavailable; try again shortly' };
    case 504:
      return { entry: E.coreTimeout, message: 'The core did not answer within 10000 ms; repeat with x-correlation-id order-2026-0042 to reconcile' };
    default:
      throw new Error(`no example refusal for status ${status}`);
  }
}

/** The error record of a business route for one status (`path` as "METHOD /path"), wrapped for the loan operation. */
export function errorExample(status: number, family: Family | undefined, path: string, wrapped: boolean, businessDate: string): ErrorRecord | { error: ErrorRecord } {
  const { entry, message } = refusalOf(status, family, businessDate);
  const record = errorRecord(entry, message, path, family);
  return wrapped ? { error: record } : record;
}
