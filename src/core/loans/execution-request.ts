/**
 * Merchandising loan installment execution: the command the core executes, and the checks that need
 * no stored data (the 400s of docs/loans.md, "Checks, in order"). They run before a correlation id
 * is consumed.
 */
import { errorCatalogue as E, BusinessRefusal } from '../error-catalogue.js';
import { writtenNumber, type NumberSource } from '../money.js';
import { requestedAmountMinor } from '../requested-amount.js';

/** The request body after schema validation (the loan spells `currencyCode`: docs/api.md, "Order of checks"). */
export interface LoanExecutionBody {
  merchandisingLoanFacilityParameterType: string;
  merchandisingLoanType: string;
  merchandisingLoanFacilityReference: {
    loanMaturityDate?: { dateContent: string; dateType: string };
    loanInstallmentSequence?: number;
    loanAmount?: { amountValue: number; amountCurrency: { currencyCode: string } };
  };
  accountReferences: Array<{
    accountIdentification: { accountIdentificationType: string; accountDescription?: string; identifierValue: string };
  }>;
}

export interface LoanInstallmentExecution {
  loanId: string;
  sequence: number;
  loanType: string;
  parameterType: string;
  maturityDate: string | undefined;
  /** Undefined: the installment's whole outstanding (docs/loans.md, "The execution"). */
  amountMinor: bigint | undefined;
  currency: string | undefined;
  paymentAccount: string;
  expenseAccount: string;
}

/** `numbers`: where the amount's source text is (the API's JSON reader). */
export function validateExecution(body: LoanExecutionBody, loanId: string, sequence: number, numbers?: NumberSource): LoanInstallmentExecution {
  const roles = body.accountReferences.map((ref) => ref.accountIdentification.accountIdentificationType);
  const payment = body.accountReferences.filter((ref) => ref.accountIdentification.accountIdentificationType === 'PaymentAccount');
  const expense = body.accountReferences.filter((ref) => ref.accountIdentification.accountIdentificationType === 'ExpenseAccount');
  if (body.accountReferences.length !== 2 || payment.length !== 1 || expense.length !== 1) {
    throw new BusinessRefusal(E.accountRolesInvalid, `accountReferences must hold exactly one PaymentAccount and one ExpenseAccount, got [${roles.join(', ')}]`);
  }
  const reference = body.merchandisingLoanFacilityReference;
  if (reference.loanInstallmentSequence !== undefined && reference.loanInstallmentSequence !== sequence) {
    throw new BusinessRefusal(
      E.installmentSequenceMismatch,
      `merchandisingLoanFacilityReference.loanInstallmentSequence ${reference.loanInstallmentSequence} differs from the path's installment ${sequence}`,
    );
  }
  if (reference.loanMaturityDate !== undefined && reference.loanMaturityDate.dateType !== 'MaturityDate') {
    throw new BusinessRefusal(E.maturityDateTypeInvalid, `loanMaturityDate.dateType must be MaturityDate, got "${reference.loanMaturityDate.dateType}"`);
  }
  let amountMinor: bigint | undefined;
  let currency: string | undefined;
  if (reference.loanAmount !== undefined) {
    currency = reference.loanAmount.amountCurrency.currencyCode;
    amountMinor = requestedAmountMinor(writtenNumber(reference.loanAmount, 'amountValue', numbers), currency, {
      amount: 'loanAmount.amountValue',
      currency: 'loanAmount.amountCurrency.currencyCode',
    });
  }
  return {
    loanId,
    sequence,
    loanType: body.merchandisingLoanType,
    parameterType: body.merchandisingLoanFacilityParameterType,
    maturityDate: reference.loanMaturityDate?.dateContent,
    amountMinor,
    currency,
    paymentAccount: payment[0]?.accountIdentification.identifierValue ?? '',
    expenseAccount: expense[0]?.accountIdentification.identifierValue ?? '',
  };
}
