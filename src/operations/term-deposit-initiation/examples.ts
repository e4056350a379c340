/**
 * The term deposit initiation's examples on the API docs page (/docs, /openapi.json) and in the
 * Postman collection: its request and answers, and its retrieve's, on the demo data
 * (demo/sandbox.json: customer C0001, its USD accounts, product TDFIX/TD30-365), dated by the
 * core's business date (src/docs-page/demo-examples.ts says why).
 */
import { addDays, daysBetween } from '../../core/calendar-date.js';
import { errorCatalogue as E } from '../../core/error-catalogue.js';
import { minorToNumber, toMinorUnits } from '../../core/money.js';
import { initiateScope } from '../../core/scopes.js';
import { interestAtMaturityMinor } from '../../core/term-deposits/interest.js';
import { demoCalendar, sampleContractNumber, sampleOperationReference } from '../../docs-page/demo-values.js';
import type { OperationExamples } from '../../docs-page/operation-examples.js';

/**
 * The request example of the API docs page ("Try it out"): it succeeds on the demo data
 * (demo/sandbox.json): customer C0001, product TDFIX/TD30-365, its USD accounts, and the demo
 * business date 2026-03-02 as value date. The served document replaces the value date with the
 * core's current business date (src/docs-page/dated-document.ts); test/docs-page checks it
 * against a running server.
 */
export const termDepositInitiationExample = {
  customerReference: 'C0001',
  termDepositProduct: { productCode: 'TDFIX', componentCode: 'TD30-365' },
  principalAmount: { amountValue: 5000, amountCurrency: { currencycode: 'USD' }, amountType: 'Principal' },
  interestRate: { rateValue: 5.25, rateType: 'Nominal' },
  termDepositPeriod: { numberOfDays: 90 },
  valueDate: '2026-03-02',
  sourceAccount: { accountIdentification: '1000000001', accountType: 'DebitAccount' },
  interestSettlementAccount: { accountIdentification: '1000000002', accountType: 'CreditAccount' },
  transactionDescription: 'Term deposit tried from the API docs page',
};

/** The demo product's day count (TDFIX/TD30-365 is ACT/360): the expected interest is the core's. */
const demoDayCount = 'ACT/360';

/** The request body of POST /v1/term-deposits/initiate, valued on the business date. */
export function termDepositRequestExample(businessDate: string) {
  return { ...termDepositInitiationExample, valueDate: demoCalendar.rollForward(businessDate) };
}

/** What the core answers for the example: its maturity rolled to a business day, its interest. */
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

export const examples: OperationExamples = {
  request: termDepositRequestExample,
  successes(businessDate) {
    const { expectedInterest, interestRate, ...initiation } = termDepositContract(businessDate);
    const retrieve = { ...initiation, termDepositStatus: 'Active', interestRate, expectedInterestAmount: expectedInterest };
    return {
      initiateTermDeposit: { 200: initiation, 202: { operationReference: sampleOperationReference, termDepositStatus: 'Pending' } },
      retrieveTermDeposit: { 200: retrieve },
      retrieveTermDepositSingular: { 200: retrieve },
    };
  },
  refusal(status, businessDate) {
    switch (status) {
      case 400:
        return { entry: E.missingField, message: 'customerReference is required' };
      case 403:
        return { entry: E.insufficientScope, message: `The token lacks the scope ${initiateScope}` };
      case 404:
        return { entry: E.termDepositNotFound, message: `term deposit ${sampleContractNumber} not found` };
      case 409:
        return { entry: E.duplicateRequest, message: `The same request was already received as operation ${sampleOperationReference} (Executed) within the duplicate window` };
      case 422:
        return { entry: E.valueDateBeforeBusinessDate, message: `value date ${addDays(businessDate, -1)} is before the core's business date ${businessDate}` };
      default:
        return undefined;
    }
  },
  // The initiation's contract number is the retrieve's path parameter, its reference the operation's.
  links: {
    initiateTermDeposit: {
      retrieveTermDeposit: { operationId: 'retrieveTermDeposit', parameters: { termDepositId: '$response.body#/termDepositAccount' }, description: 'The contract just created' },
      retrieveTermDepositSingular: { operationId: 'retrieveTermDepositSingular', parameters: { termDepositId: '$response.body#/termDepositAccount' }, description: 'The same, singular spelling' },
      getOperation: { operationId: 'getOperation', parameters: { reference: '$response.body#/operationReference' }, description: 'The operation and its result' },
    },
  },
  // The schema's own example (the "Schemas" section, and Swagger UI's fallback) carries the same date.
  datedSchemas: { TermDepositInitiationRequest: termDepositRequestExample },
};
