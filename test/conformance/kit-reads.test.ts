/**
 * What the kit learns of a core it knows nothing about (docs/conformance.md, "The weekend" and
 * "A long-lived test core"), against fake cores: the weekend from the core's refusals of deposits
 * that cannot execute (a weekday refused three weeks running is a weekend day, one refused once a
 * holiday), or why it cannot learn it; the `--weekend` words; the last event of a core holding any
 * number of them, and a row of an ordered list of any length, each in a few reads of one row.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { lastEventSequence } from '../../src/conformance/business-day-rules.js';
import { describeWeekend, learnWeekend, parseWeekend } from '../../src/conformance/core-weekend.js';
import { findInOrder } from '../../src/conformance/records-rules.js';
import { weekdayOf, type Weekday } from '../../src/core/business-calendar.js';
import { addDays } from '../../src/core/calendar-date.js';
import { BusinessRefusal, errorCatalogue as E, type ErrorEntry } from '../../src/core/error-catalogue.js';
import type { CoreBankingPort, CoreEvent, CoreOutcome, Page, PageRequest, TermDeposit } from '../../src/core/port.js';
import type { TermDepositInitiation } from '../../src/core/term-deposits/initiation.js';

/** Monday. */
const businessDate = '2026-03-02';

const rejected = (entry: ErrorEntry): CoreOutcome<TermDeposit> => ({ status: 'Rejected', refusal: new BusinessRefusal(entry, entry.reason) });

/** A core that answers a deposit of the account that cannot pay by `answer(valueDate)`, counting the deposits. */
function depositCore(answer: (valueDate: string) => CoreOutcome<TermDeposit>): { port: CoreBankingPort; asked: string[] } {
  const asked: string[] = [];
  const port = {
    constituteTermDeposit: (_reference: string, command: TermDepositInitiation) => {
      asked.push(command.valueDate);
      return Promise.resolve(answer(command.valueDate));
    },
  } as unknown as CoreBankingPort;
  return { port, asked };
}

/** A core with a weekend and holidays that checks the value date before the funds, as the reference core does. */
function calendarCore(weekend: readonly Weekday[], holidays: readonly string[]) {
  return depositCore((valueDate) => {
    if (valueDate < businessDate) return rejected(E.valueDateBeforeBusinessDate);
    if (weekend.includes(weekdayOf(valueDate)) || holidays.includes(valueDate)) return rejected(E.valueDateNotBusinessDay);
    return rejected(E.insufficientFundsSource);
  });
}

const probe = (valueDate: string) => ({ valueDate }) as TermDepositInitiation;

test('the weekend learned from refusals: a core whose weekend is Friday and Saturday, with a holiday on a Wednesday, is learned so; the holiday is a holiday, not a weekend day; nothing executes', async () => {
  const { port, asked } = calendarCore(['FRIDAY', 'SATURDAY'], ['2026-03-11']);
  const learned = await learnWeekend(port, businessDate, probe);
  assert.deepEqual(learned, { learned: true, days: ['FRIDAY', 'SATURDAY'], holidays: ['2026-03-11'] });
  // One day before the business date (does the core check the date first?), then three weeks from it.
  assert.equal(asked.length, 1 + 21);
  assert.equal(asked[0], addDays(businessDate, -1));
  assert.equal(describeWeekend({ days: ['SATURDAY', 'FRIDAY'], holidays: [], source: 'learned from the core\'s refusals' }), 'weekend Friday, Saturday (learned from the core\'s refusals)');
  assert.equal(describeWeekend({ days: [], holidays: [], source: '--weekend' }), 'weekend none (--weekend)');
});

test('the weekend learned from refusals: a core without a weekend is learned so (no day), and the usual weekend from the reference core\'s Saturday and Sunday', async () => {
  assert.deepEqual(await learnWeekend(calendarCore([], []).port, businessDate, probe), { learned: true, days: [], holidays: [] });
  assert.deepEqual(await learnWeekend(calendarCore(['SATURDAY', 'SUNDAY'], []).port, businessDate, probe), { learned: true, days: ['SUNDAY', 'SATURDAY'], holidays: [] });
});

test('the weekend cannot be learned from a core that checks the funds before the value date: said why, after one deposit, and nothing learned', async () => {
  const { port, asked } = depositCore(() => rejected(E.insufficientFundsSource));
  const learned = await learnWeekend(port, businessDate, probe);
  assert.equal(learned.learned, false);
  assert.match('why' in learned ? learned.why : '', /checks the funds before the value date/);
  assert.equal(asked.length, 1);
});

test('the weekend cannot be learned when a deposit that cannot pay answers something else (executed, or another refusal): the answer and its value date are told, so the kit can name the fixture to check', async () => {
  const executedCore = depositCore((valueDate) => (valueDate < businessDate ? rejected(E.valueDateBeforeBusinessDate) : ({ status: 'Executed', result: {} as TermDeposit })));
  const learned = await learnWeekend(executedCore.port, businessDate, probe);
  assert.ok('unexpected' in learned, JSON.stringify(learned));
  assert.deepEqual([learned.unexpected.status, learned.valueDate], ['Executed', businessDate]);

  const refusing = await learnWeekend(depositCore(() => rejected(E.customerNotFound)).port, businessDate, probe);
  assert.ok('unexpected' in refusing);
  assert.equal(refusing.unexpected.status === 'Rejected' && refusing.unexpected.refusal.entry, E.customerNotFound);
});

