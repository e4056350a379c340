/**
 * Every domain error code of the business API, in one catalogue (fastify's lib/errors.js shape).
 * A code is `<family>-<status>-<nnn>`: TD for term deposits, ML for merchandising loans. Entries of
 * family "both" exist in each family with the same number. Codes are stable: never renumber one;
 * add new entries at the end of their status. docs/errors.md is checked against this file.
 */
import { ExpectedError } from './expected-error.js';
export type Family = 'TD' | 'ML';

export interface ErrorEntry {
  family: Family | 'both';
  status: number;
  number: number;
  /** errordetail[].reason: the textual identifier of the cause. */
  reason: string;
  /** When it happens, for the docs. */
  description: string;
}

const entry = (family: ErrorEntry['family'], status: number, number: number, reason: string, description: string): ErrorEntry => ({
  family,
  status,
  number,
  reason,
  description,
});

export const errorCatalogue = {
  // 400: malformed requests (both operations)
  malformedJson: entry('both', 400, 1, 'MALFORMED_JSON', 'The body is not valid JSON, or not strict JSON: a member name repeated in one object, nesting deeper than 32 levels, bytes that are not UTF-8, an unpaired surrogate, a number out of range, a "__proto__" member.'),
  missingField: entry('both', 400, 2, 'MISSING_REQUIRED_FIELD', 'A required field is missing.'),
  invalidField: entry('both', 400, 3, 'INVALID_FIELD', 'A field has the wrong type, format or value (enum, pattern, length).'),
  invalidCorrelationId: entry('both', 400, 4, 'INVALID_CORRELATION_ID', 'x-correlation-id is not 1-128 characters of A-Z a-z 0-9 . _ : -.'),
  invalidAmount: entry('both', 400, 5, 'INVALID_AMOUNT', 'The amount is not greater than zero.'),
  invalidAmountPrecision: entry('both', 400, 6, 'INVALID_AMOUNT_PRECISION', 'The amount has more decimals than the currency\'s ISO 4217 minor units, more than 15 significant digits, or 10^15 minor units or more.'),
  invalidCurrency: entry('both', 400, 7, 'INVALID_CURRENCY', 'The currency is not an active ISO 4217 code.'),
  invalidDate: entry('both', 400, 8, 'INVALID_DATE', 'A date is not a real YYYY-MM-DD calendar date.'),
  multipleAuthorizationHeaders: entry('both', 400, 9, 'MULTIPLE_AUTHORIZATION_HEADERS', 'The request has more than one Authorization header (RFC 6750 §3.1: invalid_request).'),
  invalidPath: entry('both', 400, 20, 'INVALID_PATH', 'The path is malformed: a bad percent-escape, a parameter longer than the framework reads (2,048 characters), or a request target that is neither a path nor an http(s) URL naming one (the asterisk form, a fragment).'),
  scenarioNotAllowed: entry('both', 400, 21, 'SCENARIO_NOT_ALLOWED', 'Coregate-Scenario or Coregate-Scenario-Delay-Ms was sent to an instance that is not in sandbox mode: scenarios are a sandbox feature (docs/sandbox.md), never ignored elsewhere.'),
  invalidScenario: entry('both', 400, 22, 'INVALID_SCENARIO', 'Coregate-Scenario names no scenario (the message lists the known ones), is sent on a request that executes nothing, or Coregate-Scenario-Delay-Ms is not an integer from 0 to 60000.'),
  // 400: term deposit
  missingTerm: entry('TD', 400, 10, 'MISSING_TERM', 'Neither termDepositPeriod.numberOfDays nor termDepositPeriod.maturityDate is given.'),
  termMismatch: entry('TD', 400, 11, 'TERM_MISMATCH', 'numberOfDays and maturityDate are both given and disagree.'),
  maturityNotAfterValueDate: entry('TD', 400, 12, 'MATURITY_NOT_AFTER_VALUE_DATE', 'The maturity date is not after the value date.'),
  invalidInterestRate: entry('TD', 400, 13, 'INVALID_INTEREST_RATE', 'rateValue is not greater than 0 and at most 100 (percent per year), or has more than 12 decimals.'),
  // 400: merchandising loan
  accountRolesInvalid: entry('ML', 400, 10, 'INVALID_ACCOUNT_REFERENCES', 'accountReferences is not exactly one PaymentAccount and one ExpenseAccount.'),
  installmentSequenceMismatch: entry('ML', 400, 11, 'INSTALLMENT_SEQUENCE_MISMATCH', 'loanInstallmentSequence in the body differs from the path\'s installmentSequence.'),
  maturityDateTypeInvalid: entry('ML', 400, 12, 'INVALID_DATE_TYPE', 'loanMaturityDate.dateType is not MaturityDate.'),
  maturityAfterFinalMaturity: entry('ML', 400, 13, 'MATURITY_AFTER_FACILITY_FINAL_MATURITY', 'loanMaturityDate is after the facility\'s final maturity date.'),
  // 401 / 403
  missingToken: entry('both', 401, 1, 'MISSING_TOKEN', 'No Bearer token in the Authorization header.'),
  invalidToken: entry('both', 401, 2, 'INVALID_TOKEN', 'The token is malformed, expired, not yet valid, revoked (realm not-before), badly signed, or from an untrusted issuer or audience; or it is sender-constrained and sent the wrong way (a DPoP-bound token as Bearer, an unbound one as DPoP, a certificate-bound one without its TLS client certificate).'),
  invalidDpopProof: entry('both', 401, 3, 'INVALID_DPOP_PROOF', 'The DPoP proof of a DPoP-bound token is missing, malformed, not for this request (htm, htu, ath), too old or in the future, signed by another key than the token\'s cnf.jkt, sent twice (two DPoP headers), or used before (docs/auth.md).'),
  useDpopNonce: entry('both', 401, 4, 'USE_DPOP_NONCE', 'The token\'s realm demands server nonces in DPoP proofs (docs/auth.md), and the proof has none or an old one: the answer\'s DPoP-Nonce header holds the nonce to put in a new proof, and the request is repeated with it.'),
  insufficientScope: entry('both', 403, 1, 'INSUFFICIENT_SCOPE', 'The token lacks the operation\'s scope.'),
  userNotAuthorized: entry('both', 403, 2, 'USER_NOT_AUTHORIZED', 'The token\'s backbone_user is not an active user of the core\'s directory.'),
  workstationNotAuthorized: entry('both', 403, 3, 'WORKSTATION_NOT_AUTHORIZED', 'The token\'s workstation is not an active workstation of the core\'s directory.'),
  // 404
  customerNotFound: entry('TD', 404, 1, 'CUSTOMER_NOT_FOUND', 'customerReference names no customer of the core.'),
  sourceAccountNotFound: entry('TD', 404, 2, 'SOURCE_ACCOUNT_NOT_FOUND', 'sourceAccount.accountIdentification names no account.'),
  interestAccountNotFound: entry('TD', 404, 3, 'INTEREST_SETTLEMENT_ACCOUNT_NOT_FOUND', 'interestSettlementAccount.accountIdentification names no account.'),
  termDepositNotFound: entry('TD', 404, 4, 'TERM_DEPOSIT_NOT_FOUND', 'No term deposit contract has this number.'),
  facilityNotFound: entry('ML', 404, 1, 'FACILITY_NOT_FOUND', 'merchandisingLoanId names no loan facility.'),
  installmentNotFound: entry('ML', 404, 2, 'INSTALLMENT_NOT_FOUND', 'The facility has no installment with this sequence.'),
  paymentAccountNotFound: entry('ML', 404, 3, 'PAYMENT_ACCOUNT_NOT_FOUND', 'The PaymentAccount names no account.'),
  expenseAccountNotFound: entry('ML', 404, 4, 'EXPENSE_ACCOUNT_NOT_FOUND', 'The ExpenseAccount names no account.'),
  operationNotFound: entry('both', 404, 90, 'OPERATION_NOT_FOUND', 'No operation of this client has this reference.'),
  // 409
  duplicateCorrelationId: entry('both', 409, 1, 'DUPLICATE_CORRELATION_ID', 'The client already used this x-correlation-id; the message names the original operation\'s reference and outcome.'),
  duplicateRequest: entry('both', 409, 2, 'DUPLICATE_REQUEST', 'The same client sent the same body to the same path within the duplicate window, without x-correlation-id (or with an id the SDK or CLI generated for the call).'),
  installmentPaid: entry('ML', 409, 10, 'INSTALLMENT_ALREADY_PAID', 'The installment is already fully paid.'),
  facilityClosed: entry('ML', 409, 11, 'FACILITY_CLOSED', 'The facility is closed (not active).'),
  // 413 / 415 / 429
  payloadTooLarge: entry('both', 413, 1, 'PAYLOAD_TOO_LARGE', 'The body exceeds 64 KiB.'),
  unsupportedMediaType: entry('both', 415, 1, 'UNSUPPORTED_MEDIA_TYPE', 'The Content-Type is not application/json.'),
  tooManyRequests: entry('both', 429, 1, 'TOO_MANY_REQUESTS', 'Too many requests; retry after the Retry-After delay.'),
  // 422: term deposit
  customerBlocked: entry('TD', 422, 1, 'CUSTOMER_BLOCKED', 'The customer is blocked.'),
  insufficientFundsSource: entry('TD', 422, 2, 'INSUFFICIENT_FUNDS_SOURCE_ACCOUNT', 'The source account\'s balance does not cover the principal.'),
  productNotAvailable: entry('TD', 422, 3, 'INVALID_PRODUCT_OR_COMPONENT', 'The productCode/componentCode pair is unknown or inactive.'),
  amountOutsideProductLimits: entry('TD', 422, 4, 'AMOUNT_OUTSIDE_PRODUCT_LIMITS', 'The principal is below the product\'s minimum or above its maximum.'),
  termOutsideProductLimits: entry('TD', 422, 5, 'TERM_OUTSIDE_PRODUCT_LIMITS', 'The term in days is outside the product\'s minimum and maximum.'),
  accountNotActive: entry('TD', 422, 6, 'ACCOUNT_NOT_ACTIVE', 'The source or interest settlement account is not active.'),
  accountNotCustomers: entry('TD', 422, 7, 'ACCOUNT_NOT_OWNED_BY_CUSTOMER', 'The source or interest settlement account does not belong to the customer.'),
  currencyMismatchSource: entry('TD', 422, 8, 'CURRENCY_MISMATCH_SOURCE_ACCOUNT', 'The source account\'s currency differs from the principal\'s.'),
  currencyNotOffered: entry('TD', 422, 9, 'CURRENCY_NOT_OFFERED_BY_PRODUCT', 'The product is not offered in the principal\'s currency.'),
  valueDateNotBusinessDay: entry('TD', 422, 10, 'VALUE_DATE_NOT_BUSINESS_DAY', 'The value date is a weekend day or a holiday of the core\'s calendar.'),
  valueDateBeforeBusinessDate: entry('TD', 422, 11, 'VALUE_DATE_BEFORE_BUSINESS_DATE', 'The value date is before the core\'s business date.'),
  maturityNotBusinessDay: entry('TD', 422, 12, 'MATURITY_DATE_NOT_BUSINESS_DAY', 'An explicit maturity date is a weekend day or a holiday.'),
  // 422: merchandising loan
  loanTypeMismatch: entry('ML', 422, 1, 'LOAN_TYPE_MISMATCH', 'merchandisingLoanType is not the facility\'s.'),
  parameterTypeMismatch: entry('ML', 422, 2, 'FACILITY_PARAMETER_TYPE_MISMATCH', 'merchandisingLoanFacilityParameterType is not the facility\'s.'),
  parameterTypeNotSupported: entry('ML', 422, 3, 'FACILITY_PARAMETER_TYPE_NOT_SUPPORTED', 'LetterOfCredit and BankerAcceptance are reserved and not yet supported.'),
  loanCurrencyMismatch: entry('ML', 422, 4, 'CURRENCY_MISMATCH', 'The amount\'s or an account\'s currency differs from the facility\'s.'),
  amountAboveOutstanding: entry('ML', 422, 5, 'AMOUNT_ABOVE_OUTSTANDING', 'The amount is above the installment\'s outstanding balance.'),
  approvedLimitExceeded: entry('ML', 422, 6, 'APPROVED_LIMIT_EXCEEDED', 'The execution would take the facility\'s total executed amount above its approved limit.'),
  insufficientFundsPayment: entry('ML', 422, 7, 'INSUFFICIENT_FUNDS_PAYMENT_ACCOUNT', 'The payment account cannot cover the amount.'),
  insufficientFundsExpense: entry('ML', 422, 8, 'INSUFFICIENT_FUNDS_EXPENSE_ACCOUNT', 'The expense account cannot cover the charges (commission, fee, tax).'),
  loanAccountNotActive: entry('ML', 422, 9, 'ACCOUNT_NOT_ACTIVE', 'The payment or expense account is not active.'),
  loanAccountNotCustomers: entry('ML', 422, 10, 'ACCOUNT_NOT_OWNED_BY_FACILITY_CUSTOMER', 'The payment or expense account does not belong to the facility\'s customer.'),
  // 422: both
  rejectedByCore: entry('both', 422, 90, 'REJECTED_BY_CORE', 'The core refused an operation it had accepted (answered 202): the sandbox scenario async-rejected. Nothing was posted; the reference is closed in the core.'),
  unrecognisedCoreRefusal: entry('both', 422, 91, 'REJECTED_BY_CORE', 'The core refused the operation (a final Rejected answer), but named its refusal in a way coregate cannot map to this catalogue: a name it does not know, a refusal of the other family, or a code that is not the named entry\'s. The message quotes the core\'s refusal (its name, code and message). The operation is final: nothing was posted; the operator is told (docs/core-protocol.md, "What the API\'s adapter makes of it").'),
  // 500 / 502 / 504
  internalError: entry('both', 500, 1, 'INTERNAL_ERROR', 'Unexpected internal error; the log line with the request id has the cause.'),
  coreUnavailable: entry('both', 502, 1, 'CORE_UNAVAILABLE', 'The core banking system is unavailable or answered invalidly; the outcome is held as unknown and a repeat with the same x-correlation-id reconciles.'),
  notExecuted: entry('both', 502, 2, 'NOT_EXECUTED', 'The outcome was unknown (502/504) and nobody repeated the request: the reconciler closed the operation in the core, which never executed it. Nothing was posted; send the request again with a new x-correlation-id.'),
  databaseUnavailable: entry('both', 503, 1, 'SERVICE_UNAVAILABLE', 'The service\'s own database could not be reached or would not take writes (a failover, a lost connection). Nothing of the request is known to be committed: repeat it with the same x-correlation-id; a repeat executes it, or answers 409 naming the operation if it had committed.'),
  coreTimeout: entry('both', 504, 1, 'CORE_TIMEOUT', 'The core did not answer within its time-out; the outcome is held as unknown and a repeat with the same x-correlation-id reconciles.'),
} as const satisfies Record<string, ErrorEntry>;

