/**
 * The remote core protocol's server side (docs/core-protocol.md): any CoreBankingPort — the
 * reference core in `coregate core serve` — behind HTTP. Routes parse, call the port once, and
 * write its answer; the port keeps at most once per reference, so a repeated POST answers the
 * original outcome (the reference in the path is the idempotency key, as a PUT's URL is).
 *
 * No authentication: the protocol must run on a private network or behind mTLS.
 */
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Tracer } from '@opentelemetry/api';
import Fastify, { type FastifyBaseLogger, type FastifyError, type FastifyInstance } from 'fastify';
import { randomUUID } from 'node:crypto';
import { isCalendarDate, toEpochDay } from '../core/calendar-date.js';
import { currencyExponent } from '../core/currencies.js';
import { BusinessDateBackwards, type CoreBankingPort } from '../core/port.js';
import type { Logger } from '../log.js';
import { spanIdsOf, traceHttpRequests } from '../tracing/http-spans.js';
import { databaseRetryAfterSeconds, isDatabaseUnavailable } from '../store/engine/database-unavailable.js';
import {
  eventToWire,
  reportToWire,
  loanCommandFromWire,
  loanResultToWire,
  outcomeToWire,
  termDepositCommandFromWire,
  termDepositToWire,
} from './codec.js';
import {
  AdvanceCommandSchema,
  BackwardsSchema,
  BusinessDateSchema,
  EndOfDayReportSchema,
  EventsPageSchema,
  EventsQuerySchema,
  eventsPageMax,
  ContractParamsSchema,
  DirectoryEntrySchema,
  identifierLengthMax,
  LoanInstallmentCommandSchema,
  FencedSchema,
  LoanInstallmentOutcomeSchema,
  LoginParamsSchema,
  NotFoundSchema,
  paths,
  ProblemSchema,
  ReadySchema,
  ReferenceParamsSchema,
  TermDepositCommandSchema,
  TermDepositOutcomeSchema,
  TermDepositSchema,
  UnavailableSchema,
  WorkstationParamsSchema,
  type LoanInstallmentCommandWire,
  type TermDepositCommandWire,
} from './protocol.js';

/** Commands are small JSON documents. */
export const coreBodyBytesMax = 64 * 1024;
/** A request that takes longer is cut; the API's own time-out is much shorter. */
const requestTimeoutMs = 30_000;
/** CONTRACT §6: a percentage per year, > 0 and at most 100. */
const ratePercentMax = 100;

export interface CoreServerOptions {
  core: CoreBankingPort;
  logger: Logger;
  version: string;
  /** A server span per request, joining the caller's trace (its `traceparent`); none when absent. */
  tracer?: Tracer | undefined;
}

/** A command the schema lets through but the protocol's rules refuse: 400. */
class BadCommand extends Error {}

