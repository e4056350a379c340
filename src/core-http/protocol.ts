/**
 * The remote core protocol (docs/core-protocol.md): the wire format of the CoreBankingPort over
 * HTTP, as TypeBox schemas. The core server (core-server.ts) validates requests and serializes
 * answers with them, the OpenAPI document is generated from them, and the HTTP adapter
 * (http-core-adapter.ts) checks every answer against them before it believes a word of it.
 *
 * Money travels as a decimal string of integer minor units ("1000000" is 10 000.00 USD), never as
 * a JSON number, so that no binary float ever holds an amount. Dates are YYYY-MM-DD. Objects may
 * carry fields a reader does not know (a newer core may add some): readers ignore them.
 *
 * Every schema a route takes or answers has a title, a description and, where one helps, examples:
 * annotations, which validate nothing. The document names each titled schema as a component
 * (protocol-document.ts), and docs/core-protocol.openapi.json and docs/core-protocol.md's schema
 * tables are generated from them (scripts/core-protocol-doc.ts): a bank writes its core from those.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';

export const protocolPrefix = '/core/v1';

/**
 * The protocol's paths beyond the operations': each operation's reference path is its folder's
 * (src/operations/<operation>/wire.ts: e.g. `/core/v1/term-deposit-constitutions/:reference`).
 */
