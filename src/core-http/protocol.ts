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

// ----- The read side for operators and the load side for sandbox data (docs/core-protocol.md) -----

export const recordPaths = {
  customers: `${protocolPrefix}/customers`,
  users: `${protocolPrefix}/directory/users`,
  workstations: `${protocolPrefix}/directory/workstations`,
  accounts: `${protocolPrefix}/accounts`,
  account: `${protocolPrefix}/accounts/:accountNumber`,
  postings: `${protocolPrefix}/accounts/:accountNumber/postings`,
  termDeposits: `${protocolPrefix}/term-deposits`,
  loanFacilities: `${protocolPrefix}/loan-facilities`,
  ledgerCheck: `${protocolPrefix}/ledger-check`,
  postedReferences: `${protocolPrefix}/posted-references`,
  data: `${protocolPrefix}/data`,
} as const;

/** Rows one page answers at most (the operator API's own bound). */
export const recordsPageMax = 500;
/** References one posted-references question carries at most. */
export const postedReferencesMax = 500;
/** The data file's core part may be larger than a command. */
export const dataBodyBytesMax = 4 * 1024 * 1024;

const SignedMinor = (description: string) =>
  Type.String({ pattern: `^(0|-?[1-9][0-9]{0,${minorDigitsMax - 1}})$`, description: `${description}: integer minor units as a decimal string, may be negative` });
const Instant = (description: string) => Type.String({ minLength: 1, maxLength: 64, description: `${description} (ISO 8601 UTC)` });
const Status = (description: string) => Type.String({ minLength: 1, maxLength: 64, description });
const Count = (description: string) => Type.Integer({ minimum: 0, description });

/** limit and offset as query text (the server does not coerce types). */
const PageQuery = {
  limit: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,2}$', description: `Rows at most (default 100, at most ${recordsPageMax})` })),
  offset: Type.Optional(Type.String({ pattern: '^(0|[1-9][0-9]{0,6})$', description: 'Rows skipped (default 0)' })),
};
const More = Type.Boolean({ description: 'True when rows follow this page' });

export const PageQuerySchema = Type.Object(PageQuery);
export const AccountsQuerySchema = Type.Object({
  ...PageQuery,
  customerReference: Type.Optional(Identifier('Only this customer\'s accounts')),
  kind: Type.Optional(Type.Union([Type.Literal('customer'), Type.Literal('term_deposit'), Type.Literal('loan'), Type.Literal('internal')], { description: 'Accounts of this kind (default customer)' })),
});
export const TermDepositsQuerySchema = Type.Object({
  ...PageQuery,
  status: Type.Optional(Status('Only contracts in this status (Active, Matured...)')),
  contractNumber: Type.Optional(Identifier('Only this contract')),
});
export const LoanFacilitiesQuerySchema = Type.Object({ ...PageQuery, loanId: Type.Optional(Identifier('Only this facility')) });
export const LedgerCheckQuerySchema = Type.Object({
  listedMax: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,2}$', description: 'Findings listed per kind, at most (default 100, at most 500); counts stay exact' })),
});
export const AccountParamsSchema = Type.Object({ accountNumber: Identifier('Account number') });

export const CustomerSchema = Type.Object(
  { customerReference: Identifier('Customer'), name: Type.Union([Type.String({ maxLength: textLengthMax }), Type.Null()]), status: Status('Active, Disabled, Blocked'), accounts: Count('Customer accounts held') },
  { title: 'Customer' },
);
export const AccountSchema = Type.Object(
  {
    accountNumber: Identifier('Account number'),
    customerReference: Type.Union([Identifier('Owner'), Type.Null()]),
    kind: Status('customer, term_deposit, loan, internal'),
    status: Status('Active, Closed...'),
    currency: Currency,
    balanceMinor: SignedMinor('Live balance'),
    createdAt: Instant('When the account was opened'),
  },
  { title: 'Account' },
);
export const PostingSchema = Type.Object(
  {
    movementId: Identifier('The movement the posting belongs to'),
    line: Type.Integer({ minimum: 0 }),
    reference: Identifier('The reference of the operation, end of day or opening that made the movement'),
    kind: Status('Movement kind'),
    description: Description,
    businessDate: CalendarDate('Business day of the movement'),
    createdAt: Instant('When it was posted'),
    amountMinor: SignedMinor('Amount posted to the account'),
    balanceAfterMinor: SignedMinor('The account\'s balance just after it'),
    currency: Currency,
  },
  { title: 'Posting' },
);
export const TermDepositRecordSchema = Type.Intersect([TermDepositSchema, Type.Object({ createdAt: Instant('When the contract was made') })], { title: 'TermDepositRecord' });
export const InstallmentSchema = Type.Object(
  { sequence: Type.Integer({ minimum: 1 }), dueDate: CalendarDate('Due date'), amountMinor: Minor('Amount due'), paidMinor: Minor('Amount paid'), status: Status('Paid, Due, Pending, Overdue') },
  { title: 'Installment' },
);
export const LoanFacilitySchema = Type.Object(
  {
    loanId: Identifier('Facility'),
    customerReference: Identifier('Customer'),
    loanType: Identifier('Loan type'),
    parameterType: Identifier('Facility parameter type'),
    status: Status('Facility status'),
    finalMaturityDate: CalendarDate('Final maturity'),
    currency: Currency,
    approvedLimitMinor: Minor('Approved limit'),
    executedTotalMinor: Minor('Executed so far'),
    installments: Type.Array(InstallmentSchema, { maxItems: 10_000 }),
  },
  { title: 'LoanFacility' },
);

