/**
 * The remote core protocol's routes as one table (docs/core-protocol.md): each row is a method, a
 * path, the port method it calls, its schemas (which the OpenAPI document shows) and how its
 * answer is written with the codec. Each registered operation's two rows come first, made from its
 * folder's wire.ts (src/operations/registry.ts); the server (core-server.ts) registers every row
 * the same way; a row of a side the core does not serve (`side`) is left out, so a request for it
 * is a 404 NO_ROUTE and the HTTP adapter says the side is not served.
 */
import type { Static, TSchema } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import { isCalendarDate } from '../core/calendar-date.js';
import { BusinessDateBackwards, CoreDataRefused, type CoreBankingPort, type CoreDataLoad, type CoreRecords } from '../core/port.js';
import { callsOn, partsOf } from '../operations/registry.js';
import { BadCommand } from './bad-command.js';
import { accountToWire, eventToWire, loanFacilityToWire, outcomeToWire, postingToWire, reportToWire, termDepositRecordToWire, termDepositToWire } from './codec.js';
import {
  AccountParamsSchema,
  AccountSchema,
  AccountsPageSchema,
  AccountsQuerySchema,
  AdvanceCommandSchema,
  BackwardsSchema,
  BusinessDateSchema,
  ContractParamsSchema,
  CoreDataSchema,
  CustomersPageSchema,
  DataRefusedSchema,
  dataBodyBytesMax,
  DirectoryEntrySchema,
  EndOfDayReportSchema,
  EventsPageSchema,
  EventsQuerySchema,
  eventsPageMax,
  FencedSchema,
  LedgerCheckQuerySchema,
  LedgerReportSchema,
  LoanFacilitiesPageSchema,
  LoanFacilitiesQuerySchema,
  LoadSummarySchema,
  LoginParamsSchema,
  NotFoundSchema,
  PageQuerySchema,
  paths,
  PostedReferencesCommandSchema,
  PostedReferencesSchema,
  PostingsPageSchema,
  ProblemSchema,
  recordPaths,
  recordsPageMax,
  ReferenceParamsSchema,
  TermDepositSchema,
  TermDepositsPageSchema,
  TermDepositsQuerySchema,
  UsersPageSchema,
  WorkstationParamsSchema,
  WorkstationsPageSchema,
} from './protocol.js';

/** A page's default size when `limit` is absent. */
const pageDefault = 100;

/** The core a route may call: the operations side always, the read and load sides when it serves them. */
export type ServedCore = CoreBankingPort & Partial<CoreRecords & CoreDataLoad>;

type Input<P extends TSchema, Q extends TSchema, B extends TSchema> = { params: Static<P>; query: Static<Q>; body: Static<B> };

export interface CoreRoute<P extends TSchema = TSchema, Q extends TSchema = TSchema, B extends TSchema = TSchema> {
  method: 'GET' | 'POST';
  path: string;
  /** The port method it calls: the OpenAPI operationId. */
  portMethod: string;
  /** An operation's row: the operation's name (src/operations/registry.ts). */
  operation?: string;
  /** What the API does when a core lacks it (docs/core-protocol.md, "What a core must serve"): an operation's row says it. */
  withoutIt?: string;
  summary: string;
  tag: string;
  /** A side of the port beyond operations: left out when the core does not serve it. */
  side?: 'records' | 'data';
  params?: P;
  query?: Q;
  body?: B;
  bodyLimit?: number;
  response: Record<number, TSchema>;
  /** Calls the port and writes its answer with the codec; a reply sent here is the answer. */
  handle(core: Required<ServedCore>, input: Input<P, Q, B>, reply: FastifyReply): Promise<unknown>;
}

/** Keeps each row's schemas and handler's input types together. */
function route<P extends TSchema, Q extends TSchema, B extends TSchema>(row: CoreRoute<P, Q, B>): CoreRoute {
  return row as unknown as CoreRoute;
}