export const paths = {
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

export const Identifier = (description: string) => Type.String({ minLength: 1, maxLength: identifierLengthMax, description });

/** An operation reference: the idempotency key of a command (the API sends a UUID). */
export const ReferencePattern = `^[A-Za-z0-9._:-]{1,${identifierLengthMax}}$`;

export const PositiveMinor = (description: string) =>
  Type.String({ pattern: `^[1-9][0-9]{0,${minorDigitsMax - 1}}$`, description: `${description}: integer minor units as a decimal string, > 0` });
export const Minor = (description: string) =>
  Type.String({ pattern: `^(0|[1-9][0-9]{0,${minorDigitsMax - 1}})$`, description: `${description}: integer minor units as a decimal string, >= 0` });
export const CalendarDate = (description: string) =>
  Type.String({ pattern: '^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$', description: `${description} (YYYY-MM-DD)` });
export const Currency = Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217 code' });
/** An annual rate in percent as the exact decimal the client sent, as JavaScript writes a number ("5.25", "1e-7"). */
export const RatePercent = Type.String({ pattern: '^[0-9]{1,3}(\\.[0-9]{1,20})?(e-[0-9]{1,2})?$', description: 'Annual rate in percent, > 0 and at most 100 ("5.25")' });
export const Days = (description: string) => Type.Integer({ minimum: 1, maximum: 36_600, description });
export const Description = Type.Union([Type.String({ maxLength: textLengthMax }), Type.Null()], { description: 'Free text; null for none' });

// ----- Results (each operation's command, result and outcome are its folder's: src/operations/<operation>/wire.ts) -----

export const TermDepositSchema = Type.Object(
  {
    contractNumber: Identifier('Number of the contract (its account)'),
    customerReference: Identifier('Customer'),
    productCode: Identifier('Product code'),
    componentCode: Identifier('Product component code'),
    principalMinor: PositiveMinor('Principal'),
    currency: Currency,
    ratePercent: RatePercent,
    dayCount: Type.Union([Type.Literal('ACT/360'), Type.Literal('ACT/365')], { description: 'The product\'s day count: the interest\'s basis' }),
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
  {
    title: 'TermDeposit',
    description: 'A term deposit contract with the interest expected at maturity: the result of an executed constitution, and the body of GET /core/v1/term-deposits/{contractNumber}.',
    examples: [
      {
        contractNumber: 'TD036471208246173',
        customerReference: 'C0001',
        productCode: 'TDFIX',
        componentCode: 'TD30-365',
        principalMinor: '1000000',
        currency: 'USD',
        ratePercent: '5.25',
        dayCount: 'ACT/360',
        valueDate: '2026-03-02',
        maturityDate: '2026-06-01',
        numberOfDays: 91,
        sourceAccount: '1000000001',
        interestAccount: '1000000002',
        description: 'Term deposit TD036471208246173',
        operationReference: '9eca89c4-2ef9-4ac5-b92b-3dbe3d0a4594',
        status: 'Active',
        expectedInterestMinor: '13271',
      },
    ],
  },
);

/** A refusal's name and code as the protocol writes them (RefusalSchema). */
export const refusalNamePattern = /^[A-Za-z][A-Za-z0-9]{0,63}$/;
export const refusalCodePattern = /^(TD|ML)-[0-9]{3}-[0-9]{3}$/;

export const RefusalSchema = Type.Object(
  {
    name: Type.String({
      pattern: refusalNamePattern.source,
      description: 'The refusal\'s name in the error catalogue, e.g. insufficientFundsSource: every name with its code per family is listed in docs/core-protocol.md, Refusals',
    }),
    code: Type.String({ pattern: refusalCodePattern.source, description: 'The name\'s code in the operation\'s family: TD-... for a term deposit reference, ML-... for a loan installment reference (TD-422-002)' }),
    message: Type.String({ maxLength: textLengthMax, description: 'The concrete reason, for the client' }),
  },
  {
    title: 'Refusal',
    description: 'A broken business rule, final for its reference: the API answers the client with the name\'s HTTP status and code.',
    examples: [{ name: 'insufficientFundsSource', code: 'TD-422-002', message: 'source account 1000000001 cannot cover 300000.00 USD' }],
  },
);

// ----- Answers -----

/** An operation's Executed answer, titled for the document (TermDepositExecuted). */
export const Executed = <T extends TSchema>(title: string, result: T) =>
  Type.Object(
    { status: Type.Literal('Executed'), result },
    { title, description: 'The operation executed under this reference (now or before: a repeat answers the original result)' },
  );
/** Every operation's Rejected answer. */
export const Rejected = Type.Object(
  { status: Type.Literal('Rejected'), refusal: RefusalSchema },
  { title: 'Rejected', description: 'A broken business rule: a final answer for the reference, not an HTTP error' },
);

export const NotFoundSchema = Type.Object(
  { status: Type.Literal('NotFound') },
  { title: 'NotFound', description: 'The core knows no such reference (it never executed it), contract, account, user or workstation', examples: [{ status: 'NotFound' }] },
);

export const DirectoryEntrySchema = Type.Object(
  { status: Type.Union([Type.Literal('Active'), Type.Literal('Disabled'), Type.Literal('Blocked')], { description: 'Only Active passes the API\'s checks (403 otherwise)' }) },
  { title: 'DirectoryEntry', description: 'A user\'s or workstation\'s status in the core\'s directory', examples: [{ status: 'Active' }] },
);

export const FencedSchema = Type.Object(
  { status: Type.Literal('Fenced') },
  { title: 'Fenced', description: 'The reference is closed: it executed already, or it never will (its lookup answers Rejected notExecuted)', examples: [{ status: 'Fenced' }] },
);
export const ReadySchema = Type.Object({ status: Type.Literal('ready') }, { title: 'Ready', description: 'The core answers, its store included' });
export const UnavailableSchema = Type.Object({ status: Type.Literal('unavailable') }, { title: 'Unavailable', description: 'The core cannot serve now (its store does not answer)' });

/** 400, 404 (no route), 413, 415, 500: the request was not executed, or failed inside the core. */
export const ProblemSchema = Type.Object(
  {
    error: Type.String({ description: 'BAD_REQUEST, NO_ROUTE, PAYLOAD_TOO_LARGE, UNSUPPORTED_MEDIA_TYPE, UNAVAILABLE (503: the core\'s database) or INTERNAL_ERROR' }),
    message: Type.String({ description: 'What was wrong; never the cause of a 500, which is in the core\'s log' }),
  },
  {
    title: 'Problem',
    description: 'The request was not executed (400, 404 NO_ROUTE, 413, 415) or failed inside the core (500, 503): the API holds a command\'s outcome as unknown after a 5xx',
    examples: [
      { error: 'BAD_REQUEST', message: 'the command needs numberOfDays or maturityDate' },
      { error: 'INTERNAL_ERROR', message: 'Internal error; the core\'s log has the cause' },
    ],
  },
);

// ----- Business days and events (docs/business-days.md) -----

export const BusinessDateSchema = Type.Object(
  { businessDate: CalendarDate('The core\'s business date') },
  { title: 'BusinessDate', description: 'The open business day: operations book on it (docs/business-days.md)', examples: [{ businessDate: '2026-03-02' }] },
);

export const AdvanceCommandSchema = Type.Object(
  { to: CalendarDate('The new business date: today\'s or a later one') },
  { title: 'BusinessDateAdvance', description: 'Close every business day from the current date up to (not including) to, then open to', examples: [{ to: '2026-06-02' }] },
);

/** The most business days one report lists: a longer advance lists its first ones only (the counts stay exact). */
export const daysClosedListedMax = 3660;

export const EndOfDayReportSchema = Type.Object(
  {
    from: CalendarDate('The business date before the advance'),
    to: CalendarDate('The business date after it'),
    daysClosed: Type.Array(CalendarDate('A business day whose end of day ran in this call'), {
      maxItems: daysClosedListedMax,
      description: `The business days whose end of day ran in this call, in order (at most ${daysClosedListedMax} listed); empty when every day had closed before`,
    }),
    maturedDeposits: Type.Integer({ minimum: 0, description: 'Term deposits matured (principal and interest repaid) in this call' }),
    overdueInstallments: Type.Integer({ minimum: 0, description: 'Installments that became Overdue in this call' }),
  },
  {
    title: 'EndOfDayReport',
    description: 'What one advance did: the counts are of this call only, so an advance asked again answers empty days and zero counts',
    examples: [{ from: '2026-05-29', to: '2026-06-02', daysClosed: ['2026-05-29', '2026-06-01'], maturedDeposits: 1, overdueInstallments: 0 }],
  },
);

/** 409: the advance would move the date backwards; nothing ran. */
export const BackwardsSchema = Type.Object(
  {
    error: Type.Literal('BUSINESS_DATE_BACKWARDS'),
    message: Type.String({ maxLength: textLengthMax, description: 'Both dates, and what to ask for instead' }),
    businessDate: CalendarDate('The core\'s business date, unchanged'),
    requested: CalendarDate('The date asked for'),
  },
  {
    title: 'BusinessDateBackwards',
    description: '409: the advance would move the date backwards; nothing ran',
    examples: [
      {
        error: 'BUSINESS_DATE_BACKWARDS',
        message: 'the business date is 2026-06-02 and never goes backwards: 2026-03-02 is before it; ask for 2026-06-02 or a later date',
        businessDate: '2026-06-02',
        requested: '2026-03-02',
      },
    ],
  },
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
    type: Type.Union([Type.Literal('termDeposit.matured'), Type.Literal('loanInstallment.overdue')], { description: 'What happened: a term deposit matured, or an installment became overdue' }),
    businessDate: CalendarDate('The business day whose end of day made it'),
    operationReference: Type.Union([Type.String({ minLength: 1, maxLength: identifierLengthMax }), Type.Null()], {
      description: 'The reference of the operation that made the contract (a deposit\'s constitution): the API sends the webhook to that operation\'s client; null for installments',
    }),
    data: Type.Record(Type.String(), Type.Unknown(), {
      description: 'Details by type (docs/core-protocol.md, Events): amounts as { "amount": "2500.00", "currency": "USD" }, decimal strings in the major unit',
    }),
  },
  {
    title: 'CoreEvent',
    description: 'An event of the core\'s own making, written with the change (the core\'s outbox) and read in order by the API',
    examples: [
      {
        sequence: 1,
        id: '0f8fad5b-d9cb-469f-a165-70867728950e',
        type: 'termDeposit.matured',
        businessDate: '2026-06-01',
        operationReference: '9eca89c4-2ef9-4ac5-b92b-3dbe3d0a4594',
        data: {
          contractNumber: 'TD036471208246173',
          customerReference: 'C0001',
          maturityDate: '2026-06-01',
          repaidOn: '2026-06-01',
          principal: { amount: '10000.00', currency: 'USD' },
          interest: { amount: '132.71', currency: 'USD' },
          sourceAccount: '1000000001',
          interestAccount: '1000000002',
          status: 'Matured',
        },
      },
    ],
  },
);

export const EventsPageSchema = Type.Object(
  { events: Type.Array(CoreEventSchema, { maxItems: eventsPageMax, description: 'In strictly increasing sequence, all after the one asked for' }) },
  { title: 'CoreEvents', description: 'A page of the core\'s events after a sequence; empty when none follow' },
);

// ----- Path parameters -----

export const ReferenceParamsSchema = Type.Object({ reference: Type.String({ pattern: ReferencePattern, description: 'The operation reference: the idempotency key' }) });
export const ContractParamsSchema = Type.Object({ contractNumber: Identifier('Contract number') });
export const LoginParamsSchema = Type.Object({ login: Identifier('User login') });
export const WorkstationParamsSchema = Type.Object({ id: Identifier('Workstation id') });

export type TermDepositWire = Static<typeof TermDepositSchema>;
export type RefusalWire = Static<typeof RefusalSchema>;
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
  {
    customerReference: Identifier('Customer'),
    name: Type.Union([Type.String({ maxLength: textLengthMax }), Type.Null()], { description: 'The customer\'s name; null when the core has none' }),
    status: Status('Active, Disabled, Blocked'),
    accounts: Count('Customer accounts held'),
  },
  { title: 'Customer', description: 'A customer of the core, with how many customer accounts it holds', examples: [{ customerReference: 'C0001', name: 'Acme Exports Ltd', status: 'Active', accounts: 2 }] },
);
export const AccountSchema = Type.Object(
  {
    accountNumber: Identifier('Account number'),
    customerReference: Type.Union([Identifier('Owner'), Type.Null()], { description: 'The owner; null for the bank\'s own (internal) accounts' }),
    kind: Status('customer, term_deposit, loan, internal'),
    status: Status('Active, Closed...'),
    currency: Currency,
    balanceMinor: SignedMinor('Live balance'),
    createdAt: Instant('When the account was opened'),
  },
  {
    title: 'Account',
    description: 'An account with its live balance: a customer\'s, a term deposit\'s (its contract number), a loan facility\'s (the outstanding debt, negative) or the bank\'s own (internal: EQUITY-USD, INTEREST-EXPENSE-USD...)',
    examples: [{ accountNumber: '1000000001', customerReference: 'C0001', kind: 'customer', status: 'Active', currency: 'USD', balanceMinor: '24000000', createdAt: '2026-03-02T08:00:00.000Z' }],
  },
);
export const PostingSchema = Type.Object(
  {
    movementId: Identifier('The movement the posting belongs to'),
    line: Type.Integer({ minimum: 0, description: 'The posting\'s line in its movement' }),
    reference: Identifier('The reference of the operation, end of day or opening that made the movement'),
    kind: Status('Movement kind'),
    description: Description,
    businessDate: CalendarDate('Business day of the movement'),
    createdAt: Instant('When it was posted'),
    amountMinor: SignedMinor('Amount posted to the account'),
    balanceAfterMinor: SignedMinor('The account\'s balance just after it'),
    currency: Currency,
  },
  {
    title: 'Posting',
    description: 'One line of a balanced movement on one account, with the account\'s balance just after it',
    examples: [
      {
        movementId: '5b1e2f7a-3c4d-4e8f-9a0b-1c2d3e4f5a6b',
        line: 0,
        reference: '9eca89c4-2ef9-4ac5-b92b-3dbe3d0a4594',
        kind: 'term_deposit_constitution',
        description: 'Term deposit TD036471208246173',
        businessDate: '2026-03-02',
        createdAt: '2026-03-02T10:15:00.000Z',
        amountMinor: '-1000000',
        balanceAfterMinor: '24000000',
        currency: 'USD',
      },
    ],
  },
);
export const TermDepositRecordSchema = Type.Intersect([TermDepositSchema, Type.Object({ createdAt: Instant('When the contract was made') })], {
  title: 'TermDepositRecord',
  description: 'A term deposit as operators list it: the contract (TermDeposit) and when it was made',
});
export const InstallmentSchema = Type.Object(
  {
    sequence: Type.Integer({ minimum: 1, description: 'Installment sequence in the facility\'s schedule' }),
    dueDate: CalendarDate('Due date'),
    amountMinor: Minor('Amount due'),
    paidMinor: Minor('Amount paid'),
    status: Status('Paid, Due, Pending, Overdue'),
  },
  { title: 'Installment', description: 'One installment of a facility\'s repayment schedule' },
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
    installments: Type.Array(InstallmentSchema, { maxItems: 10_000, description: 'The repayment schedule, by sequence' }),
  },
  {
    title: 'LoanFacility',
    description: 'A merchandising loan facility with its installments',
    examples: [
      {
        loanId: '7000000001',
        customerReference: 'C0001',
        loanType: 'CRDE',
        parameterType: 'DocumentaryRemittance',
        status: 'Active',
        finalMaturityDate: '2026-12-31',
        currency: 'USD',
        approvedLimitMinor: '10000000',
        executedTotalMinor: '500000',
        installments: [
          { sequence: 1, dueDate: '2026-03-31', amountMinor: '2000000', paidMinor: '500000', status: 'Pending' },
          { sequence: 2, dueDate: '2026-06-30', amountMinor: '2000000', paidMinor: '0', status: 'Pending' },
        ],
      },
    ],
  },
);