export const UserSchema = Type.Object({ login: Identifier('Login (the backbone_user claim)'), status: Status('Active, Disabled') }, { title: 'User' });
export const WorkstationSchema = Type.Object({ id: Identifier('Workstation (the workstation claim)'), status: Status('Active, Disabled') }, { title: 'Workstation' });
export const UsersPageSchema = Type.Object({ users: Type.Array(UserSchema, { maxItems: recordsPageMax }), more: More }, { title: 'UsersPage' });
export const WorkstationsPageSchema = Type.Object({ workstations: Type.Array(WorkstationSchema, { maxItems: recordsPageMax }), more: More }, { title: 'WorkstationsPage' });
export const CustomersPageSchema = Type.Object({ customers: Type.Array(CustomerSchema, { maxItems: recordsPageMax }), more: More }, { title: 'CustomersPage' });
export const AccountsPageSchema = Type.Object({ accounts: Type.Array(AccountSchema, { maxItems: recordsPageMax }), more: More }, { title: 'AccountsPage' });
export const PostingsPageSchema = Type.Object({ postings: Type.Array(PostingSchema, { maxItems: recordsPageMax }), more: More }, { title: 'PostingsPage' });
export const TermDepositsPageSchema = Type.Object({ termDeposits: Type.Array(TermDepositRecordSchema, { maxItems: recordsPageMax }), more: More }, { title: 'TermDepositsPage' });
export const LoanFacilitiesPageSchema = Type.Object({ loanFacilities: Type.Array(LoanFacilitySchema, { maxItems: recordsPageMax }), more: More }, { title: 'LoanFacilitiesPage' });

export const LedgerReportSchema = Type.Object(
  {
    movements: Count('Movements proved'),
    accounts: Count('Account balances proved'),
    unbalancedMovements: Type.Array(Type.Object({ movementId: Identifier('Movement'), currency: Currency, totalMinor: SignedMinor('Sum of its postings') })),
    balanceMismatches: Type.Array(Type.Object({ accountNumber: Identifier('Account'), storedMinor: SignedMinor('Stored balance'), postedMinor: SignedMinor('Sum of its postings') })),
    negativeCustomerAccounts: Type.Array(Type.Object({ accountNumber: Identifier('Account'), balanceMinor: SignedMinor('Balance') })),
    termDepositMismatches: Type.Array(
      Type.Object({ contractNumber: Identifier('Contract'), status: Status('Contract status'), principalMinor: Minor('Principal'), accountBalanceMinor: Type.Union([SignedMinor('Its account\'s balance'), Type.Null()]) }),
    ),
  },
  { title: 'LedgerReport', description: 'Empty finding lists: the ledger holds' },
);

export const PostedReferencesCommandSchema = Type.Object(
  { references: Type.Array(Type.String({ pattern: ReferencePattern }), { maxItems: postedReferencesMax }) },
  { title: 'PostedReferencesQuestion' },
);
export const PostedReferencesSchema = Type.Object({ posted: Type.Array(Type.String({ pattern: ReferencePattern }), { maxItems: postedReferencesMax }) }, { title: 'PostedReferences' });

export const CoreDataSchema = Type.Record(Type.String(), Type.Unknown(), {
  title: 'CoreData',
  description: 'The data file\'s core part (CONTRACT §9): businessDate, calendar, users, workstations, customers, accounts, termDepositProducts, merchandisingLoans',
});
export const LoadSummarySchema = Type.Object({ accountsAdded: Count('Accounts added (existing records are kept as they are)') }, { title: 'CoreLoadSummary' });
export const DataRefusedSchema = Type.Object(
  { error: Type.Literal('DATA_REFUSED'), field: Type.String({ maxLength: textLengthMax, description: 'Where: e.g. accounts[2].currency' }), message: Type.String({ maxLength: textLengthMax }) },
  { title: 'DataRefused', description: 'Nothing was loaded' },
);

export type AccountWire = Static<typeof AccountSchema>;
export type PostingWire = Static<typeof PostingSchema>;
export type TermDepositRecordWire = Static<typeof TermDepositRecordSchema>;
export type LoanFacilityWire = Static<typeof LoanFacilitySchema>;
export type LedgerReportWire = Static<typeof LedgerReportSchema>;
