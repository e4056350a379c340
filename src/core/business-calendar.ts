/**
 * The core's business-day calendar: weekend days, holidays and a business date. The business date
 * moves (docs/business-days.md, "The business date") and lives in the core's store: the reference
 * core reads it inside each operation's transaction and decides with `withBusinessDate(stored)`,
 * never with a date kept in memory since the start.
 */
import { addDays, toEpochDay } from './calendar-date.js';

export const weekdays = ['SUNDAY', 'MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY'] as const;
export type Weekday = (typeof weekdays)[number];

/** A calendar date's weekday. */
export function weekdayOf(date: string): Weekday {
  return weekdays[(((toEpochDay(date) + 4) % 7) + 7) % 7] as Weekday; // 1970-01-01 was a Thursday.
}

/** Rolling forward never needs more than this many days; more means a calendar without business days. */
const rollDaysMax = 366;

export class BusinessCalendar {
  readonly #weekend: ReadonlySet<Weekday>;
  readonly #holidays: ReadonlySet<string>;

  constructor(
    weekend: readonly Weekday[],
    holidays: readonly string[],
    /** The core's business date: value dates before it are refused. */
    readonly businessDate: string,
  ) {
    if (weekend.length >= 7) throw new Error('a calendar needs at least one weekday that is not weekend');
    this.#weekend = new Set(weekend);
    this.#holidays = new Set(holidays);
  }

  /** The same weekend and holidays on another business date. */
  withBusinessDate(businessDate: string): BusinessCalendar {
    return new BusinessCalendar([...this.#weekend], [...this.#holidays], businessDate);
  }

  isBusinessDay(date: string): boolean {
    return !this.#weekend.has(weekdayOf(date)) && !this.#holidays.has(date);
  }

  /** The date itself when it is a business day, otherwise the next one. */
  rollForward(date: string): string {
    let candidate = date;
    for (let step = 0; step < rollDaysMax; step += 1) {
      if (this.isBusinessDay(candidate)) return candidate;
      candidate = addDays(candidate, 1);
    }
    throw new Error(`no business day within ${rollDaysMax} days of ${date}`);
  }
}