export const UserSchema = Type.Object(
  { login: Identifier('Login (the backbone_user claim)'), status: Status('Active, Disabled') },
  { title: 'User', description: 'A technical user of the core\'s directory' },
);
export const WorkstationSchema = Type.Object(
  { id: Identifier('Workstation (the workstation claim)'), status: Status('Active, Disabled') },
  { title: 'Workstation', description: 'A workstation of the core\'s directory' },
);
/** A page's array: at most limit rows (recordsPageMax), in the list's order. */
const Rows = <T extends TSchema>(schema: T, order: string) => Type.Array(schema, { maxItems: recordsPageMax, description: `At most limit rows, ${order}` });
const pageOf = (member: string, order: string) => ({ description: `One page of ${member}, ${order}; more says whether rows follow` });
export const UsersPageSchema = Type.Object({ users: Rows(UserSchema, 'by login'), more: More }, { title: 'UsersPage', ...pageOf('users', 'by login') });
export const WorkstationsPageSchema = Type.Object({ workstations: Rows(WorkstationSchema, 'by id'), more: More }, { title: 'WorkstationsPage', ...pageOf('workstations', 'by id') });
export const CustomersPageSchema = Type.Object({ customers: Rows(CustomerSchema, 'by customer reference'), more: More }, { title: 'CustomersPage', ...pageOf('customers', 'by customer reference') });
export const AccountsPageSchema = Type.Object({ accounts: Rows(AccountSchema, 'by account number'), more: More }, { title: 'AccountsPage', ...pageOf('accounts', 'by account number') });
export const PostingsPageSchema = Type.Object({ postings: Rows(PostingSchema, 'newest first'), more: More }, { title: 'PostingsPage', ...pageOf('an account\'s postings', 'newest first') });
export const TermDepositsPageSchema = Type.Object({ termDeposits: Rows(TermDepositRecordSchema, 'newest first'), more: More }, { title: 'TermDepositsPage', ...pageOf('term deposits', 'newest first') });
export const LoanFacilitiesPageSchema = Type.Object({ loanFacilities: Rows(LoanFacilitySchema, 'by loan id'), more: More }, { title: 'LoanFacilitiesPage', ...pageOf('loan facilities', 'by loan id') });