const problems = { 400: ProblemSchema, 500: ProblemSchema };
const notFound = (reply: FastifyReply) => reply.code(404).send({ status: 'NotFound' as const });
const page = (query: { limit?: string | undefined; offset?: string | undefined }) => {
  const limit = Number(query.limit ?? pageDefault);
  if (limit > recordsPageMax) throw new BadCommand(`limit must be at most ${recordsPageMax}`);
  return { limit, offset: Number(query.offset ?? '0') };
};

/**
 * An operation's two rows (its folder's wire.ts): POST executes its command under the reference, at
 * most once; GET looks the reference's outcome up.
 */
const operationRows = (await partsOf('wire')).flatMap(({ operation, part: { wire } }): CoreRoute[] => [
  route({
    method: 'POST',
    path: wire.path,
    portMethod: operation.port.execute,
    operation: operation.name,
    withoutIt: wire.withoutIt.execute,
    summary: wire.summaries.execute,
    tag: operation.tag.name,
    params: ReferenceParamsSchema,
    body: wire.commandSchema,
    response: { 200: wire.outcomeSchema, ...problems },
    handle: async (core, { params, body }) => outcomeToWire(await callsOn(core, operation).execute(params.reference, wire.commandFromWire(body)), operation.family, wire.resultToWire),
  }),
  route({
    method: 'GET',
    path: wire.path,
    portMethod: operation.port.lookup,
    operation: operation.name,
    withoutIt: wire.withoutIt.lookup,
    summary: wire.summaries.lookup,
    tag: operation.tag.name,
    params: ReferenceParamsSchema,
    response: { 200: wire.outcomeSchema, 404: NotFoundSchema, 500: ProblemSchema },
    handle: async (core, { params }, reply) => {
      const lookup = await callsOn(core, operation).lookup(params.reference);
      return lookup.status === 'NotFound' ? notFound(reply) : outcomeToWire(lookup, operation.family, wire.resultToWire);
    },
  }),
]);