export async function buildCoreServer(options: CoreServerOptions): Promise<FastifyInstance> {
  const { core } = options;
  const app = Fastify({
    loggerInstance: options.logger as FastifyBaseLogger,
    bodyLimit: coreBodyBytesMax,
    requestTimeout: requestTimeoutMs,
    genReqId: () => randomUUID(),
    return503OnClosing: true,
    // Longer than any identifier the protocol allows, so that an over-long one is a 400 of its schema.
    routerOptions: { maxParamLength: 2 * identifierLengthMax },
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, allErrors: false } },
  }).withTypeProvider<TypeBoxTypeProvider>();
  app.removeContentTypeParser('text/plain');
  if (options.tracer) {
    traceHttpRequests(app, { tracer: options.tracer });
    // The request's log lines (its "request completed" among them) carry its trace and span ids.
    app.addHook('onRequest', (request, reply, done) => {
      const ids = spanIdsOf(request);
      if (ids !== undefined) request.log = reply.log = request.log.child(ids);
      done();
    });
  }

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'coregate remote core protocol',
        version: options.version,
        description:
          'The CoreBankingPort over HTTP (docs/core-protocol.md). The reference in a command\'s path is its idempotency key: the same reference again answers the original outcome. ' +
          'Amounts are integer minor units as decimal strings. No authentication: run it on a private network or behind mTLS.',
      },
    },
  });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  app.setNotFoundHandler(async (request, reply) =>
    reply.code(404).send({ error: 'NO_ROUTE', message: `No route ${request.method} ${request.url.split('?')[0] ?? ''}` }),
  );
  app.setErrorHandler(async (error: FastifyError, request, reply) => {
    if (error instanceof BadCommand || (error.validation && error.validation.length > 0)) {
      return reply.code(400).send({ error: 'BAD_REQUEST', message: error.message });
    }
    if (error.statusCode === 413) return reply.code(413).send({ error: 'PAYLOAD_TOO_LARGE', message: `The body exceeds ${coreBodyBytesMax} bytes` });
    if (error.statusCode === 415) return reply.code(415).send({ error: 'UNSUPPORTED_MEDIA_TYPE', message: 'Content-Type must be application/json' });
    if (error.statusCode === 400) return reply.code(400).send({ error: 'BAD_REQUEST', message: 'The body is not valid JSON' });
    if (isDatabaseUnavailable(error)) {
      // The core's own database failed over or was cut: the API holds the outcome as unknown and reconciles.
      request.log.warn({ err: error }, 'core request met a database outage');
      return reply.code(503).header('retry-after', String(databaseRetryAfterSeconds)).send({ error: 'UNAVAILABLE', message: 'The core\'s database is unavailable' });
    }
    request.log.error({ err: error }, 'core request failed');
    return reply.code(500).send({ error: 'INTERNAL_ERROR', message: 'Internal error; the core\'s log has the cause' });
  });

  const problems = { 400: ProblemSchema, 500: ProblemSchema };

  app.post(
    paths.termDepositConstitution,
    {
      schema: {
        summary: 'Constitute a term deposit under a reference (at most once)',
        operationId: 'constituteTermDeposit',
        tags: ['Term deposits'],
        params: ReferenceParamsSchema,
        body: TermDepositCommandSchema,
        response: { 200: TermDepositOutcomeSchema, ...problems },
      },
    },
    async (request) => {
      checkTermDepositCommand(request.body);
      const outcome = await core.constituteTermDeposit(request.params.reference, termDepositCommandFromWire(request.body));
      return outcomeToWire(outcome, 'TD', termDepositToWire);
    },
  );

  app.get(
    paths.termDepositConstitution,
    {
      schema: {
        summary: 'The outcome of a term deposit constitution by reference (reconciliation)',
        operationId: 'findTermDepositConstitution',
        tags: ['Term deposits'],
        params: ReferenceParamsSchema,
        response: { 200: TermDepositOutcomeSchema, 404: NotFoundSchema, 500: ProblemSchema },
      },
    },
    async (request, reply) => {
      const lookup = await core.findTermDepositConstitution(request.params.reference);
      if (lookup.status === 'NotFound') return reply.code(404).send({ status: 'NotFound' as const });
      return outcomeToWire(lookup, 'TD', termDepositToWire);
    },
  );

  app.post(
    paths.loanInstallmentExecution,
    {
      schema: {
        summary: 'Execute a loan installment payment under a reference (at most once)',
        operationId: 'executeLoanInstallment',
        tags: ['Merchandising loans'],
        params: ReferenceParamsSchema,
        body: LoanInstallmentCommandSchema,
        response: { 200: LoanInstallmentOutcomeSchema, ...problems },
      },
    },
    async (request) => {
      checkLoanCommand(request.body);
      const outcome = await core.executeLoanInstallment(request.params.reference, loanCommandFromWire(request.body));
      return outcomeToWire(outcome, 'ML', loanResultToWire);
    },
  );

  app.get(
    paths.loanInstallmentExecution,
    {
      schema: {
        summary: 'The outcome of a loan installment execution by reference (reconciliation)',
        operationId: 'findLoanInstallmentExecution',
        tags: ['Merchandising loans'],
        params: ReferenceParamsSchema,
        response: { 200: LoanInstallmentOutcomeSchema, 404: NotFoundSchema, 500: ProblemSchema },
      },
    },
    async (request, reply) => {
      const lookup = await core.findLoanInstallmentExecution(request.params.reference);
      if (lookup.status === 'NotFound') return reply.code(404).send({ status: 'NotFound' as const });
      return outcomeToWire(lookup, 'ML', loanResultToWire);
    },
  );

  app.post(
    paths.fence,
    {
      schema: {
        summary: 'Close a reference the API gave up on: from now on the core refuses to execute it (NOT_EXECUTED), unless it already did',
        operationId: 'fenceOperation',
        tags: ['Reconciliation'],
        params: ReferenceParamsSchema,
        response: { 200: FencedSchema, 500: ProblemSchema },
      },
    },
    async (request) => {
      await core.fenceOperation(request.params.reference);
      return { status: 'Fenced' as const };
    },
  );

  app.get(
    paths.termDeposit,
    {
      schema: {
        summary: 'A term deposit contract with the interest expected at maturity',
        operationId: 'retrieveTermDeposit',
        tags: ['Term deposits'],
        params: ContractParamsSchema,
        response: { 200: TermDepositSchema, 404: NotFoundSchema, 500: ProblemSchema },
      },
    },
    async (request, reply) => {
      const deposit = await core.retrieveTermDeposit(request.params.contractNumber);
      if (!deposit) return reply.code(404).send({ status: 'NotFound' as const });
      return termDepositToWire(deposit);
    },
  );

  app.get(
    paths.user,
    {
      schema: {
        summary: 'A user\'s status in the core\'s directory',
        operationId: 'userStatus',
        tags: ['Directory'],
        params: LoginParamsSchema,
        response: { 200: DirectoryEntrySchema, 404: NotFoundSchema, 500: ProblemSchema },
      },
    },
    async (request, reply) => {
      const status = await core.userStatus(request.params.login);
      return status === undefined ? reply.code(404).send({ status: 'NotFound' as const }) : { status };
    },
  );

  app.get(
    paths.workstation,
    {
      schema: {
        summary: 'A workstation\'s status in the core\'s directory',
        operationId: 'workstationStatus',
        tags: ['Directory'],
        params: WorkstationParamsSchema,
        response: { 200: DirectoryEntrySchema, 404: NotFoundSchema, 500: ProblemSchema },
      },
    },
    async (request, reply) => {
      const status = await core.workstationStatus(request.params.id);
      return status === undefined ? reply.code(404).send({ status: 'NotFound' as const }) : { status };
    },
  );

  app.get(
    paths.businessDate,
    {
      schema: {
        summary: 'The core\'s business date',
        operationId: 'businessDate',
        tags: ['Business days'],
        response: { 200: BusinessDateSchema, 500: ProblemSchema },
      },
    },
    async () => ({ businessDate: await core.businessDate() }),
  );

  app.post(
    paths.businessDateAdvance,
    {
      schema: {
        summary: 'Advance the business date, running end of day once for every business day passed (idempotent per day, resumable, never backwards)',
        operationId: 'advanceBusinessDate',
        tags: ['Business days'],
        body: AdvanceCommandSchema,
        response: { 200: EndOfDayReportSchema, 409: BackwardsSchema, ...problems },
      },
    },
    async (request, reply) => {
      if (!isCalendarDate(request.body.to)) throw new BadCommand(`to "${request.body.to}" is not a calendar date`);
      try {
        return reportToWire(await core.advanceBusinessDate(request.body.to));
      } catch (error) {
        if (error instanceof BusinessDateBackwards) {
          return reply.code(409).send({ error: 'BUSINESS_DATE_BACKWARDS' as const, message: error.message, businessDate: error.current, requested: error.requested });
        }
        if (error instanceof RangeError) throw new BadCommand(error.message);
        throw error;
      }
    },
  );

  app.get(
    paths.events,
    {
      schema: {
        summary: 'The core\'s events (maturities, overdue installments) after a sequence, in order',
        operationId: 'eventsAfter',
        tags: ['Business days'],
        querystring: EventsQuerySchema,
        response: { 200: EventsPageSchema, ...problems },
      },
    },
    async (request) => {
      const limit = Number(request.query.limit ?? '100');
      if (limit > eventsPageMax) throw new BadCommand(`limit must be at most ${eventsPageMax}`);
      return { events: (await core.eventsAfter(Number(request.query.after ?? '0'), limit)).map(eventToWire) };
    },
  );

  app.get(
    paths.ready,
    {
      schema: {
        summary: 'Readiness: 200 when the core answers (its store included)',
        operationId: 'ready',
        tags: ['Health'],
        response: { 200: ReadySchema, 503: UnavailableSchema },
      },
    },
    async (request, reply) => {
      try {
        await core.ping();
        return { status: 'ready' as const };
      } catch (error) {
        request.log.warn({ err: error }, 'core not ready');
        return reply.code(503).send({ status: 'unavailable' as const });
      }
    },
  );
  app.get('/health/live', { schema: { hide: true } }, async () => ({ status: 'ok' }));

  return app;
}

/** What the API checks before it calls a core (src/core/term-deposits/initiation.ts), checked again at the core's door. */
function checkTermDepositCommand(command: TermDepositCommandWire): void {
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

function checkLoanCommand(command: LoanInstallmentCommandWire): void {
  if ((command.amountMinor === undefined) !== (command.currency === undefined)) throw new BadCommand('amountMinor and currency come together');
  if (command.currency !== undefined) checkCurrency(command.currency);
  if (command.maturityDate !== undefined && !isCalendarDate(command.maturityDate)) throw new BadCommand(`maturityDate "${command.maturityDate}" is not a calendar date`);
}

function checkCurrency(currency: string): void {
  if (currencyExponent(currency) === undefined) throw new BadCommand(`${currency} is not an active ISO 4217 currency`);
}
