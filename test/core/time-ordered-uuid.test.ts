import assert from 'node:assert/strict';
import { test } from 'node:test';
import { timeOrderedUuid } from '../../src/core/time-ordered-uuid.js';

const version7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

test('time-ordered UUID: RFC 9562 version 7 with the variant bits, the Unix time in ms in its first 48 bits', () => {
  const id = timeOrderedUuid(0x0192_3456_789a);
  assert.match(id, version7);
  assert.equal(id.slice(0, 13), '01923456-789a');
  assert.equal(Number.parseInt(id.slice(0, 8) + id.slice(9, 13), 16), 0x0192_3456_789a);
});

test('time-ordered UUID: ids of a later millisecond sort after (index locality), and ids never repeat', () => {
  const now = Date.now();
  const earlier = Array.from({ length: 100 }, () => timeOrderedUuid(now));
  const later = Array.from({ length: 100 }, () => timeOrderedUuid(now + 1));
  for (const a of earlier) for (const b of later) assert.ok(a < b, `${a} < ${b}`);
  assert.equal(new Set([...earlier, ...later]).size, 200);
  for (const id of [...earlier, ...later]) assert.match(id, version7);
});

test('time-ordered UUID: ids of one millisecond increase in the order they were made, past the 12-bit counter too (audit records of one instant chain in order)', () => {
  const now = Date.parse('2026-03-02T10:00:00.000Z');
  const ids = Array.from({ length: 5_000 }, () => timeOrderedUuid(now));
  for (let index = 1; index < ids.length; index += 1) assert.ok((ids[index - 1] ?? '') < (ids[index] ?? ''), `${ids[index - 1]} < ${ids[index]}`);
  for (const id of ids) assert.match(id, version7);
  // A new millisecond starts its counter low again: its first id still sorts after the last millisecond's.
  const next = timeOrderedUuid(now + 5);
  assert.ok((ids.at(-1) ?? '') < next);
});
