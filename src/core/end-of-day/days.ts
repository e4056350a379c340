/**
 * Which business days an advance of the business date closes (docs/business-days.md, "Which days
 * close").
 *
 * The business date D is the open day: operations book on it. Advancing from C to D passes the
 * days C, C+1, ..., D-1, and each of them that is a business day is closed once, in order: its end
 * of day runs. Weekend days and holidays have no end of day; what falls due on one is taken by the
 * next business day's end of day ("on or before" the closed day).
 */
import type { BusinessCalendar } from '../business-calendar.js';
import { addDays, toEpochDay } from '../calendar-date.js';

/** The business days b with from <= b < to, in order; none when to <= from. */
export function businessDaysToClose(calendar: BusinessCalendar, from: string, to: string): string[] {
  const days: string[] = [];
  for (let day = from; toEpochDay(day) < toEpochDay(to); day = addDays(day, 1)) {
    if (calendar.isBusinessDay(day)) days.push(day);
  }
  return days;
}

/** The business date once `day` is closed: the calendar day after it. */
export function dateAfterClosing(day: string): string {
  return addDays(day, 1);
}

/** Whether moving from `current` to `requested` goes backwards (refused: BusinessDateBackwards). */
export function goesBackwards(current: string, requested: string): boolean {
  return toEpochDay(requested) < toEpochDay(current);
}

/** One advance spans at most this many calendar days (ten years): a longer one is refused, not run for hours. */
export const advanceDaysMax = 3660;

export function spansTooFar(from: string, to: string): boolean {
  return toEpochDay(to) - toEpochDay(from) > advanceDaysMax;
}
