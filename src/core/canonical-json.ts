/**
 * JSON Canonicalization Scheme (RFC 8785) for the values JSON.parse produces: object members
 * sorted by UTF-16 code units, no whitespace, numbers and strings as ECMAScript serializes them
 * (which is what RFC 8785 prescribes).
 *
 * Written as one pass that appends to a string: every operation's request hash and every audit
 * record's chain link go through it, and the version built of entries, filters, maps and joins
 * was a few percent of a term deposit's CPU (measured).
 */
export function canonicalJson(value: unknown): string {
  return appendCanonical('', value);
}

function appendCanonical(text: string, value: unknown): string {
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'number' && !Number.isFinite(value)) throw new Error('canonical JSON has no representation for a non-finite number');
    return text + (JSON.stringify(value) ?? 'null');
  }
  if (Array.isArray(value)) {
    text += '[';
    for (let index = 0; index < value.length; index++) {
      if (index > 0) text += ',';
      const item: unknown = value[index];
      text = appendCanonical(text, item === undefined ? null : item);
    }
    return `${text}]`;
  }
  const record = value as Record<string, unknown>;
  // Array.prototype.sort without a comparator orders strings by UTF-16 code units, as RFC 8785 asks.
  const keys = Object.keys(record).sort();
  text += '{';
  let first = true;
  for (const key of keys) {
    const member = record[key];
    if (member === undefined) continue;
    if (!first) text += ',';
    first = false;
    text = appendCanonical(`${text}${JSON.stringify(key)}:`, member);
  }
  return `${text}}`;
}
