/**
 * Readiness, the business date, end of day and the core's events (docs/business-days.md): the
 * date is a calendar date and value dates before it are refused; advancing past a maturity repays
 * it, the report's counts are the events it wrote, an advance to the same date again does nothing,
 * and the date never goes backwards — checked only when asked (`--advance`), since a shared test
 * core's date cannot be moved back; the events follow one another in a strictly increasing
 * sequence, keep their ids, and page with `eventsAfter`.
 */
import { randomUUID } from 'node:crypto';
import { addDays, isCalendarDate } from '../core/calendar-date.js';
import { errorCatalogue as E } from '../core/error-catalogue.js';
import { formatMinor, parseAmount } from '../core/money.js';
import { describeValue } from './exchange-log.js';
import { BusinessDateBackwards, type CoreEvent, type EndOfDayReport } from '../core/port.js';
import { check, executed, money, rejectedWith, same } from './checks.js';
import type { ConformanceContext } from './conformance-context.js';
import { RuleFailure, RuleSkipped } from './conformance-errors.js';
import type { ConformanceRule } from './conformance-rule.js';

/** Events asked for per call: the protocol's largest page (docs/core-protocol.md). */
const eventsPageSize = 1000;
/** Pages of events read at most (a long-lived test core may hold many). */
const eventPagesMax = 100;
/** Events stepped through one by one to prove paging. */
const steppedEventsMax = 10;
const eventTypes = ['termDeposit.matured', 'loanInstallment.overdue'];

/** Every event after `after`, page by page (at most eventPagesMax pages). */
async function eventsAfter(context: ConformanceContext, after: number): Promise<CoreEvent[]> {
  const events: CoreEvent[] = [];
  let from = after;
  for (let page = 0; page < eventPagesMax; page += 1) {
    const batch = await context.port.eventsAfter(from, eventsPageSize);
    events.push(...batch);
    const last = batch.at(-1);
    if (batch.length < eventsPageSize || !last) break;
    from = last.sequence;
  }
  return events;
}

/** What a termDeposit.matured event repaid to an account: the principal to its source account, the interest to its interest account (docs/business-days.md, "Events"). */
function repaymentTo(event: CoreEvent, accountNumber: string): bigint {
  const amount = (value: unknown): bigint => {
    const { amount: text, currency } = (value ?? {}) as { amount?: unknown; currency?: unknown };
    if (typeof text === 'string' && /^0(\.0+)?$/.test(text)) return 0n;
    const parsed = typeof text === 'string' && typeof currency === 'string' ? parseAmount(text, currency) : undefined;
    if (!parsed?.ok) throw new RuleFailure(`event ${event.sequence}'s amount ${describeValue(value)} is not an amount with its currency ({"amount":"2500.00","currency":"USD"})`);
    return parsed.minor;
  };
  let repaid = 0n;
  if (event.data.sourceAccount === accountNumber) repaid += amount(event.data.principal);
  if (event.data.interestAccount === accountNumber) repaid += amount(event.data.interest);
  return repaid;
}

