/**
 * The business date, end of day and the core's events (docs/business-days.md): the date is a
 * calendar date and value dates before it are refused; advancing past a maturity repays it, the
 * report's counts are the events it wrote, an advance to the same date again does nothing, and the
 * date never goes backwards — checked only when asked (`--advance`), since a shared test core's date
 * cannot be moved back; the events follow one another in a strictly increasing sequence, keep their
 * ids, and page with `eventsAfter`.
 *
 * The kit reads events only after the last one the core held when it started (a long-lived test
 * core may hold any number), in small pages, and asserts nothing of events it did not make.
 */
import { randomUUID } from 'node:crypto';
import { addDays, isCalendarDate } from '../core/calendar-date.js';
import { errorCatalogue as E } from '../core/error-catalogue.js';
import { formatMinor, parseAmount } from '../core/money.js';
import { BusinessDateBackwards, type CoreBankingPort, type CoreEvent, type EndOfDayReport } from '../core/port.js';
import { paths } from '../core-http/protocol.js';
import { check, describeOutcome, executed, money, rejectedWith, same } from './checks.js';
import type { ConformanceContext } from './conformance-context.js';
import { RuleFailure, RuleSkipped } from './conformance-errors.js';
import type { ConformanceRule } from './conformance-rule.js';
import { describeValue } from './exchange-log.js';

/** Events asked for per call: small answers (HttpCore refuses an answer above 256 KiB, and an event may carry 2 KiB of data). */
export const eventsPageSize = 100;
/** Pages of events the kit reads after its start at most: beyond, it says it could not read them all. */
const eventPagesMax = 100;
/** Events stepped through one by one to prove paging. */
const steppedEventsMax = 10;
/** Probes that find the last event's sequence: two per bit of a sequence (at most 2^53). */
const sequenceProbesMax = 120;
/** Days before the business date tried for a value date before it: the core's holidays are its own. */
const daysBeforeTried = 3;
const eventTypes = ['termDeposit.matured', 'loanInstallment.overdue'];

/**
 * The sequence of the last event the core holds, found with pages of one event (an event after a
 * sequence exists or not): galloping, then halving, some 2 × log2(sequence) calls, whatever the
 * number of events. 0 when it holds none.
 */
export async function lastEventSequence(port: Pick<CoreBankingPort, 'eventsAfter'>): Promise<number> {
  let probes = 0;
  const after = async (sequence: number): Promise<number | undefined> => {
    probes += 1;
    if (probes > sequenceProbesMax) throw new Error(`the last event's sequence was not found in ${sequenceProbesMax} reads (eventsAfter answers events after the sequence asked for, in order)`);
    return (await port.eventsAfter(sequence, 1))[0]?.sequence;
  };
  const first = await after(0);
  if (first === undefined) return 0;
  // An event at `low`; none after `high`.
  let low = first;
  let high: number;
  for (let step = 1; ; step = Math.min(step * 2, Number.MAX_SAFE_INTEGER - low)) {
    const next = await after(low + step);
    if (next === undefined) {
      high = low + step;
      break;
    }
    low = next;
  }
  while (high - low > 1) {
    const middle = low + Math.floor((high - low) / 2);
    const next = await after(middle);
    if (next === undefined) high = middle;
    else low = next;
  }
  return (await after(low)) ?? low;
}

