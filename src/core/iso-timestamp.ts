/**
 * An instant as ISO 8601 text (`Date.prototype.toISOString`), remembered for the last millisecond
 * asked: every request's log line and every audit record writes one, and under load many fall in
 * the same millisecond. Making a Date and its text cost ~1 µs each (measured), a few percent of a
 * refused request.
 */
let lastEpochMs = Number.NaN;
let lastText = '';

export function isoTimestamp(epochMs: number): string {
  if (epochMs !== lastEpochMs) {
    lastText = new Date(epochMs).toISOString();
    lastEpochMs = epochMs;
  }
  return lastText;
}
