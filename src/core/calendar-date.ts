/** Strict `YYYY-MM-DD` calendar dates, handled as UTC days so that no time zone shifts them. */

const isoDatePattern = /^(\d{4})-(\d{2})-(\d{2})$/;

/** True for a well-formed and real date: 2026-02-30 is refused. */
export function isCalendarDate(value: string): boolean {
  const match = isoDatePattern.exec(value);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}