export const businessDayRules: ConformanceRule[] = [
  {
    id: 'readiness',
    title: 'readiness: the core answers its readiness probe (GET /health/ready 200)',
    async run(context) {
      await context.port.ping();
    },
  },
  {
    id: 'business-date',
    title: 'the business date is a calendar date; a value date before it is Rejected valueDateBeforeBusinessDate (TD-422-011); a business day from it on is accepted',
    async run(context) {
      const date = await context.port.businessDate();
      check(isCalendarDate(date), `businessDate answered "${date}", not a YYYY-MM-DD calendar date`);
      same(date, context.businessDate, 'the business date (it moved since the kit started)');
      rejectedWith(
        await context.port.constituteTermDeposit(randomUUID(), context.deposit({ valueDate: addDays(date, -1) })),
        E.valueDateBeforeBusinessDate,
        'TD',
        `a value date the day before the business date ${date}`,
      );
      check(context.valueDate >= date, `the value date the core accepted, ${context.valueDate}, is before its business date ${date}`);
      if (context.valueDate !== date) context.note(`the business date ${date} is not a business day: the first value date the core accepted is ${context.valueDate}`);
    },
  },
  {
    id: 'end-of-day',
    title: 'end of day: advancing past a maturity repays principal and interest and the contract is Matured; the report\'s counts are the events it wrote; advancing to the same date again does nothing; the date never goes backwards',
    async run(context) {
      if (!context.advance) throw new RuleSkipped('it moves the core\'s business date, which cannot be undone on a shared test core: run with --advance');
      const { port } = context;
      const from = await port.businessDate();
      check(context.valueDate >= from, `the business date moved to ${from} since the kit started; run the kit again`);
      // The advance is optional for a remote core (docs/core-protocol.md, "What a core must serve"):
      // an advance to the current date changes nothing, so it asks safely whether the core serves it.
      if (context.wire) {
        const probe = await context.wire.send('POST', '/core/v1/business-date/advance', JSON.stringify({ to: from }));
        if (probe.status === 404 && (probe.json as { error?: unknown } | undefined)?.error === 'NO_ROUTE') {
          throw new RuleSkipped('the core does not serve the advance of the business date (POST /core/v1/business-date/advance answered 404 NO_ROUTE): it is optional');
        }
      }
      const before = (await eventsAfter(context, 0)).at(-1)?.sequence ?? 0;
      // A short term ending on a weekday followed by a weekday: the maturity needs no roll, and the
      // new business date (the day after it) is a value date the kit can book on afterwards.
      let days = Math.max(1, context.fixtures.product.minDays);
      const weekendNear = (day: number) => context.isWeekend(addDays(context.valueDate, day)) || context.isWeekend(addDays(context.valueDate, day + 1));
      while (weekendNear(days) && days < context.fixtures.product.maxDays) days += 1;
      const source = context.account('endOfDaySource');
      const interest = context.account('endOfDayInterest');
      const watch = await context.watch([source, interest]);
      const reference = randomUUID();
      const principal = context.principalMinor;
      const contract = executed(
        await port.constituteTermDeposit(reference, context.deposit({ numberOfDays: days, principalMinor: principal, sourceAccount: source.accountNumber, interestAccount: interest.accountNumber })),
        'TD',
        'a constitution to mature',
      );
      const to = addDays(contract.maturityDate, 1);
      const report: EndOfDayReport = await port.advanceBusinessDate(to);
      same([report.from, report.to], [from, to], 'the report\'s from and to');
      check(report.daysClosed.includes(contract.maturityDate), `the days closed (${report.daysClosed.join(', ')}) do not include the maturity ${contract.maturityDate}, a business day before ${to}`);
      check(report.daysClosed.every((day) => day >= from && day < to), `a day closed is outside ${from} ≤ day < ${to}: ${report.daysClosed.join(', ')}`);
      check(report.maturedDeposits >= 1, `the report counts ${report.maturedDeposits} matured deposits; the kit's matured on ${contract.maturityDate}`);
      same(await port.businessDate(), to, 'the business date after the advance');
      context.movedTo(to);

      const retrieved = await port.retrieveTermDeposit(contract.contractNumber);
      same(retrieved?.status, 'Matured', `contract ${contract.contractNumber}'s status after its maturity`);
      same(retrieved?.expectedInterestMinor, contract.expectedInterestMinor, 'the matured contract\'s interest');
      const written = await eventsAfter(context, before);
      const counted = (type: string) => written.filter((event) => event.type === type && report.daysClosed.includes(event.businessDate)).length;
      same(counted('termDeposit.matured'), report.maturedDeposits, 'termDeposit.matured events written by the advance against the report\'s maturedDeposits');
      same(counted('loanInstallment.overdue'), report.overdueInstallments, 'loanInstallment.overdue events written by the advance against the report\'s overdueInstallments');
      if (context.fixtures.origin === 'loaded') check(report.overdueInstallments >= 1, `the kit's installment due on ${context.businessDate} is unpaid past the days closed, yet the report counts ${report.overdueInstallments} overdue`);
      const matured = written.find((event) => event.type === 'termDeposit.matured' && event.operationReference === reference);
      check(matured, `no termDeposit.matured event for the kit's contract ${contract.contractNumber} (operationReference ${reference})`);
      same(matured.data.contractNumber, contract.contractNumber, 'the matured event\'s data.contractNumber');
      same(matured.data.principal, { amount: formatMinor(contract.principalMinor, contract.currency), currency: contract.currency }, 'the matured event\'s data.principal');
      same(matured.data.interest, { amount: formatMinor(contract.expectedInterestMinor, contract.currency), currency: contract.currency }, 'the matured event\'s data.interest (the retrieve\'s, to the cent)');
      // What the advance repaid to each account, from its events: on a shared core other contracts of the same accounts mature too.
      const repaid = (accountNumber: string) => written.filter((event) => event.type === 'termDeposit.matured').reduce((sum, event) => sum + repaymentTo(event, accountNumber), 0n);
      await watch.expectMoves([
        [source, -principal + repaid(source.accountNumber), `the source account is debited ${money(principal, contract.currency)} and repaid what matured (its events)`],
        [interest, repaid(interest.accountNumber), `the interest account is credited ${money(contract.expectedInterestMinor, contract.currency)} at maturity (and what else its events repaid)`],
      ]);

      same(await port.advanceBusinessDate(to), { from: to, to, daysClosed: [], maturedDeposits: 0, overdueInstallments: 0 }, `advancing to ${to} again`);
      same((await eventsAfter(context, before)).length, written.length, 'events written by advancing to the same date again');
      try {
        await port.advanceBusinessDate(from);
        throw new RuleFailure(`advancing back to ${from} from ${to} was accepted: the business date never goes backwards (409 BUSINESS_DATE_BACKWARDS)`);
      } catch (error) {
        if (!(error instanceof BusinessDateBackwards)) throw error;
        same([error.current, error.requested], [to, from], 'the refusal\'s dates (businessDate, requested)');
      }
      same(await port.businessDate(), to, 'the business date after a refused advance');
      rejectedWith(await port.constituteTermDeposit(randomUUID(), context.deposit({ valueDate: from })), E.valueDateBeforeBusinessDate, 'TD', `a value date ${from}, before the new business date ${to}`);
    },
  },
  {
    id: 'events',
    title: 'events in order: a strictly increasing sequence, stable ids (read twice, the same events), and eventsAfter pages without losing or repeating one',
    async run(context) {
      const events = await eventsAfter(context, 0);
      if (events.length < 2) throw new RuleSkipped(`the core holds ${events.length} event${events.length === 1 ? '' : 's'}: events come from end of day (run with --advance)`);
      const ids = new Set<string>();
      for (const [index, event] of events.entries()) {
        if (index > 0) check(event.sequence > (events[index - 1]?.sequence ?? 0), `event ${event.id}'s sequence ${event.sequence} does not follow ${events[index - 1]?.sequence}`);
        check(!ids.has(event.id), `two events have the id ${event.id}`);
        ids.add(event.id);
        check(eventTypes.includes(event.type), `event ${event.sequence} has the type ${event.type}`);
        check(isCalendarDate(event.businessDate), `event ${event.sequence}'s businessDate "${event.businessDate}" is no calendar date`);
      }
      same(await eventsAfter(context, 0), events, 'the events read a second time');
      // Step through the last events one at a time: each page of one is the next event, none lost.
      const stepped = events.slice(-steppedEventsMax - 1);
      for (let index = 1; index < stepped.length; index += 1) {
        const previous = stepped[index - 1] as CoreEvent;
        same(await context.port.eventsAfter(previous.sequence, 1), [stepped[index]], `eventsAfter(${previous.sequence}, 1): the event after it`);
      }
      const last = events.at(-1) as CoreEvent;
      same(await context.port.eventsAfter(last.sequence, 10), [], `eventsAfter the last sequence ${last.sequence}`);
      const firstTwo = await context.port.eventsAfter(0, 2);
      same(firstTwo, events.slice(0, 2), 'eventsAfter(0, 2): the first two events');
    },
  },
];