export const LedgerReportSchema = Type.Object(
  {
    movements: Count('Movements proved'),
    accounts: Count('Account balances proved'),
    unbalancedMovements: Type.Array(
      Type.Object(
        { movementId: Identifier('Movement'), currency: Currency, totalMinor: SignedMinor('Sum of its postings') },
        { title: 'UnbalancedMovement', description: 'A movement whose postings do not sum to zero in a currency' },
      ),
      { description: 'Movements whose postings do not sum to zero (at most listedMax)' },
    ),
    balanceMismatches: Type.Array(
      Type.Object(
        { accountNumber: Identifier('Account'), storedMinor: SignedMinor('Stored balance'), postedMinor: SignedMinor('Sum of its postings') },
        { title: 'BalanceMismatch', description: 'An account whose stored balance is not the sum of its postings' },
      ),
      { description: 'Accounts whose balance is not the sum of their postings (at most listedMax)' },
    ),
    negativeCustomerAccounts: Type.Array(
      Type.Object({ accountNumber: Identifier('Account'), balanceMinor: SignedMinor('Balance') }, { title: 'NegativeCustomerAccount', description: 'A customer account below zero' }),
      { description: 'Customer accounts below zero (at most listedMax)' },
    ),
    termDepositMismatches: Type.Array(
      Type.Object(
        {
          contractNumber: Identifier('Contract'),
          status: Status('Contract status'),
          principalMinor: Minor('Principal'),
          accountBalanceMinor: Type.Union([SignedMinor('Its account\'s balance'), Type.Null()], { description: 'The contract account\'s balance; null when it has no account' }),
        },
        { title: 'TermDepositMismatch', description: 'A term deposit whose account disagrees with its status (Active: the principal; Matured: zero)' },
      ),
      { description: 'Term deposits whose account disagrees with their status (at most listedMax)' },
    ),
  },
  {
    title: 'LedgerReport',
    description: 'The core proves its ledger (coregate check): empty finding lists, the ledger holds; the counts are exact, the lists bounded by listedMax',
    examples: [{ movements: 9, accounts: 12, unbalancedMovements: [], balanceMismatches: [], negativeCustomerAccounts: [], termDepositMismatches: [] }],
  },
);