export const coreRoutes: readonly CoreRoute[] = [
  ...operationRows,
  route({
    method: 'POST',
    path: paths.fence,
    portMethod: 'fenceOperation',
    summary: 'Close a reference the API gave up on: from now on the core refuses to execute it (NOT_EXECUTED), unless it already did',
    tag: 'Reconciliation',
    params: ReferenceParamsSchema,
    response: { 200: FencedSchema, 500: ProblemSchema },
    handle: async (core, { params }) => {
      await core.fenceOperation(params.reference);
      return { status: 'Fenced' as const };
    },
  }),
  route({
    method: 'GET',
    path: paths.termDeposit,
    portMethod: 'retrieveTermDeposit',
    summary: 'A term deposit contract with the interest expected at maturity',
    tag: 'Term deposits',
    params: ContractParamsSchema,
    response: { 200: TermDepositSchema, 404: NotFoundSchema, 500: ProblemSchema },
    handle: async (core, { params }, reply) => {
      const deposit = await core.retrieveTermDeposit(params.contractNumber);
      return deposit ? termDepositToWire(deposit) : notFound(reply);
    },
  }),
  route({
    method: 'GET',
    path: paths.user,
    portMethod: 'userStatus',
    summary: 'A user\'s status in the core\'s directory',
    tag: 'Directory',
    params: LoginParamsSchema,
    response: { 200: DirectoryEntrySchema, 404: NotFoundSchema, 500: ProblemSchema },
    handle: async (core, { params }, reply) => {
      const status = await core.userStatus(params.login);
      return status === undefined ? notFound(reply) : { status };
    },
  }),
  route({
    method: 'GET',
    path: paths.workstation,
    portMethod: 'workstationStatus',
    summary: 'A workstation\'s status in the core\'s directory',
    tag: 'Directory',
    params: WorkstationParamsSchema,
    response: { 200: DirectoryEntrySchema, 404: NotFoundSchema, 500: ProblemSchema },
    handle: async (core, { params }, reply) => {
      const status = await core.workstationStatus(params.id);
      return status === undefined ? notFound(reply) : { status };
    },
  }),
  route({
    method: 'GET',
    path: paths.businessDate,
    portMethod: 'businessDate',
    summary: 'The core\'s business date',
    tag: 'Business days',
    response: { 200: BusinessDateSchema, 500: ProblemSchema },
    handle: async (core) => ({ businessDate: await core.businessDate() }),
  }),
  route({
    method: 'POST',
    path: paths.businessDateAdvance,
    portMethod: 'advanceBusinessDate',
    summary: 'Advance the business date, running end of day once for every business day passed (idempotent per day, resumable, never backwards)',
    tag: 'Business days',
    body: AdvanceCommandSchema,
    response: { 200: EndOfDayReportSchema, 409: BackwardsSchema, ...problems },
    handle: async (core, { body }, reply) => {
      if (!isCalendarDate(body.to)) throw new BadCommand(`to "${body.to}" is not a calendar date`);
      try {
        return reportToWire(await core.advanceBusinessDate(body.to));
      } catch (error) {
        if (error instanceof BusinessDateBackwards) {
          return reply.code(409).send({ error: 'BUSINESS_DATE_BACKWARDS' as const, message: error.message, businessDate: error.current, requested: error.requested });
        }
        if (error instanceof RangeError) throw new BadCommand(error.message);
        throw error;
      }
    },
  }),
  route({
    method: 'GET',
    path: paths.events,
    portMethod: 'eventsAfter',
    summary: 'The core\'s events (maturities, overdue installments) after a sequence, in order',
    tag: 'Business days',
    query: EventsQuerySchema,
    response: { 200: EventsPageSchema, ...problems },
    handle: async (core, { query }) => {
      const limit = Number(query.limit ?? '100');
      if (limit > eventsPageMax) throw new BadCommand(`limit must be at most ${eventsPageMax}`);
      return { events: (await core.eventsAfter(Number(query.after ?? '0'), limit)).map(eventToWire) };
    },
  }),

  // ----- The read side for operators -----
  route({
    method: 'GET',
    path: recordPaths.customers,
    portMethod: 'listCustomers',
    summary: 'Customers by reference, with how many customer accounts each holds (paged)',
    tag: 'Records',
    side: 'records',
    query: PageQuerySchema,
    response: { 200: CustomersPageSchema, ...problems },
    handle: async (core, { query }) => {
      const answer = await core.listCustomers(page(query));
      return { customers: answer.items, more: answer.more };
    },
  }),
  route({
    method: 'GET',
    path: recordPaths.users,
    portMethod: 'listUsers',
    summary: 'The directory\'s technical users by login, with their status (paged)',
    tag: 'Records',
    side: 'records',
    query: PageQuerySchema,
    response: { 200: UsersPageSchema, ...problems },
    handle: async (core, { query }) => {
      const answer = await core.listUsers(page(query));
      return { users: answer.items, more: answer.more };
    },
  }),
  route({
    method: 'GET',
    path: recordPaths.workstations,
    portMethod: 'listWorkstations',
    summary: 'The directory\'s workstations by id, with their status (paged)',
    tag: 'Records',
    side: 'records',
    query: PageQuerySchema,
    response: { 200: WorkstationsPageSchema, ...problems },
    handle: async (core, { query }) => {
      const answer = await core.listWorkstations(page(query));
      return { workstations: answer.items, more: answer.more };
    },
  }),
  route({
    method: 'GET',
    path: recordPaths.accounts,
    portMethod: 'listAccounts',
    summary: 'Accounts of one kind (customer by default) with their live balances, by number (paged)',
    tag: 'Records',
    side: 'records',
    query: AccountsQuerySchema,
    response: { 200: AccountsPageSchema, ...problems },
    handle: async (core, { query }) => {
      const answer = await core.listAccounts({ customerReference: query.customerReference, kind: query.kind }, page(query));
      return { accounts: answer.items.map(accountToWire), more: answer.more };
    },
  }),
  route({
    method: 'GET',
    path: recordPaths.account,
    portMethod: 'findAccount',
    summary: 'An account with its live balance',
    tag: 'Records',
    side: 'records',
    params: AccountParamsSchema,
    response: { 200: AccountSchema, 404: NotFoundSchema, 500: ProblemSchema },
    handle: async (core, { params }, reply) => {
      const account = await core.findAccount(params.accountNumber);
      return account ? accountToWire(account) : notFound(reply);
    },
  }),
  route({
    method: 'GET',
    path: recordPaths.postings,
    portMethod: 'listPostings',
    summary: 'An account\'s postings, newest first, each with the balance just after it (paged)',
    tag: 'Records',
    side: 'records',
    params: AccountParamsSchema,
    query: PageQuerySchema,
    response: { 200: PostingsPageSchema, 404: NotFoundSchema, ...problems },
    handle: async (core, { params, query }, reply) => {
      const answer = await core.listPostings(params.accountNumber, page(query));
      return answer ? { postings: answer.items.map(postingToWire), more: answer.more } : notFound(reply);
    },
  }),
  route({
    method: 'GET',
    path: recordPaths.termDeposits,
    portMethod: 'listTermDeposits',
    summary: 'Term deposits, newest first, with the interest expected at maturity (paged)',
    tag: 'Records',
    side: 'records',
    query: TermDepositsQuerySchema,
    response: { 200: TermDepositsPageSchema, ...problems },
    handle: async (core, { query }) => {
      const answer = await core.listTermDeposits({ status: query.status, contractNumber: query.contractNumber }, page(query));
      return { termDeposits: answer.items.map(termDepositRecordToWire), more: answer.more };
    },
  }),
  route({
    method: 'GET',
    path: recordPaths.loanFacilities,
    portMethod: 'listLoanFacilities',
    summary: 'Merchandising loan facilities with their installments, by id (paged)',
    tag: 'Records',
    side: 'records',
    query: LoanFacilitiesQuerySchema,
    response: { 200: LoanFacilitiesPageSchema, ...problems },
    handle: async (core, { query }) => {
      const answer = await core.listLoanFacilities({ loanId: query.loanId }, page(query));
      return { loanFacilities: answer.items.map(loanFacilityToWire), more: answer.more };
    },
  }),
  route({
    method: 'GET',
    path: recordPaths.ledgerCheck,
    portMethod: 'checkLedger',
    summary: 'Proves the ledger: balanced movements, balances equal to their postings, no customer account below zero, deposits\' accounts agree with their status',
    tag: 'Records',
    side: 'records',
    query: LedgerCheckQuerySchema,
    response: { 200: LedgerReportSchema, ...problems },
    handle: async (core, { query }) => {
      const listedMax = Number(query.listedMax ?? '100');
      if (listedMax > recordsPageMax) throw new BadCommand(`listedMax must be at most ${recordsPageMax}`);
      return core.checkLedger(listedMax);
    },
  }),
  route({
    method: 'POST',
    path: recordPaths.postedReferences,
    portMethod: 'postedReferences',
    summary: 'Which of these operation references have postings (a read: nothing changes)',
    tag: 'Records',
    side: 'records',
    body: PostedReferencesCommandSchema,
    response: { 200: PostedReferencesSchema, ...problems },
    handle: async (core, { body }) => ({ posted: await core.postedReferences(body.references) }),
  }),

  // ----- The load side for sandbox data -----
  route({
    method: 'POST',
    path: recordPaths.data,
    portMethod: 'loadData',
    summary: 'Load the data file\'s core part: only missing records are added, in one transaction; what exists is kept as it is',
    tag: 'Sandbox data',
    side: 'data',
    body: CoreDataSchema,
    bodyLimit: dataBodyBytesMax,
    response: { 200: LoadSummarySchema, 400: DataRefusedSchema, 500: ProblemSchema },
    handle: async (core, { body }, reply) => {
      try {
        return await core.loadData(body);
      } catch (error) {
        if (error instanceof CoreDataRefused) return reply.code(400).send({ error: 'DATA_REFUSED' as const, field: error.field, message: error.message });
        throw error;
      }
    },
  }),
];
