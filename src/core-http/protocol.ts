/**
 * The remote core protocol (docs/core-protocol.md): the wire format of the CoreBankingPort over
 * HTTP, as TypeBox schemas. The core server (core-server.ts) validates requests and serializes
 * answers with them, the OpenAPI document is generated from them, and the HTTP adapter
 * (http-core-adapter.ts) checks every answer against them before it believes a word of it.
 *
 * Money travels as a decimal string of integer minor units ("1000000" is 10 000.00 USD), never as
 * a JSON number, so that no binary float ever holds an amount. Dates are YYYY-MM-DD. Objects may
 * carry fields a reader does not know (a newer core may add some): readers ignore them.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';

export const protocolPrefix = '/core/v1';

export const paths = {
  termDepositConstitution: `${protocolPrefix}/term-deposit-constitutions/:reference`,
  loanInstallmentExecution: `${protocolPrefix}/loan-installment-executions/:reference`,
  fence: `${protocolPrefix}/fences/:reference`,
  termDeposit: `${protocolPrefix}/term-deposits/:contractNumber`,
  user: `${protocolPrefix}/directory/users/:login`,
  workstation: `${protocolPrefix}/directory/workstations/:id`,
  businessDate: `${protocolPrefix}/business-date`,
  businessDateAdvance: `${protocolPrefix}/business-date/advance`,
  events: `${protocolPrefix}/events`,
  ready: '/health/ready',
} as const;

/** The longest identifier (reference, account, customer, login...) the protocol carries. */
export const identifierLengthMax = 128;
/** Free text (descriptions, refusal messages) is bounded too. */
export const textLengthMax = 2048;
/** 15 significant digits in the major unit plus up to 4 minor digits: 19 digits fit a signed 64-bit integer. */
const minorDigitsMax = 19;

const Identifier = (description: string) => Type.String({ minLength: 1, maxLength: identifierLengthMax, description });

/** An operation reference: the idempotency key of a command (the API sends a UUID). */
export const ReferencePattern = `^[A-Za-z0-9._:-]{1,${identifierLengthMax}}$`;

const PositiveMinor = (description: string) =>
  Type.String({ pattern: `^[1-9][0-9]{0,${minorDigitsMax - 1}}$`, description: `${description}: integer minor units as a decimal string, > 0` });
const Minor = (description: string) =>
  Type.String({ pattern: `^(0|[1-9][0-9]{0,${minorDigitsMax - 1}})$`, description: `${description}: integer minor units as a decimal string, >= 0` });
const CalendarDate = (description: string) =>
  Type.String({ pattern: '^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$', description: `${description} (YYYY-MM-DD)` });
const Currency = Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217 code' });
/** An annual rate in percent as the exact decimal the client sent, as JavaScript writes a number ("5.25", "1e-7"). */
const RatePercent = Type.String({ pattern: '^[0-9]{1,3}(\\.[0-9]{1,20})?(e-[0-9]{1,2})?$', description: 'Annual rate in percent, > 0 and at most 100 ("5.25")' });
const Days = (description: string) => Type.Integer({ minimum: 1, maximum: 36_600, description });
const Description = Type.Union([Type.String({ maxLength: textLengthMax }), Type.Null()]);

// ----- Commands -----

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
  { title: 'TermDepositConstitutionCommand', description: 'At least one of numberOfDays and maturityDate.' },
);

export const LoanInstallmentCommandSchema = Type.Object(
  {
    loanId: Identifier('Merchandising loan facility'),
    sequence: Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'Installment sequence' }),
    loanType: Identifier('Loan type, e.g. CRDE'),
    parameterType: Identifier('Facility parameter type, e.g. DocumentaryRemittance'),
    maturityDate: Type.Optional(CalendarDate('loanMaturityDate as the client sent it')),
    amountMinor: Type.Optional(PositiveMinor('Amount paid; absent: the installment\'s whole outstanding')),
    currency: Type.Optional(Currency),
    paymentAccount: Identifier('Account that pays the amount'),
    expenseAccount: Identifier('Account that pays commission, fee and tax'),
  },
  { title: 'LoanInstallmentExecutionCommand', description: 'amountMinor and currency come together or not at all.' },
);

// ----- Results -----

