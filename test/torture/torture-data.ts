/**
 * The torture tests' bank (torture.ts, pg-failover.ts): the demo realms and clients, well-funded
 * accounts of customer C0001, a long loan schedule, and the two requests their clients send to it.
 */
import type { LoanExecutionRequest, TermDepositInitiationRequest } from '../../src/sdk/index.js';
import { readDemoData, writeTempDataFile, c0001Account, c0001Facility } from '../helpers/data-files.js';

export const tortureAccounts = { source: '3000000001', interest: '3000000002', payment: '3000000003', expense: '3000000004' } as const;
export const tortureFacility = '7100000001';
/** Installments of 500.00 each: enough for any run of torture.ts. */
export const tortureInstallments = 2_000;
/** Each installment's amount, USD. */
export const tortureInstallmentAmount = 500;

/** How large the bank is: the loan's installments and the accounts' opening balances, USD. */
export interface TortureBankSize {
  installments: number;
  sourceOpening: number;
  paymentOpening: number;
  expenseOpening: number;
}

/** torture.ts's bank. */
export const tortureBankSize: TortureBankSize = { installments: tortureInstallments, sourceOpening: 20_000_000, paymentOpening: 2_000_000, expenseOpening: 500_000 };

/** The demo bank with the torture's accounts and loan facility, as large as `size`; answers the data file's path. */
export function writeTortureDataFile(size: TortureBankSize = tortureBankSize, prefix = 'coregate-torture-'): string {
  const data = readDemoData<Record<string, unknown[]>>();
  data.accounts = [
    ...(data.accounts ?? []),
    c0001Account(tortureAccounts.source, size.sourceOpening),
    c0001Account(tortureAccounts.interest, 0),
    c0001Account(tortureAccounts.payment, size.paymentOpening),
    c0001Account(tortureAccounts.expense, size.expenseOpening),
  ];
  data.merchandisingLoans = [
    ...(data.merchandisingLoans ?? []),
    c0001Facility(tortureFacility, {
      approvedLimit: tortureInstallmentAmount * size.installments,
      status: 'Active',
      installments: Array.from({ length: size.installments }, (_, index) => ({ sequence: index + 1, dueDate: '2026-06-30', amount: tortureInstallmentAmount })),
    }),
  ];
  return writeTempDataFile(data, prefix);
}

/** A principal between 1,000 and 4,999 USD: deposits of different sizes, so a doubled one shows in the balances. */
export function randomPrincipal(): number {
  return 1000 + Math.floor(Math.random() * 4000);
}

/** A 90-day TDFIX deposit from the torture's source account, interest to its interest account. */
export function tortureDepositBody(principal: number): TermDepositInitiationRequest {
  return {
    customerReference: 'C0001',
    termDepositProduct: { productCode: 'TDFIX', componentCode: 'TD30-365' },
    principalAmount: { amountValue: principal, amountCurrency: { currencycode: 'USD' }, amountType: 'Principal' },
    interestRate: { rateValue: 4.5, rateType: 'Nominal' },
    termDepositPeriod: { numberOfDays: 90 },
    valueDate: '2026-03-02',
    sourceAccount: { accountIdentification: tortureAccounts.source, accountType: 'DebitAccount' },
    interestSettlementAccount: { accountIdentification: tortureAccounts.interest, accountType: 'CreditAccount' },
  };
}

/** Installment `sequence` of the torture's facility, paid from its payment account. */
export function tortureInstallmentBody(sequence: number): LoanExecutionRequest {
  return {
    merchandisingLoanFacilityParameterType: 'DocumentaryRemittance',
    merchandisingLoanType: 'CRDE',
    merchandisingLoanFacilityReference: { loanInstallmentSequence: sequence, loanAmount: { amountValue: tortureInstallmentAmount, amountCurrency: { currencyCode: 'USD' } } },
    accountReferences: [
      { accountIdentification: { accountIdentificationType: 'PaymentAccount', identifierValue: tortureAccounts.payment } },
      { accountIdentification: { accountIdentificationType: 'ExpenseAccount', identifierValue: tortureAccounts.expense } },
    ],
  };
}
