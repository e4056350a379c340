import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { isoTimestamp } from '../../src/core/iso-timestamp.js';

test('isoTimestamp is Date.prototype.toISOString for any instant, asked in any order (the remembered millisecond never leaks into another)', () => {
  fc.assert(
    fc.property(fc.array(fc.integer({ min: -8.64e15, max: 8.64e15 }), { minLength: 1, maxLength: 20 }), (instants) => {
      for (const epochMs of [...instants, ...instants]) assert.equal(isoTimestamp(epochMs), new Date(epochMs).toISOString());
    }),
  );
  assert.equal(isoTimestamp(0), '1970-01-01T00:00:00.000Z');
  assert.equal(isoTimestamp(1), '1970-01-01T00:00:00.001Z');
  assert.equal(isoTimestamp(1), '1970-01-01T00:00:00.001Z');
});