export const PostedReferencesCommandSchema = Type.Object(
  { references: Type.Array(Type.String({ pattern: ReferencePattern }), { maxItems: postedReferencesMax, description: 'Operation references' }) },
  { title: 'PostedReferencesQuestion', description: 'Which of these operation references have postings? (coregate check: every Executed operation must)', examples: [{ references: ['9eca89c4-2ef9-4ac5-b92b-3dbe3d0a4594'] }] },
);
export const PostedReferencesSchema = Type.Object(
  { posted: Type.Array(Type.String({ pattern: ReferencePattern }), { maxItems: postedReferencesMax, description: 'Those of the references asked that have postings; never another' }) },
  { title: 'PostedReferences', description: 'The answer to PostedReferencesQuestion: a read, nothing changes', examples: [{ posted: ['9eca89c4-2ef9-4ac5-b92b-3dbe3d0a4594'] }] },
);

export const CoreDataSchema = Type.Record(Type.String(), Type.Unknown(), {
  title: 'CoreData',
  description:
    'The data file\'s core part, as docs/sandbox.md describes the data file: businessDate, calendar, users, workstations, customers, accounts (balances in the major unit, as JSON numbers), termDepositProducts, merchandisingLoans. ' +
    'Only missing records are added, in one transaction; the calendar and business date are set on a new core only; the API\'s sections (realms, webhooks) are refused by name.',
  examples: [
    {
      users: [{ login: 'svc-treasury', status: 'Active' }],
      workstations: [{ id: 'WS-TREASURY-01', status: 'Active' }],
      customers: [{ customerReference: 'C0003', name: 'New Co', status: 'Active' }],
      accounts: [{ accountNumber: '3000000001', customerReference: 'C0003', currency: 'USD', balance: 1500.0, status: 'Active' }],
    },
  ],
});
export const LoadSummarySchema = Type.Object(
  { accountsAdded: Count('Accounts added (existing records are kept as they are)') },
  { title: 'CoreLoadSummary', description: 'What a load added', examples: [{ accountsAdded: 1 }] },
);
export const DataRefusedSchema = Type.Object(
  {
    error: Type.Literal('DATA_REFUSED'),
    field: Type.String({ maxLength: textLengthMax, description: 'Where: e.g. accounts[2].currency' }),
    message: Type.String({ maxLength: textLengthMax, description: 'What is wrong there' }),
  },
  {
    title: 'DataRefused',
    description: '400: the core refused the document; nothing was loaded',
    examples: [{ error: 'DATA_REFUSED', field: 'accounts[0].currency', message: 'XYZ is not an active ISO 4217 currency' }],
  },
);

export type AccountWire = Static<typeof AccountSchema>;
export type PostingWire = Static<typeof PostingSchema>;
export type TermDepositRecordWire = Static<typeof TermDepositRecordSchema>;
export type LoanFacilityWire = Static<typeof LoanFacilitySchema>;
export type LedgerReportWire = Static<typeof LedgerReportSchema>;