export const TermDepositSchema = Type.Object(
  {
    contractNumber: Identifier('Number of the contract (its account)'),
    customerReference: Identifier('Customer'),
    productCode: Identifier('Product code'),
    componentCode: Identifier('Product component code'),
    principalMinor: PositiveMinor('Principal'),
    currency: Currency,
    ratePercent: RatePercent,
    dayCount: Type.Union([Type.Literal('ACT/360'), Type.Literal('ACT/365')]),
    valueDate: CalendarDate('Value date'),
    maturityDate: CalendarDate('Maturity date, a business day'),
    numberOfDays: Days('Days from the value date to the maturity date'),
    sourceAccount: Identifier('Debited account'),
    interestAccount: Identifier('Interest settlement account'),
    description: Description,
    operationReference: Identifier('The reference the contract was constituted under'),
    status: Identifier('Active, Matured...'),
    expectedInterestMinor: Minor('Interest expected at maturity, half-up to the minor unit'),
  },
  { title: 'TermDeposit' },
);

export const LoanInstallmentResultSchema = Type.Object(
  {
    operationId: Identifier('Operation identifier given by the core'),
    executionReference: Identifier('The reference the installment was executed under'),
    loanId: Identifier('Facility'),
    sequence: Type.Integer({ minimum: 1, maximum: 1_000_000 }),
    amountMinor: PositiveMinor('Amount paid'),
    commissionMinor: Minor('Commission'),
    feeMinor: Minor('Fixed fee'),
    taxMinor: Minor('Tax on commission and fee'),
    currency: Currency,
    paymentAccount: Identifier('Account that paid the amount'),
    expenseAccount: Identifier('Account that paid the charges'),
    facilityStatus: Type.Union([Type.Literal('Executed'), Type.Literal('PartiallyExecuted')]),
    executedAt: Type.String({ pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]{1,9})?Z$', description: 'UTC time of the execution' }),
  },
  { title: 'LoanInstallmentResult' },
);

export const RefusalSchema = Type.Object(
  {
    name: Type.String({ pattern: '^[A-Za-z][A-Za-z0-9]{0,63}$', description: 'Catalogue entry name (src/core/error-catalogue.ts), e.g. insufficientFundsSource' }),
    code: Type.String({ pattern: '^(TD|ML)-[0-9]{3}-[0-9]{3}$', description: 'The entry\'s code in the operation\'s family, e.g. TD-422-002 (docs/errors.md)' }),
    message: Type.String({ maxLength: textLengthMax, description: 'The concrete reason, for the client' }),
  },
  { title: 'Refusal' },
);

// ----- Answers -----

const Executed = <T extends TSchema>(result: T) => Type.Object({ status: Type.Literal('Executed'), result });
const Rejected = Type.Object({ status: Type.Literal('Rejected'), refusal: RefusalSchema }, { description: 'A broken business rule: a final answer, not an HTTP error' });

export const TermDepositOutcomeSchema = Type.Union([Executed(TermDepositSchema), Rejected], { title: 'TermDepositOutcome' });
export const LoanInstallmentOutcomeSchema = Type.Union([Executed(LoanInstallmentResultSchema), Rejected], { title: 'LoanInstallmentOutcome' });

export const NotFoundSchema = Type.Object({ status: Type.Literal('NotFound') }, { title: 'NotFound', description: 'The core knows no such reference, contract, user or workstation' });

export const DirectoryEntrySchema = Type.Object(
  { status: Type.Union([Type.Literal('Active'), Type.Literal('Disabled'), Type.Literal('Blocked')]) },
  { title: 'DirectoryEntry' },
);

export const FencedSchema = Type.Object(
  { status: Type.Literal('Fenced') },
  { title: 'Fenced', description: 'The reference is closed: it executed already, or it never will' },
);
export const ReadySchema = Type.Object({ status: Type.Literal('ready') });
export const UnavailableSchema = Type.Object({ status: Type.Literal('unavailable') });

/** 400, 404 (no route), 413, 415, 500: the request was not executed, or failed inside the core. */
export const ProblemSchema = Type.Object(
  {
    error: Type.String({ description: 'BAD_REQUEST, NO_ROUTE, PAYLOAD_TOO_LARGE, UNSUPPORTED_MEDIA_TYPE, UNAVAILABLE (503: the core\'s database) or INTERNAL_ERROR' }),
    message: Type.String(),
  },
  { title: 'Problem' },
);