export type ErrorName = keyof typeof errorCatalogue;

/** The catalogue name of an entry: how a refusal travels (remote core protocol, stored outcomes). */
export function errorNameOf(entry: ErrorEntry): ErrorName {
  for (const [name, candidate] of Object.entries(errorCatalogue)) if (candidate === entry) return name as ErrorName;
  throw new Error(`${entry.reason} is not in the error catalogue`);
}

export function isErrorName(name: string): name is ErrorName {
  return Object.prototype.hasOwnProperty.call(errorCatalogue, name);
}

export function errorCode(entry: ErrorEntry, family: Family): string {
  if (entry.family !== 'both' && entry.family !== family) throw new Error(`${entry.reason} is not a ${family} error`);
  return `${family}-${entry.status}-${String(entry.number).padStart(3, '0')}`;
}

/** Every code with its entry, in status then number order: the docs' table. */
export function allErrorCodes(): Array<{ code: string; entry: ErrorEntry }> {
  const rows: Array<{ code: string; entry: ErrorEntry }> = [];
  for (const entry of Object.values(errorCatalogue) as ErrorEntry[]) {
    for (const family of ['TD', 'ML'] as const) {
      if (entry.family === 'both' || entry.family === family) rows.push({ code: errorCode(entry, family), entry });
    }
  }
  return rows.sort((a, b) => (a.code < b.code ? -1 : a.code > b.code ? 1 : 0));
}

/**
 * An expected refusal of a business rule: a value, not a crash (TigerBeetle's rule). It carries
 * the catalogue entry and a message with the concrete values.
 */
export class BusinessRefusal extends ExpectedError {
  constructor(
    readonly entry: ErrorEntry,
    message: string,
  ) {
    super(message);
    this.name = 'BusinessRefusal';
  }
}
