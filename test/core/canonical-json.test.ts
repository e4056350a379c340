/** RFC 8785 (JSON Canonicalization Scheme): request hashes and audit chain links depend on it byte for byte. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { canonicalJson, canonicalJsonOfFields } from '../../src/core/canonical-json.js';

/** The first implementation, kept as the reference: audit chains hashed with it must verify forever. */
function referenceCanonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((item) => referenceCanonicalJson(item === undefined ? null : item)).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, member]) => member !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([key, member]) => `${JSON.stringify(key)}:${referenceCanonicalJson(member)}`).join(',')}}`;
}

test('RFC 8785 §3.2.2 example: numbers, strings and literals serialized as ECMAScript does, members sorted', () => {
  const input = JSON.parse('{"numbers":[333333333.33333329,1E30,4.50,2e-3,0.000000000000000000000000001],"string":"\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/","literals":[null,true,false]}');
  assert.equal(canonicalJson(input), '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}');
});

test('RFC 8785 §3.2.3: members sorted by UTF-16 code units (a surrogate pair sorts by its first unit)', () => {
  const input = { '\u20ac': 1, '\r': 2, '\ufb33': 3, '1': 4, '\ud83d\ude00': 5, '\u0080': 6, '\u00f6': 7 };
  const keys = (JSON.parse(canonicalJson(input)) as Record<string, number>);
  assert.equal(canonicalJson(input), '{"\\r":2,"1":4,"\u0080":6,"ö":7,"€":1,"😀":5,"דּ":3}');
  assert.equal(Object.keys(keys).length, 7);
});

test('undefined members are left out, undefined array items are null, nested objects are sorted too', () => {
  assert.equal(canonicalJson({ b: undefined, a: [undefined, { d: 1, c: 2 }] }), '{"a":[null,{"c":2,"d":1}]}');
  assert.throws(() => canonicalJson({ amount: Number.POSITIVE_INFINITY }), /non-finite/);
});

test('byte for byte what the first implementation made, for any JSON value', () => {
  fc.assert(
    fc.property(fc.jsonValue(), (value) => {
      assert.equal(canonicalJson(value), referenceCanonicalJson(value));
    }),
    { numRuns: 2_000 },
  );
});

test('strings that need escaping (quotes, backslashes, controls, lone surrogates) are written as JSON.stringify writes them; others only quoted', () => {
  for (const value of ['plain', '', 'a"b', 'a\\b', '\u0000\u001f', '\ud800', 'x\udfffy', '\ud83d\ude00', '\u2028\u2029', '\u007f']) {
    assert.equal(canonicalJson(value), JSON.stringify(value));
    assert.equal(canonicalJson({ [value]: value }), `{${JSON.stringify(value)}:${JSON.stringify(value)}}`);
  }
  assert.equal(canonicalJson(-0), '0');
  assert.equal(canonicalJson(1e21), '1e+21');
  assert.equal(canonicalJson([5e-7, 0.1, -1.5]), '[5e-7,0.1,-1.5]');
});

test('byte for byte what the first implementation made, for any JSON value with any strings (full Unicode, lone surrogates)', () => {
  fc.assert(
    fc.property(fc.jsonValue({ stringUnit: 'binary' }), (value) => {
      assert.equal(canonicalJson(value), referenceCanonicalJson(value));
    }),
    { numRuns: 2_000 },
  );
});

test('canonicalJsonOfFields writes what canonicalJson writes for an object of those fields', () => {
  fc.assert(
    fc.property(fc.record({ a: fc.option(fc.jsonValue(), { nil: undefined }), b: fc.string({ unit: 'binary' }), c: fc.jsonValue() }), (value) => {
      assert.equal(canonicalJsonOfFields(value, ['a', 'b', 'c']), canonicalJson(value));
    }),
  );
});
