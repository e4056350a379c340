/**
 * The loan installment execution on the remote core protocol (docs/core-protocol.md): its
 * reference's path, its command, result and outcome, and the codec both sides use (money as
 * strings of minor units).
 */
import { Type, type Static } from '@sinclair/typebox';
import { isCalendarDate } from '../../core/calendar-date.js';
import type { LoanInstallmentExecution } from '../../core/loans/execution-request.js';
import type { LoanInstallmentResult } from '../../core/port.js';
import { BadCommand, checkCurrency } from '../../core-http/bad-command.js';
import { minorFromWire, minorToWire } from '../../core-http/codec.js';
import { operationWire } from '../../core-http/operation-wire.js';
import { CalendarDate, Currency, Executed, Identifier, Minor, PositiveMinor, protocolPrefix, Rejected } from '../../core-http/protocol.js';

export const LoanInstallmentCommandSchema = Type.Object(
  {
    loanId: Identifier('Merchandising loan facility'),
    sequence: Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'Installment sequence' }),
    loanType: Identifier('Loan type, e.g. CRDE'),
    parameterType: Identifier('Facility parameter type, e.g. DocumentaryRemittance'),
    maturityDate: Type.Optional(CalendarDate('loanMaturityDate as the client sent it; after the facility\'s final maturity it is refused with maturityAfterFinalMaturity (ML-400-013)')),
    amountMinor: Type.Optional(PositiveMinor('Amount paid; absent: the installment\'s whole outstanding')),
    currency: Type.Optional(Currency),
    paymentAccount: Identifier('Account that pays the amount'),
    expenseAccount: Identifier('Account that pays commission, fee and tax'),
  },
  {
    title: 'LoanInstallmentExecutionCommand',
    description:
      'The body of POST /core/v1/loan-installment-executions/{reference}: pay an installment from the payment account and its charges from the expense account. amountMinor and currency come together or not at all (neither: the installment\'s whole outstanding). ' +
      'maturityDate, when the client sent a loanMaturityDate, is checked by the core against the facility\'s final maturity (ML-400-013).',
    examples: [
      {
        loanId: '7000000001',
        sequence: 1,
        loanType: 'CRDE',
        parameterType: 'DocumentaryRemittance',
        maturityDate: '2026-12-31',
        amountMinor: '500000',
        currency: 'USD',
        paymentAccount: '1000000001',
        expenseAccount: '1000000002',
      },
    ],
  },
);

export const LoanInstallmentResultSchema = Type.Object(
  {
    operationId: Identifier('Operation identifier given by the core'),
    executionReference: Identifier('The reference the installment was executed under'),
    loanId: Identifier('Facility'),
    sequence: Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'Installment sequence' }),
    amountMinor: PositiveMinor('Amount paid'),
    commissionMinor: Minor('Commission'),
    feeMinor: Minor('Fixed fee'),
    taxMinor: Minor('Tax on commission and fee'),
    currency: Currency,
    paymentAccount: Identifier('Account that paid the amount'),
    expenseAccount: Identifier('Account that paid the charges'),
    facilityStatus: Type.Union([Type.Literal('Executed'), Type.Literal('PartiallyExecuted')], { description: 'Executed when the installment is now fully paid, PartiallyExecuted when some remains' }),
    executedAt: Type.String({ pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]{1,9})?Z$', description: 'UTC time of the execution' }),
  },
  {
    title: 'LoanInstallmentResult',
    description: 'The result of an executed installment: the amount paid and the charges, each half-up to the minor unit (docs/loans.md).',
    examples: [
      {
        operationId: 'MLO000123456789012',
        executionReference: '2b0c6a4e-5d3f-4f8e-9a41-7c2d1e0b9f63',
        loanId: '7000000001',
        sequence: 1,
        amountMinor: '500000',
        commissionMinor: '1000',
        feeMinor: '2500',
        taxMinor: '560',
        currency: 'USD',
        paymentAccount: '1000000001',
        expenseAccount: '1000000002',
        facilityStatus: 'PartiallyExecuted',
        executedAt: '2026-03-02T10:15:00.000Z',
      },
    ],
  },
);

export const LoanInstallmentOutcomeSchema = Type.Union([Executed('LoanInstallmentExecuted', LoanInstallmentResultSchema), Rejected], {
  title: 'LoanInstallmentOutcome',
  description: 'The outcome of a loan installment reference: Executed with the result, or Rejected with the refusal (an ML-... code)',
  examples: [
    { status: 'Executed', result: LoanInstallmentResultSchema.examples[0] },
    { status: 'Rejected', refusal: { name: 'insufficientFundsPayment', code: 'ML-422-007', message: 'payment account 1000000001 cannot cover 5000.00 USD' } },
  ],
});

