/**
 * Request bodies the business API accepts for the demo data (customer C0001, its USD accounts),
 * so that a test names only the fields it is about.
 */

let nextAmount = 1000;

/** A new amount on every call (per test process), so that no two default bodies are equal by accident. */
export function freshAmount(): number {
  return nextAmount++;
}

/** A valid term deposit initiation body: 90 days of TDFIX from 1000000001, interest to 1000000002. */
export function depositBody(amountValue: number = freshAmount(), sourceAccount = '1000000001'): Record<string, unknown> {
  return {
    customerReference: 'C0001',
    termDepositProduct: { productCode: 'TDFIX', componentCode: 'TD30-365' },
    principalAmount: { amountValue, amountCurrency: { currencycode: 'USD' }, amountType: 'Principal' },
    interestRate: { rateValue: 5.25, rateType: 'Nominal' },
    termDepositPeriod: { numberOfDays: 90 },
    valueDate: '2026-03-02',
    sourceAccount: { accountIdentification: sourceAccount, accountType: 'DebitAccount' },
    interestSettlementAccount: { accountIdentification: '1000000002', accountType: 'CreditAccount' },
  };
}

/** The terms a term deposit test varies; anything not given takes a valid default. */
export interface DepositTerms {
  customer?: string;
  product?: string;
  component?: string;
  amount?: number;
  currency?: string;
  rate?: number;
  days?: number;
  maturity?: string;
  valueDate?: string;
  source?: string;
  interest?: string;
  description?: string;
}

/** A valid initiation body (docs/term-deposits.md) with the given terms; 30 days unless a period is given. */
export function depositBodyWithTerms(terms: DepositTerms = {}): Record<string, any> {
  const period: Record<string, unknown> = {};
  if (terms.days !== undefined) period.numberOfDays = terms.days;
  if (terms.maturity !== undefined) period.maturityDate = terms.maturity;
  if (terms.days === undefined && terms.maturity === undefined) period.numberOfDays = 30;
  return {
    customerReference: terms.customer ?? 'C0001',
    termDepositProduct: { productCode: terms.product ?? 'TDFIX', componentCode: terms.component ?? 'TD30-365' },
    principalAmount: { amountValue: terms.amount ?? 1000, amountCurrency: { currencycode: terms.currency ?? 'USD' }, amountType: 'Principal' },
    interestRate: { rateValue: terms.rate ?? 5.25, rateType: 'Nominal' },
    termDepositPeriod: period,
    valueDate: terms.valueDate ?? '2026-03-02',
    sourceAccount: { accountIdentification: terms.source ?? '1000000001', accountType: 'DebitAccount' },
    interestSettlementAccount: { accountIdentification: terms.interest ?? '1000000001', accountType: 'CreditAccount' },
    transactionDescription: terms.description ?? 'coregate initiation test',
  };
}

/** The fields of the term deposit initiation response (200), sorted (docs/term-deposits.md). */
export const initiationResponseFields = [
  'customerReference',
  'interestSettlementAccount',
  'operationReference',
  'principalAmount',
  'sourceAccount',
  'termDepositAccount',
  'termDepositPeriod',
  'termDepositProduct',
  'transactionDescription',
  'valueDate',
];
