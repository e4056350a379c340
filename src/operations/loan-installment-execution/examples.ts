/**
 * The merchandising loan installment execution's examples on the API docs page (/docs,
 * /openapi.json) and in the Postman collection: installment 1 of the demo facility 7000000001
 * (demo/sandbox.json). No date follows the business date: 2026-12-31 is the facility's final
 * maturity.
 */
import { errorCatalogue as E } from '../../core/error-catalogue.js';
import { executeScope } from '../../core/scopes.js';
import { sampleExecutionReference, sampleLoanOperationId } from '../../docs-page/demo-values.js';
import type { OperationExamples } from '../../docs-page/operation-examples.js';

/**
 * The request example of the API docs page ("Try it out"), for installment 1 of the demo facility
 * 7000000001 (demo/sandbox.json): a partial payment of 1,000.00 USD from C0001's account
 * 1000000001, charges from 1000000002, so that trying it again succeeds until the installment is
 * paid (test/docs-page checks it against a running server).
 */
export const loanExecutionExample = {
  merchandisingLoanFacilityParameterType: 'DocumentaryRemittance',
  merchandisingLoanType: 'CRDE',
  merchandisingLoanFacilityReference: {
    loanMaturityDate: { dateContent: '2026-12-31', dateType: 'MaturityDate' },
    loanInstallmentSequence: 1,
    loanAmount: { amountValue: 1000, amountCurrency: { currencyCode: 'USD' } },
  },
  accountReferences: [
    { accountIdentification: { accountIdentificationType: 'PaymentAccount', accountDescription: 'Pays the installment', identifierValue: '1000000001' } },
    { accountIdentification: { accountIdentificationType: 'ExpenseAccount', accountDescription: 'Pays charges, fees and taxes', identifierValue: '1000000002' } },
  ],
};

export const examples: OperationExamples = {
  request: () => structuredClone(loanExecutionExample),
  successes(businessDate) {
    const executionDateTime = `${businessDate}T10:15:30.123Z`;
    return {
      executeMerchandisingLoanPayment: {
        200: { merchandisingLoanOperationId: sampleLoanOperationId, merchandisingLoanFacilityStatus: 'PartiallyExecuted', executionReference: sampleExecutionReference, executionDateTime },
        202: { executionReference: sampleExecutionReference, executionDateTime, merchandisingLoanFacilityStatus: 'Pending' },
      },
    };
  },
  refusal(status) {
    switch (status) {
      case 400:
        return { entry: E.missingField, message: 'accountReferences is required' };
      case 403:
        return { entry: E.insufficientScope, message: `The token lacks the scope ${executeScope}` };
      case 404:
        return { entry: E.installmentNotFound, message: 'facility 7000000001 has no installment 4' };
      case 409:
        return { entry: E.duplicateRequest, message: `The same request was already received as operation ${sampleExecutionReference} (Executed) within the duplicate window` };
      case 422:
        return { entry: E.insufficientFundsExpense, message: 'expense account 1000000002 (balance 30.00 USD) cannot cover the charges of 40.60 USD' };
      default:
        return undefined;
    }
  },
  links: {},
  datedSchemas: {},
};
