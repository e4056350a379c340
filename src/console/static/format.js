// Display formatting. Amounts arrive as exact decimal strings; they are grouped as text, never
// turned into floating-point numbers.

/** "240000.00" → "240,000.00". */
export function groupDigits(amount) {
  const negative = amount.startsWith('-');
  const [whole, fraction] = (negative ? amount.slice(1) : amount).split('.');
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${negative ? '-' : ''}${grouped}${fraction === undefined ? '' : `.${fraction}`}`;
}

/** { amount, currency } → "240,000.00 USD". */
export function formatMoney(money) {
  if (!money) return '–';
  return `${groupDigits(money.amount)} ${money.currency}`;
}

/** An ISO instant as local date and time, to the second. */
export function formatInstant(iso) {
  if (!iso) return '–';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return date.toLocaleString(undefined, { year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' });
}

/** A short relative duration: "in 4 min", "12 s ago". */
export function relativeTo(epochMs, nowMs = Date.now()) {
  const seconds = Math.round((epochMs - nowMs) / 1000);
  const size = Math.abs(seconds);
  const text = size < 90 ? `${size} s` : size < 5400 ? `${Math.round(size / 60)} min` : size < 172800 ? `${Math.round(size / 3600)} h` : `${Math.round(size / 86400)} days`;
  return seconds >= 0 ? `in ${text}` : `${text} ago`;
}

/**
 * A count with its noun, singular for exactly one: "1 installment", "3 installments", "0 days".
 * `pluralNoun` is for the nouns that do not just take an "s" ("1 entry", "2 entries").
 */
export function plural(count, noun, pluralNoun = `${noun}s`) {
  return `${count} ${Number(count) === 1 ? noun : pluralNoun}`;
}

/** A CSS class for a status word (Executed, Rejected, Matured, Overdue...). */
export function statusClass(status) {
  return `status status-${String(status ?? 'unknown').toLowerCase()}`;
}