export type LoanInstallmentCommandWire = Static<typeof LoanInstallmentCommandSchema>;
export type LoanInstallmentResultWire = Static<typeof LoanInstallmentResultSchema>;

export function loanCommandToWire(command: LoanInstallmentExecution): LoanInstallmentCommandWire {
  return {
    loanId: command.loanId,
    sequence: command.sequence,
    loanType: command.loanType,
    parameterType: command.parameterType,
    ...(command.maturityDate === undefined ? {} : { maturityDate: command.maturityDate }),
    ...(command.amountMinor === undefined ? {} : { amountMinor: minorToWire(command.amountMinor) }),
    ...(command.currency === undefined ? {} : { currency: command.currency }),
    paymentAccount: command.paymentAccount,
    expenseAccount: command.expenseAccount,
  };
}

export function loanCommandFromWire(wire: LoanInstallmentCommandWire): LoanInstallmentExecution {
  return {
    loanId: wire.loanId,
    sequence: wire.sequence,
    loanType: wire.loanType,
    parameterType: wire.parameterType,
    maturityDate: wire.maturityDate,
    amountMinor: wire.amountMinor === undefined ? undefined : minorFromWire(wire.amountMinor),
    currency: wire.currency,
    paymentAccount: wire.paymentAccount,
    expenseAccount: wire.expenseAccount,
  };
}

export function loanResultToWire(result: LoanInstallmentResult): LoanInstallmentResultWire {
  return {
    operationId: result.operationId,
    executionReference: result.executionReference,
    loanId: result.loanId,
    sequence: result.sequence,
    amountMinor: minorToWire(result.amountMinor),
    commissionMinor: minorToWire(result.commissionMinor),
    feeMinor: minorToWire(result.feeMinor),
    taxMinor: minorToWire(result.taxMinor),
    currency: result.currency,
    paymentAccount: result.paymentAccount,
    expenseAccount: result.expenseAccount,
    facilityStatus: result.facilityStatus,
    executedAt: result.executedAt,
  };
}

export function loanResultFromWire(wire: LoanInstallmentResultWire): LoanInstallmentResult {
  return {
    operationId: wire.operationId,
    executionReference: wire.executionReference,
    loanId: wire.loanId,
    sequence: wire.sequence,
    amountMinor: minorFromWire(wire.amountMinor),
    commissionMinor: minorFromWire(wire.commissionMinor),
    feeMinor: minorFromWire(wire.feeMinor),
    taxMinor: minorFromWire(wire.taxMinor),
    currency: wire.currency,
    paymentAccount: wire.paymentAccount,
    expenseAccount: wire.expenseAccount,
    facilityStatus: wire.facilityStatus,
    executedAt: wire.executedAt,
  };
}

/** What the schema cannot say of a command, checked at the core's door. */
function checkCommand(command: LoanInstallmentCommandWire): void {
  if ((command.amountMinor === undefined) !== (command.currency === undefined)) throw new BadCommand('amountMinor and currency come together');
  if (command.currency !== undefined) checkCurrency(command.currency);
  if (command.maturityDate !== undefined && !isCalendarDate(command.maturityDate)) throw new BadCommand(`maturityDate "${command.maturityDate}" is not a calendar date`);
}

export const wire = operationWire<LoanInstallmentExecution, LoanInstallmentResult>({
  path: `${protocolPrefix}/loan-installment-executions/:reference`,
  summaries: {
    execute: 'Execute a loan installment payment under a reference (at most once)',
    lookup: 'The outcome of a loan installment execution by reference (reconciliation)',
  },
  withoutIt: {
    execute: 'every installment execution answers 502 `CORE_UNAVAILABLE`, its outcome unknown',
    lookup: 'unknown installment outcomes are never settled (as for term deposits)',
  },
  commandSchema: LoanInstallmentCommandSchema,
  outcomeSchema: LoanInstallmentOutcomeSchema,
  commandToWire: loanCommandToWire,
  commandFromWire: (body) => {
    const command = body as LoanInstallmentCommandWire;
    checkCommand(command);
    return loanCommandFromWire(command);
  },
  resultToWire: loanResultToWire,
  resultFromWire: (result) => loanResultFromWire(result as LoanInstallmentResultWire),
  referenceOf: (result) => result.executionReference,
  referenceField: '/result/executionReference',
});
