/** Strict `YYYY-MM-DD` calendar dates, handled as UTC days so that no time zone shifts them. */

const isoDatePattern = /^(\d{4})-(\d{2})-(\d{2})$/;

/** True for a well-formed and real date: 2026-02-30 is refused. */
export function isCalendarDate(value: string): boolean {
  const match = isoDatePattern.exec(value);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = utcDate(year, month, day);
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

const msPerDay = 86_400_000;

/** Days since 1970-01-01 of a valid `YYYY-MM-DD`. */
export function toEpochDay(date: string): number {
  return utcDate(Number(date.slice(0, 4)), Number(date.slice(5, 7)), Number(date.slice(8, 10))).getTime() / msPerDay;
}

export function fromEpochDay(day: number): string {
  const date = new Date(day * msPerDay);
  const year = String(date.getUTCFullYear()).padStart(4, '0');
  return `${year}-${String(date.getUTCMonth() + 1).padStart(2, '0')}-${String(date.getUTCDate()).padStart(2, '0')}`;
}

/** Date.UTC maps years 0-99 to 1900-1999; setUTCFullYear does not. */
function utcDate(year: number, month: number, day: number): Date {
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  return date;
}

export function addDays(date: string, days: number): string {
  return fromEpochDay(toEpochDay(date) + days);
}

/** Whole days from `from` to `to` (negative when `to` is earlier). */
export function daysBetween(from: string, to: string): number {
  return toEpochDay(to) - toEpochDay(from);
}

/** The UTC date of `now` (a clock's time: src/core/clock.ts). */
export function todayUtc(now: Date): string {
  return now.toISOString().slice(0, 10);
}
