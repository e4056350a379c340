/**
 * The core's weekend, which the protocol has no route to read (docs/conformance.md, "The weekend"):
 * given (`--weekend fri,sat`, a fixture file's `weekend`), or learned from the core's own
 * refusals. The kit learns it with deposits that cannot execute — from an account that cannot
 * cover them — on each day of three weeks from the business date: a day the core refuses as
 * `valueDateNotBusinessDay` is not a business day, and a weekday refused in every week is a weekend
 * day (one refused once is a holiday). This tells only when the core checks the value date before
 * the funds; a probe dated before the business date says whether it does (a date refusal, not
 * `insufficientFundsSource`), and when it does not, the kit cannot learn and says so.
 */
import { randomUUID } from 'node:crypto';
import { weekdayOf, weekdays, type Weekday } from '../core/business-calendar.js';
import { addDays } from '../core/calendar-date.js';
import { errorCatalogue as E } from '../core/error-catalogue.js';
import type { CoreBankingPort, CoreOutcome, TermDeposit } from '../core/port.js';
import type { TermDepositInitiation } from '../core/term-deposits/initiation.js';

/** Weeks of value dates the kit probes: a holiday on one weekday three weeks running is not a weekend. */
const learnedWeeksCount = 3;

/** The weekend the rules assume, and how the kit came to it (said on the kit's first line). */
export interface CoreWeekend {
  days: Weekday[];
  /** Dates of the probed weeks the core refused as value dates that are not weekend days: its holidays there. */
  holidays: string[];
  /** `--weekend`, the fixture file, learned from the core's refusals, or assumed and why. */
  source: string;
}

/** Saturday and Sunday: assumed when the weekend is neither given nor learned. */
export const usualWeekend: readonly Weekday[] = ['SATURDAY', 'SUNDAY'];

/** `fri,sat`, `FRIDAY SATURDAY`, `none`: weekday names or their first three letters, any case; undefined when a word is no weekday. */
export function parseWeekend(text: string): Weekday[] | undefined {
  const words = text.split(/[\s,]+/).filter((word) => word !== '');
  if (words.length === 1 && words[0]?.toLowerCase() === 'none') return [];
  const days: Weekday[] = [];
  for (const word of words) {
    const upper = word.toUpperCase();
    const day = weekdays.find((name) => name === upper || (upper.length === 3 && name.startsWith(upper)));
    if (!day) return undefined;
    if (!days.includes(day)) days.push(day);
  }
  return days.length > 0 && days.length < weekdays.length ? days : undefined;
}

export function describeWeekend(weekend: CoreWeekend): string {
  // Monday first, as a working week reads.
  const ordered = [...weekend.days].sort((a, b) => ((weekdays.indexOf(a) + 6) % 7) - ((weekdays.indexOf(b) + 6) % 7));
  const days = ordered.length === 0 ? 'none' : ordered.map((day) => `${day.charAt(0)}${day.slice(1).toLowerCase()}`).join(', ');
  return `weekend ${days} (${weekend.source})`;
}

/** What one probe deposit says: a date refusal, insufficient funds, or something the probe did not ask for. */
type ProbeAnswer = 'notBusinessDay' | 'beforeBusinessDate' | 'insufficientFunds' | 'unexpected';

function probeAnswer(outcome: CoreOutcome<TermDeposit>): ProbeAnswer {
  if (outcome.status !== 'Rejected') return 'unexpected';
  if (outcome.refusal.entry === E.valueDateNotBusinessDay) return 'notBusinessDay';
  if (outcome.refusal.entry === E.valueDateBeforeBusinessDate) return 'beforeBusinessDate';
  if (outcome.refusal.entry === E.insufficientFundsSource) return 'insufficientFunds';
  return 'unexpected';
}

export type LearnedWeekend =
  | { learned: true; days: Weekday[]; holidays: string[] }
  | { learned: false; why: string }
  /** A probe answered what it should not (executed, or another refusal): the fixtures or the core are wrong. */
  | { learned: false; unexpected: CoreOutcome<TermDeposit>; valueDate: string };

/**
 * Learns the weekend from refusals: `probe(valueDate)` is a deposit the core cannot execute for
 * want of funds (and for nothing else, on a business day). Nothing moves.
 */
export async function learnWeekend(port: CoreBankingPort, businessDate: string, probe: (valueDate: string) => TermDepositInitiation): Promise<LearnedWeekend> {
  const ask = async (valueDate: string) => {
    const outcome = await port.constituteTermDeposit(randomUUID(), probe(valueDate));
    return { outcome, answer: probeAnswer(outcome) };
  };
  const before = addDays(businessDate, -1);
  const order = await ask(before);
  if (order.answer === 'unexpected') return { learned: false, unexpected: order.outcome, valueDate: before };
  if (order.answer === 'insufficientFunds') {
    return { learned: false, why: 'the core checks the funds before the value date (a value date before its business date answered insufficientFundsSource), so its refusals do not tell its weekend' };
  }
  const refused: string[] = [];
  for (let day = 0; day < learnedWeeksCount * weekdays.length; day += 1) {
    const valueDate = addDays(businessDate, day);
    const { outcome, answer } = await ask(valueDate);
    if (answer === 'notBusinessDay') refused.push(valueDate);
    else if (answer !== 'insufficientFunds') return { learned: false, unexpected: outcome, valueDate };
  }
  const days = weekdays.filter((weekday) => refused.filter((date) => weekdayOf(date) === weekday).length === learnedWeeksCount);
  if (days.length === weekdays.length) return { learned: false, why: `the core refused every value date of ${learnedWeeksCount} weeks from ${businessDate}` };
  return { learned: true, days, holidays: refused.filter((date) => !days.includes(weekdayOf(date))) };
}
