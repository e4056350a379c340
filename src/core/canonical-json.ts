/**
 * JSON Canonicalization Scheme (RFC 8785) for the values JSON.parse produces: object members
 * sorted by UTF-16 code units, no whitespace, numbers and strings as ECMAScript serializes them
 * (which is what RFC 8785 prescribes).
 *
 * Written as one pass that appends to a string: every operation's request hash and every audit
 * record's chain link go through it, and the version built of entries, filters, maps and joins
 * was a few percent of a term deposit's CPU (measured). Strings and numbers are written without
 * JSON.stringify when it would only add the quotes: a call per key and per value was most of an
 * audit record's canonical form (5.6 µs of 12 members, measured).
 */
export function canonicalJson(value: unknown): string {
  return appendCanonical('', value);
}

/**
 * Canonical JSON of an object whose members are named by `sortedNames`, already in RFC 8785 order
 * (a record type's fixed fields): the same text as canonicalJson of the object, without sorting
 * its keys on every call. A member missing from `sortedNames` would be left out: the caller
 * passes every field of its type (test/core/canonical-json.test.ts compares them).
 */
export function canonicalJsonOfFields<T extends object>(value: T, sortedNames: ReadonlyArray<keyof T & string>): string {
  return appendMembers('', value as Record<string, unknown>, sortedNames);
}

/** Characters JSON.stringify writes otherwise than as themselves: the quote, the backslash, controls, and surrogates (a lone one is escaped). */
const escaped = /["\\\u0000-\u001f\ud800-\udfff]/;

function quoted(text: string): string {
  return escaped.test(text) ? JSON.stringify(text) : `"${text}"`;
}

function appendCanonical(text: string, value: unknown): string {
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'string') return text + quoted(value);
    if (typeof value === 'number') {
      if (!Number.isFinite(value)) throw new Error('canonical JSON has no representation for a non-finite number');
      // ECMAScript's Number::toString, which JSON.stringify uses for a finite number (-0 is "0" in both).
      return text + String(value);
    }
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
  return appendMembers(text, record, Object.keys(record).sort());
}

/** The object's members named by `sortedNames`, in that order, undefined ones left out. */
function appendMembers(text: string, record: Record<string, unknown>, sortedNames: readonly string[]): string {
  text += '{';
  let first = true;
  for (const name of sortedNames) {
    const member = record[name];
    if (member === undefined) continue;
    if (!first) text += ',';
    first = false;
    text = appendCanonical(`${text}${quoted(name)}:`, member);
  }
  return `${text}}`;
}
