/** Maps the core's term deposit to the API's response bodies (amounts back to JSON numbers; docs/term-deposits.md). */
import { minorToNumber } from '../../core/money.js';
import type { TermDeposit } from '../../core/port.js';
import type { TermDepositInitiationResponse, TermDepositRetrieveResponse } from './schemas.js';

export function initiationResponse(deposit: TermDeposit): TermDepositInitiationResponse {
  return {
    termDepositAccount: deposit.contractNumber,
    customerReference: deposit.customerReference,
    termDepositProduct: { productCode: deposit.productCode, componentCode: deposit.componentCode },
    principalAmount: { amountValue: minorToNumber(deposit.principalMinor, deposit.currency), amountCurrency: { currencycode: deposit.currency } },
    termDepositPeriod: { numberOfDays: deposit.numberOfDays, maturityDate: deposit.maturityDate },
    valueDate: deposit.valueDate,
    sourceAccount: { accountIdentification: deposit.sourceAccount, valueDate: deposit.valueDate },
    interestSettlementAccount: { accountIdentification: deposit.interestAccount },
    transactionDescription: deposit.description ?? '',
    operationReference: deposit.operationReference,
  };
}

/**
 * The initiation's fields and the deposit's state, added to the initiation's object (a spread of
 * it into a new literal cost a retrieve more than the rest of this function).
 */
export function retrieveResponse(deposit: TermDeposit): TermDepositRetrieveResponse {
  return Object.assign(initiationResponse(deposit), {
    termDepositStatus: deposit.status,
    interestRate: { rateValue: Number(deposit.ratePercent), rateType: 'Nominal' as const },
    expectedInterestAmount: {
      amountValue: minorToNumber(deposit.expectedInterestMinor, deposit.currency),
      amountCurrency: { currencycode: deposit.currency },
    },
  });
}
