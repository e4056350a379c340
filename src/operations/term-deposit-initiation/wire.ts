/**
 * The term deposit constitution on the remote core protocol (docs/core-protocol.md): its
 * reference's path, its command and outcome, and the codec both sides use (money as strings of
 * minor units). The result is the term deposit contract, which the protocol's retrieve and records
 * answer too (src/core-http/protocol.ts, TermDepositSchema).
 */
import { Type, type Static } from '@sinclair/typebox';
import { isCalendarDate, toEpochDay } from '../../core/calendar-date.js';
import type { TermDeposit } from '../../core/port.js';
import type { TermDepositInitiation } from '../../core/term-deposits/initiation.js';
import { BadCommand, checkCurrency } from '../../core-http/bad-command.js';
import { minorFromWire, minorToWire, termDepositFromWire, termDepositToWire } from '../../core-http/codec.js';
import { operationWire } from '../../core-http/operation-wire.js';
import {
  CalendarDate,
  Currency,
  Days,
  Description,
  Executed,
  Identifier,
  PositiveMinor,
  protocolPrefix,
  RatePercent,
  RefusalSchema,
  Rejected,
  TermDepositSchema,
  type TermDepositWire,
} from '../../core-http/protocol.js';

/** A percentage per year, > 0 and at most 100 (docs/term-deposits.md, "Decisions"). */
const ratePercentMax = 100;

export const TermDepositCommandSchema = Type.Object(
  {
    customerReference: Identifier('The customer who holds the deposit'),
    productCode: Identifier('Product code'),
    componentCode: Identifier('Product component code'),
    principalMinor: PositiveMinor('Principal'),
    currency: Currency,
    ratePercent: RatePercent,
    numberOfDays: Type.Optional(Days('Term in days; the maturity is rolled forward to a business day')),
    maturityDate: Type.Optional(CalendarDate('Explicit maturity date')),
    valueDate: CalendarDate('Value date'),
    sourceAccount: Identifier('Account debited with the principal'),
    interestAccount: Identifier('Account credited with the interest at maturity'),
    description: Description,
  },
  {
    title: 'TermDepositConstitutionCommand',
    description:
      'The body of POST /core/v1/term-deposit-constitutions/{reference}: debit the source account with the principal and make the contract. At least one of numberOfDays and maturityDate. ' +
      'The API has checked what needs no stored data (currency, amount, rate, dates, the term); the core checks the rules that need its records and answers a refusal for each (docs/core-protocol.md, Refusals).',
    examples: [
      {
        customerReference: 'C0001',
        productCode: 'TDFIX',
        componentCode: 'TD30-365',
        principalMinor: '1000000',
        currency: 'USD',
        ratePercent: '5.25',
        numberOfDays: 90,
        valueDate: '2026-03-02',
        sourceAccount: '1000000001',
        interestAccount: '1000000002',
        description: null,
      },
    ],
  },
);

export const TermDepositOutcomeSchema = Type.Union([Executed('TermDepositExecuted', TermDepositSchema), Rejected], {
  title: 'TermDepositOutcome',
  description: 'The outcome of a term deposit reference: Executed with the contract, or Rejected with the refusal (a TD-... code)',
  examples: [
    { status: 'Executed', result: TermDepositSchema.examples[0] },
    { status: 'Rejected', refusal: RefusalSchema.examples[0] },
  ],
});
export type TermDepositCommandWire = Static<typeof TermDepositCommandSchema>;

export function termDepositCommandToWire(command: TermDepositInitiation): TermDepositCommandWire {
  return {
    customerReference: command.customerReference,
    productCode: command.productCode,
    componentCode: command.componentCode,
    principalMinor: minorToWire(command.principalMinor),
    currency: command.currency,
    ratePercent: command.ratePercent,
    ...(command.numberOfDays === undefined ? {} : { numberOfDays: command.numberOfDays }),
    ...(command.maturityDate === undefined ? {} : { maturityDate: command.maturityDate }),
    valueDate: command.valueDate,
    sourceAccount: command.sourceAccount,
    interestAccount: command.interestAccount,
    description: command.description,
  };
}

export function termDepositCommandFromWire(wire: TermDepositCommandWire): TermDepositInitiation {
  return {
    customerReference: wire.customerReference,
    productCode: wire.productCode,
    componentCode: wire.componentCode,
    principalMinor: minorFromWire(wire.principalMinor),
    currency: wire.currency,
    ratePercent: wire.ratePercent,
    numberOfDays: wire.numberOfDays,
    maturityDate: wire.maturityDate,
    valueDate: wire.valueDate,
    sourceAccount: wire.sourceAccount,
    interestAccount: wire.interestAccount,
    description: wire.description,
  };
}

/** What the API checks before it calls a core (src/core/term-deposits/initiation.ts), checked again at the core's door. */
function checkCommand(command: TermDepositCommandWire): void {
  checkCurrency(command.currency);
  for (const [field, date] of [
    ['valueDate', command.valueDate],
    ['maturityDate', command.maturityDate],
  ] as const) {
    if (date !== undefined && !isCalendarDate(date)) throw new BadCommand(`${field} "${date}" is not a calendar date`);
  }
  if (command.numberOfDays === undefined && command.maturityDate === undefined) throw new BadCommand('the command needs numberOfDays or maturityDate');
  if (command.maturityDate !== undefined && toEpochDay(command.maturityDate) <= toEpochDay(command.valueDate)) {
    throw new BadCommand(`maturityDate ${command.maturityDate} is not after valueDate ${command.valueDate}`);
  }
  const rate = Number(command.ratePercent);
  if (!(rate > 0 && rate <= ratePercentMax)) throw new BadCommand(`ratePercent must be greater than 0 and at most ${ratePercentMax}, got ${command.ratePercent}`);
}

export const wire = operationWire<TermDepositInitiation, TermDeposit>({
  path: `${protocolPrefix}/term-deposit-constitutions/:reference`,
  summaries: {
    execute: 'Constitute a term deposit under a reference (at most once)',
    lookup: 'The outcome of a term deposit constitution by reference (reconciliation)',
  },
  withoutIt: {
    execute: 'every term deposit initiation answers 502 `CORE_UNAVAILABLE`, its outcome unknown',
    lookup: 'unknown term deposit outcomes are never settled: neither a repeat with the same `x-correlation-id` nor the reconciler can ask; `coregate check` reports them past the age limit',
  },
  commandSchema: TermDepositCommandSchema,
  outcomeSchema: TermDepositOutcomeSchema,
  commandToWire: termDepositCommandToWire,
  commandFromWire: (body) => {
    const command = body as TermDepositCommandWire;
    checkCommand(command);
    return termDepositCommandFromWire(command);
  },
  resultToWire: termDepositToWire,
  resultFromWire: (result) => termDepositFromWire(result as TermDepositWire),
  referenceOf: (deposit) => deposit.operationReference,
  referenceField: '/result/operationReference',
});
