/**
 * Term deposit request and response schemas (docs/term-deposits.md): the initiation's and the
 * retrieve's. They validate the requests, shape the responses, generate the OpenAPI document and
 * type the SDK.
 */
import { Type, type Static } from '@sinclair/typebox';
import { currencyCodeCharsMax, descriptionCharsMax, freeTextPattern, identifierCharsMax, identifierPattern, referenceCharsMax } from '../schemas/field-limits.js';
import { termDepositInitiationExample } from './examples.js';

const Text = (description: string, maxLength = referenceCharsMax) => Type.String({ minLength: 1, maxLength, pattern: identifierPattern, description });
const IsoDate = (description: string) => Type.String({ format: 'date', description: `${description} (YYYY-MM-DD)` });

const Product = Type.Object({ productCode: Text('Product code in the core'), componentCode: Text('Product component code') });

export const TermDepositInitiationRequestSchema = Type.Object(
  {
    customerReference: Text('Number of the customer who holds the deposit'),
    termDepositProduct: Product,
    principalAmount: Type.Object({
      amountValue: Type.Number({ description: '> 0, at most the currency\'s ISO 4217 minor units as decimals, at most 15 significant digits' }),
      amountCurrency: Type.Object({
        currencycode: Type.String({ maxLength: currencyCodeCharsMax, pattern: identifierPattern, description: 'ISO 4217 code (note the lower-case spelling)' }),
      }),
      amountType: Type.Literal('Principal'),
    }),
    interestRate: Type.Object({
      rateValue: Type.Number({ description: 'Annual rate in percent: > 0 and at most 100 (5.25 means 5.25 %)' }),
      rateType: Type.Literal('Nominal'),
    }),
    termDepositPeriod: Type.Optional(
      Type.Object({
        numberOfDays: Type.Optional(Type.Integer({ minimum: 1, maximum: 36_600, description: 'Term in days; the maturity is rolled to the next business day' })),
        maturityDate: Type.Optional(IsoDate('Explicit maturity date, a business day after the value date')),
      }),
    ),
    valueDate: IsoDate('Value date: a business day, not before the core\'s business date'),
    sourceAccount: Type.Object({ accountIdentification: Text('Account to debit', identifierCharsMax), accountType: Type.Literal('DebitAccount') }),
    interestSettlementAccount: Type.Object({ accountIdentification: Text('Account credited with interest', identifierCharsMax), accountType: Type.Literal('CreditAccount') }),
    transactionDescription: Type.Optional(Type.String({ maxLength: descriptionCharsMax, pattern: freeTextPattern, description: 'Description of the movement recorded in the core' })),
  },
  { $id: 'TermDepositInitiationRequest', examples: [termDepositInitiationExample] },
);

const Amount = Type.Object({ amountValue: Type.Number(), amountCurrency: Type.Object({ currencycode: Type.String() }) });

const contractFields = {
  termDepositAccount: Type.String({ description: 'Number of the created contract' }),
  customerReference: Type.String(),
  termDepositProduct: Product,
  principalAmount: Amount,
  termDepositPeriod: Type.Object({ numberOfDays: Type.Integer(), maturityDate: Type.String({ format: 'date' }) }),
  valueDate: Type.String({ format: 'date' }),
  sourceAccount: Type.Object({ accountIdentification: Type.String(), valueDate: Type.String({ format: 'date' }) }),
  interestSettlementAccount: Type.Object({ accountIdentification: Type.String() }),
  transactionDescription: Type.String(),
  operationReference: Type.String({ description: 'Reference of the operation processed in the core' }),
};

export const TermDepositInitiationResponseSchema = Type.Object(contractFields, { $id: 'TermDepositInitiationResponse' });

export const TermDepositRetrieveResponseSchema = Type.Object(
  {
    ...contractFields,
    termDepositStatus: Type.String({ description: 'Active until maturity; Matured once end of day has repaid it (docs/business-days.md)' }),
    interestRate: Type.Object({ rateValue: Type.Number(), rateType: Type.Literal('Nominal') }),
    expectedInterestAmount: Type.Object(
      { amountValue: Type.Number(), amountCurrency: Type.Object({ currencycode: Type.String() }) },
      { description: 'Interest expected at maturity: principal × rate/100 × days / basis (ACT/360 or ACT/365), half-up to the minor unit' },
    ),
  },
  { $id: 'TermDepositRetrieveResponse' },
);

export const TermDepositAcceptedSchema = Type.Object(
  { operationReference: Type.String(), termDepositStatus: Type.Literal('Pending') },
  { $id: 'TermDepositAccepted', description: 'Accepted; the final state is at GET /v1/operations/{operationReference}' },
);

export type TermDepositInitiationRequest = Static<typeof TermDepositInitiationRequestSchema>;
export type TermDepositInitiationResponse = Static<typeof TermDepositInitiationResponseSchema>;
export type TermDepositRetrieveResponse = Static<typeof TermDepositRetrieveResponseSchema>;
export type TermDepositAccepted = Static<typeof TermDepositAcceptedSchema>;