test('the weekend cannot be learned from a core that refuses every value date: said so', async () => {
  const learned = await learnWeekend(calendarCore(['SUNDAY', 'MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY'], []).port, businessDate, probe);
  assert.equal(learned.learned, false);
  assert.match('why' in learned ? learned.why : '', /refused every value date of 3 weeks/);
});

test('--weekend words: weekday names or their first three letters, any case, commas or spaces; none; a word that is no weekday, or all seven days, is refused', () => {
  assert.deepEqual(parseWeekend('fri,sat'), ['FRIDAY', 'SATURDAY']);
  assert.deepEqual(parseWeekend('SATURDAY SUNDAY'), ['SATURDAY', 'SUNDAY']);
  assert.deepEqual(parseWeekend('Fri, fri,FRIDAY'), ['FRIDAY']);
  assert.deepEqual(parseWeekend('none'), []);
  assert.equal(parseWeekend('sat,funday'), undefined);
  assert.equal(parseWeekend('sa'), undefined);
  assert.equal(parseWeekend(''), undefined);
  assert.equal(parseWeekend('mon,tue,wed,thu,fri,sat,sun'), undefined, 'a week without a business day');
});

/** A core's event log: `count` events from sequence `first`, with gaps of `gap`; counts the reads. */
function eventLog(count: number, first = 1, gap = 1) {
  const sequences = Array.from({ length: count }, (_, index) => first + index * gap);
  let reads = 0;
  const port = {
    eventsAfter: (after: number, limit: number): Promise<CoreEvent[]> => {
      reads += 1;
      const from = sequences.findIndex((sequence) => sequence > after);
      const page = from < 0 ? [] : sequences.slice(from, from + limit);
      return Promise.resolve(page.map((sequence) => ({ sequence, id: `e${sequence}`, type: 'termDeposit.matured', businessDate, operationReference: null, data: {} })));
    },
  };
  return { port, reads: () => reads, last: sequences.at(-1) ?? 0 };
}

test('the last event of a long-lived core: found in some 2 × log2(sequence) reads of one event, whatever the count and the gaps; 0 when it holds none', async () => {
  for (const [count, first, gap] of [
    [0, 1, 1],
    [1, 1, 1],
    [2, 7, 1],
    [1000, 1, 1],
    [1_000_000, 1, 1],
    [5_000, 900_000_000, 37],
  ] as const) {
    const log = eventLog(count, first, gap);
    assert.equal(await lastEventSequence(log.port), log.last, `${count} events from ${first}, every ${gap}`);
    const bound = 4 + 2 * Math.ceil(Math.log2(Math.max(2, log.last)));
    assert.ok(log.reads() <= bound, `${count} events: ${log.reads()} reads, at most ${bound}`);
  }
});

test('the last event: a core whose eventsAfter does not answer the events after the sequence asked for stops the search with the reason, never a loop', async () => {
  // It answers its first event whatever it is asked: no last one can be found.
  const port = { eventsAfter: () => Promise.resolve([{ sequence: 1, id: 'e1', type: 'termDeposit.matured', businessDate, operationReference: null, data: {} }] as CoreEvent[]) };
  await assert.rejects(lastEventSequence(port), /the last event's sequence was not found in 120 reads/);
});

/** An ordered list of `count` keys (k0000000, k0000002, ...: even numbers only), paged; counts the pages read. */
function orderedList(count: number) {
  let reads = 0;
  const key = (index: number) => `k${String(index * 2).padStart(7, '0')}`;
  const list = ({ limit, offset }: PageRequest): Promise<Page<{ key: string }>> => {
    reads += 1;
    const items = Array.from({ length: Math.max(0, Math.min(limit, count - offset)) }, (_, index) => ({ key: key(offset + index) }));
    return Promise.resolve({ items, more: offset + limit < count });
  };
  return { list, key, reads: () => reads };
}

test('a row of a long ordered list (a bank\'s test core may hold millions of customers): found by the list\'s order in some 2 × log2(position) reads of one row; a key the list does not hold is not found', async () => {
  const rows = 3_000_000;
  const { list, key, reads } = orderedList(rows);
  for (const position of [0, 1, 499, 2_999_999]) {
    const before = reads();
    assert.deepEqual(await findInOrder(list, (item) => item.key, key(position)), { key: key(position) }, `the row at ${position}`);
    const bound = 3 + 2 * Math.ceil(Math.log2(position + 2));
    assert.ok(reads() - before <= bound, `the row at ${position}: ${reads() - before} reads, at most ${bound}`);
  }
  // Between two keys (an odd number), before the first, after the last.
  for (const missing of ['k0001001', 'a', 'z']) assert.equal(await findInOrder(list, (item) => item.key, missing), undefined, missing);
  assert.equal(await findInOrder(orderedList(0).list, (item) => item.key, 'k0000000'), undefined, 'an empty list');
});