/** The events after `after` (one the kit remembered), page by page; `complete` false when there were more than the kit reads. */
async function eventsSince(context: ConformanceContext, after: number): Promise<{ events: CoreEvent[]; complete: boolean }> {
  const events: CoreEvent[] = [];
  let from = after;
  for (let page = 0; page < eventPagesMax; page += 1) {
    const batch = await context.port.eventsAfter(from, eventsPageSize);
    events.push(...batch);
    const last = batch.at(-1);
    if (batch.length < eventsPageSize || !last) return { events, complete: true };
    from = last.sequence;
  }
  return { events, complete: false };
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

/** A value date before the business date is refused as such: on the last business day before it, or, when the core says that one is a holiday of its own, the one before. */
async function valueDateBeforeRefused(context: ConformanceContext, businessDate: string, from: (valueDate: string) => ReturnType<ConformanceContext['deposit']>): Promise<void> {
  const days = context.businessDaysBefore(businessDate, daysBeforeTried);
  let outcome;
  for (const day of days) {
    outcome = await context.port.constituteTermDeposit(randomUUID(), from(day));
    if (outcome.status !== 'Rejected' || outcome.refusal.entry !== E.valueDateNotBusinessDay) {
      rejectedWith(outcome, E.valueDateBeforeBusinessDate, 'TD', `a value date ${day} (a business day), before the business date ${businessDate}`);
      return;
    }
  }
  throw new RuleFailure(
    `a value date before the business date ${businessDate}: the core refused each of ${days.join(', ')} as not a business day${outcome ? ` (${describeOutcome(outcome, 'TD')})` : ''}, not as valueDateBeforeBusinessDate`,
  );
}

export const businessDayRules: ConformanceRule[] = [
  {
    id: 'business-date',
    title: 'the business date is a calendar date, the one the kit started on; a value date before it (a business day) is Rejected valueDateBeforeBusinessDate (TD-422-011)',
    async run(context) {
      const date = await context.port.businessDate();
      check(isCalendarDate(date), `businessDate answered "${date}", not a YYYY-MM-DD calendar date`);
      same(date, context.businessDate, 'the business date (it moved since the kit started)');
      await valueDateBeforeRefused(context, date, (valueDate) => context.deposit({ valueDate }));
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
        const probe = await context.wire.send('POST', paths.businessDateAdvance, JSON.stringify({ to: from }));
        if (probe.status === 404 && (probe.json as { error?: unknown } | undefined)?.error === 'NO_ROUTE') {
          throw new RuleSkipped(`the core does not serve the advance of the business date (POST ${paths.businessDateAdvance} answered 404 NO_ROUTE): it is optional`);
        }
      }
      // A short term ending on a business day followed by a business day: the maturity needs no roll,
      // and the new business date (the day after it) is a value date the kit can book on afterwards.
      let days = Math.max(1, context.fixtures.product.minDays);
      const offNear = (day: number) => !context.isBusinessDay(addDays(context.valueDate, day)) || !context.isBusinessDay(addDays(context.valueDate, day + 1));
      while (offNear(days) && days < context.fixtures.product.maxDays) days += 1;
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
      context.maturedReference = reference;

      const retrieved = await port.retrieveTermDeposit(contract.contractNumber);
      same(retrieved?.status, 'Matured', `contract ${contract.contractNumber}'s status after its maturity`);
      same(retrieved?.expectedInterestMinor, contract.expectedInterestMinor, 'the matured contract\'s interest');
      // The events since the kit started: the advance wrote them (and whatever else moved the core's date meanwhile).
      const { events: written, complete } = await eventsSince(context, context.eventsFrom);
      const matured = written.find((event) => event.type === 'termDeposit.matured' && event.operationReference === reference);
      check(matured, `no termDeposit.matured event for the kit's contract ${contract.contractNumber} (operationReference ${reference}) after sequence ${context.eventsFrom}, the last the core held when the kit started`);
      same(matured.data.contractNumber, contract.contractNumber, 'the matured event\'s data.contractNumber');
      same(matured.data.principal, { amount: formatMinor(contract.principalMinor, contract.currency), currency: contract.currency }, 'the matured event\'s data.principal');
      same(matured.data.interest, { amount: formatMinor(contract.expectedInterestMinor, contract.currency), currency: contract.currency }, 'the matured event\'s data.interest (the retrieve\'s, to the cent)');
      if (complete) {
        const counted = (type: string) => written.filter((event) => event.type === type && report.daysClosed.includes(event.businessDate)).length;
        same(counted('termDeposit.matured'), report.maturedDeposits, 'termDeposit.matured events written by the advance against the report\'s maturedDeposits');
        same(counted('loanInstallment.overdue'), report.overdueInstallments, 'loanInstallment.overdue events written by the advance against the report\'s overdueInstallments');
      } else {
        context.note(`the report's counts against its events: not verified (more than ${eventPagesMax * eventsPageSize} events since the kit started)`);
      }
      if (context.fixtures.origin === 'loaded') check(report.overdueInstallments >= 1, `the kit's installment due on ${context.businessDate} is unpaid past the days closed, yet the report counts ${report.overdueInstallments} overdue`);
      // What the advance repaid to each account, from its events: on a shared core other contracts of the same accounts mature too.
      const repaid = (accountNumber: string) => written.filter((event) => event.type === 'termDeposit.matured').reduce((sum, event) => sum + repaymentTo(event, accountNumber), 0n);
      await watch.expectMoves([
        [source, -principal + repaid(source.accountNumber), `the source account is debited ${money(principal, contract.currency)} and repaid what matured (its events)`],
        [interest, repaid(interest.accountNumber), `the interest account is credited ${money(contract.expectedInterestMinor, contract.currency)} at maturity (and what else its events repaid)`],
      ]);

      same(await port.advanceBusinessDate(to), { from: to, to, daysClosed: [], maturedDeposits: 0, overdueInstallments: 0 }, `advancing to ${to} again`);
      const again = await eventsSince(context, context.eventsFrom);
      if (complete && again.complete) {
        const kitMatured = again.events.filter((event) => event.type === 'termDeposit.matured' && event.operationReference === reference);
        same(kitMatured.length, 1, `termDeposit.matured events of the kit's contract after advancing to ${to} again`);
      }
      try {
        await port.advanceBusinessDate(from);
        throw new RuleFailure(`advancing back to ${from} from ${to} was accepted: the business date never goes backwards (409 BUSINESS_DATE_BACKWARDS)`);
      } catch (error) {
        if (!(error instanceof BusinessDateBackwards)) throw error;
        same([error.current, error.requested], [to, from], 'the refusal\'s dates (businessDate, requested)');
      }
      same(await port.businessDate(), to, 'the business date after a refused advance');
      await valueDateBeforeRefused(context, to, (valueDate) => context.deposit({ valueDate }));
    },
  },
  {
    id: 'events',
    title: `events in order: the events written since the kit started (its end of day's) have a strictly increasing sequence and stable ids (read twice, the same events), and eventsAfter pages without losing or repeating one; read in pages of ${eventsPageSize}`,
    async run(context) {
      const { events, complete } = await eventsSince(context, context.eventsFrom);
      if (events.length < 2) {
        throw new RuleSkipped(`${events.length === 0 ? 'no event' : 'one event'} since sequence ${context.eventsFrom}, the last the core held when the kit started: events come from end of day (run with --advance)`);
      }
      if (!complete) context.note(`more than ${eventPagesMax * eventsPageSize} events since the kit started: the first of them checked`);
      const ids = new Set<string>();
      for (const [index, event] of events.entries()) {
        check(event.sequence > (index > 0 ? (events[index - 1]?.sequence ?? 0) : context.eventsFrom), `event ${event.id}'s sequence ${event.sequence} does not follow ${index > 0 ? events[index - 1]?.sequence : context.eventsFrom}`);
        check(!ids.has(event.id), `two events have the id ${event.id}`);
        ids.add(event.id);
        check(eventTypes.includes(event.type), `event ${event.sequence} has the type ${event.type}`);
        check(isCalendarDate(event.businessDate), `event ${event.sequence}'s businessDate "${event.businessDate}" is no calendar date`);
      }
      // Read again: the same events, in the same places (more may have followed since, written by others).
      same((await eventsSince(context, context.eventsFrom)).events.slice(0, events.length), events, 'the events read a second time');
      // Step through the last events one at a time: each page of one is the next event, none lost.
      const stepped = events.slice(-steppedEventsMax - 1);
      for (let index = 1; index < stepped.length; index += 1) {
        const previous = stepped[index - 1] as CoreEvent;
        same(await context.port.eventsAfter(previous.sequence, 1), [stepped[index]], `eventsAfter(${previous.sequence}, 1): the event after it`);
      }
      same(await context.port.eventsAfter(context.eventsFrom, 2), events.slice(0, 2), `eventsAfter(${context.eventsFrom}, 2): the first two events since the kit started`);
      const reference = context.maturedReference;
      if (reference !== undefined) {
        same(events.filter((event) => event.type === 'termDeposit.matured' && event.operationReference === reference).length, 1, `termDeposit.matured events of the deposit the kit matured (operationReference ${reference})`);
      }
    },
  },
];
