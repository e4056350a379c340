/**
 * The audit chain's hash (docs/api.md, "Audit"): records chained by every earlier version must verify
 * forever, so the hash is compared with the first implementation (the record's fields copied
 * into an object, canonicalJson of it, createHash) for any record.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import fc from 'fast-check';
import { auditHash, auditHashedFields, genesisHash } from '../../src/audit/chain.js';
import { canonicalJson, canonicalJsonOfFields } from '../../src/core/canonical-json.js';
import type { AuditEntry, ChainedAuditEntry } from '../../src/store/audit.js';

function referenceAuditHash(prevHash: string, entry: AuditEntry): string {
  const content: AuditEntry = {
    id: entry.id,
    recordedAt: entry.recordedAt,
    clientId: entry.clientId,
    backboneUser: entry.backboneUser,
    workstation: entry.workstation,
    operation: entry.operation,
    correlationId: entry.correlationId,
    reference: entry.reference,
    httpStatus: entry.httpStatus,
    outcome: entry.outcome,
    durationMs: entry.durationMs,
    details: entry.details,
  };
  return createHash('sha256').update(`${prevHash}\n${canonicalJson(content)}`).digest('hex');
}

const text = fc.string({ unit: 'binary', maxLength: 40 });
const optionalText = fc.option(text, { nil: null });
const entry: fc.Arbitrary<AuditEntry> = fc.record({
  id: fc.uuid(),
  recordedAt: fc.date({ noInvalidDate: true }).map((date) => date.toISOString()),
  clientId: text,
  backboneUser: optionalText,
  workstation: optionalText,
  operation: text,
  correlationId: optionalText,
  reference: optionalText,
  httpStatus: fc.integer({ min: 100, max: 599 }),
  outcome: text,
  durationMs: fc.integer({ min: 0, max: 10_000_000 }),
  details: fc.dictionary(text, fc.jsonValue()),
});

test('the audit hash is the first implementation\'s, byte for byte, for any record (strings with quotes, controls and lone surrogates; nested details)', () => {
  fc.assert(
    fc.property(entry, fc.constantFrom(genesisHash, 'ab'.repeat(32)), (record, previous) => {
      assert.equal(auditHash(previous, record), referenceAuditHash(previous, record));
    }),
    { numRuns: 2_000 },
  );
});

test('the audit hash leaves out absent fields as canonicalJson does, and ignores the chain\'s own columns', () => {
  const record = { id: 'r1', recordedAt: '2026-11-28T00:00:00.000Z', clientId: 'c', operation: 'op', httpStatus: 400, outcome: 'Refused', durationMs: 1, details: { code: 'x' } } as unknown as AuditEntry;
  assert.equal(auditHash(genesisHash, record), referenceAuditHash(genesisHash, record));
  const chained: ChainedAuditEntry = { ...record, backboneUser: null, workstation: null, correlationId: null, reference: null, chainSeq: 7, prevHash: genesisHash, hash: 'f'.repeat(64) };
  assert.equal(auditHash(genesisHash, chained), referenceAuditHash(genesisHash, chained));
});

test('auditHashedFields names every field of a record, in RFC 8785 order', () => {
  const record: Required<AuditEntry> = { id: 'i', recordedAt: 'r', clientId: 'c', backboneUser: 'b', workstation: 'w', operation: 'o', correlationId: 'k', reference: 'f', httpStatus: 1, outcome: 'u', durationMs: 2, details: {} };
  assert.deepEqual([...auditHashedFields], Object.keys(record).sort());
  assert.equal(canonicalJsonOfFields(record, auditHashedFields), canonicalJson(record));
});