// ----- Business days and events (CONTRACT §12, docs/business-days.md) -----

export const BusinessDateSchema = Type.Object({ businessDate: CalendarDate('The core\'s business date') }, { title: 'BusinessDate' });

export const AdvanceCommandSchema = Type.Object({ to: CalendarDate('The new business date: today\'s or a later one') }, { title: 'BusinessDateAdvance' });

/** The most business days one report lists: a longer advance lists its first ones only (the counts stay exact). */
export const daysClosedListedMax = 3660;

export const EndOfDayReportSchema = Type.Object(
  {
    from: CalendarDate('The business date before the advance'),
    to: CalendarDate('The business date after it'),
    daysClosed: Type.Array(CalendarDate('A business day whose end of day ran in this call'), { maxItems: daysClosedListedMax }),
    maturedDeposits: Type.Integer({ minimum: 0, description: 'Term deposits matured in this call' }),
    overdueInstallments: Type.Integer({ minimum: 0, description: 'Installments that became Overdue in this call' }),
  },
  { title: 'EndOfDayReport' },
);

/** 409: the advance would move the date backwards; nothing ran. */
export const BackwardsSchema = Type.Object(
  {
    error: Type.Literal('BUSINESS_DATE_BACKWARDS'),
    message: Type.String({ maxLength: textLengthMax }),
    businessDate: CalendarDate('The core\'s business date, unchanged'),
    requested: CalendarDate('The date asked for'),
  },
  { title: 'BusinessDateBackwards' },
);

/** Events read per call, at most. */
export const eventsPageMax = 1000;

/** Query values are text (the server does not coerce types): decimal integers. */
export const EventsQuerySchema = Type.Object({
  after: Type.Optional(Type.String({ pattern: '^(0|[1-9][0-9]{0,14})$', description: 'Answer the events with a greater sequence (0, the default: from the first)' })),
  limit: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,3}$', description: `At most this many (default 100, at most ${eventsPageMax})` })),
});

export const CoreEventSchema = Type.Object(
  {
    sequence: Type.Integer({ minimum: 1, description: 'Position in the core\'s event log: strictly increasing, gaps allowed' }),
    id: Type.String({ pattern: '^[0-9a-fA-F-]{36}$', description: 'Stable UUID of the event' }),
    type: Type.Union([Type.Literal('termDeposit.matured'), Type.Literal('loanInstallment.overdue')]),
    businessDate: CalendarDate('The business day whose end of day made it'),
    operationReference: Type.Union([Type.String({ minLength: 1, maxLength: identifierLengthMax }), Type.Null()]),
    data: Type.Record(Type.String(), Type.Unknown(), { description: 'Details: amounts as decimal strings with their currency' }),
  },
  { title: 'CoreEvent' },
);

export const EventsPageSchema = Type.Object({ events: Type.Array(CoreEventSchema, { maxItems: eventsPageMax }) }, { title: 'CoreEvents' });

// ----- Path parameters -----

export const ReferenceParamsSchema = Type.Object({ reference: Type.String({ pattern: ReferencePattern, description: 'The operation reference: the idempotency key' }) });
export const ContractParamsSchema = Type.Object({ contractNumber: Identifier('Contract number') });
export const LoginParamsSchema = Type.Object({ login: Identifier('User login') });
export const WorkstationParamsSchema = Type.Object({ id: Identifier('Workstation id') });

export type TermDepositCommandWire = Static<typeof TermDepositCommandSchema>;
export type LoanInstallmentCommandWire = Static<typeof LoanInstallmentCommandSchema>;
export type TermDepositWire = Static<typeof TermDepositSchema>;
export type LoanInstallmentResultWire = Static<typeof LoanInstallmentResultSchema>;
export type RefusalWire = Static<typeof RefusalSchema>;
export type TermDepositOutcomeWire = Static<typeof TermDepositOutcomeSchema>;
export type LoanInstallmentOutcomeWire = Static<typeof LoanInstallmentOutcomeSchema>;
export type DirectoryEntryWire = Static<typeof DirectoryEntrySchema>;
export type EndOfDayReportWire = Static<typeof EndOfDayReportSchema>;
export type CoreEventWire = Static<typeof CoreEventSchema>;
export type BackwardsWire = Static<typeof BackwardsSchema>;
