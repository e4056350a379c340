/** The error catalogue, its docs and its codes agree (as fastify's catalogue test does; docs/errors.md). */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { allErrorCodes, errorCatalogue } from '../../src/core/error-catalogue.js';
import { renderErrorsDoc } from '../../scripts/errors-doc.js';
import { repoRoot } from '../helpers/repo-root.js';
import { join } from 'node:path';

test('docs/errors.md is generated from the catalogue and up to date', () => {
  const onDisk = readFileSync(join(repoRoot, 'docs/errors.md'), 'utf8');
  assert.equal(onDisk, renderErrorsDoc(), 'run: node --import tsx scripts/errors-doc.ts > docs/errors.md');
});

test('every code is unique and well-formed (TD|ML-status-nnn)', () => {
  const codes = allErrorCodes().map((row) => row.code);
  assert.equal(new Set(codes).size, codes.length);
  for (const code of codes) assert.match(code, /^(TD|ML)-\d{3}-\d{3}$/);
});

test('TD-422-002 is INSUFFICIENT_FUNDS_SOURCE_ACCOUNT (docs/errors.md, "Domain codes")', () => {
  const row = allErrorCodes().find((r) => r.code === 'TD-422-002');
  assert.equal(row?.entry.reason, 'INSUFFICIENT_FUNDS_SOURCE_ACCOUNT');
  assert.equal(errorCatalogue.insufficientFundsSource.reason, 'INSUFFICIENT_FUNDS_SOURCE_ACCOUNT');
});

test('every documented code exists in the catalogue', () => {
  const onDisk = readFileSync(join(repoRoot, 'docs/errors.md'), 'utf8');
  const documented = [...onDisk.matchAll(/`((?:TD|ML)-\d{3}-\d{3})`/g)].map((match) => match[1]);
  const known = new Set(allErrorCodes().map((row) => row.code));
  for (const code of documented) assert.ok(known.has(code ?? ''), `${code} is documented but not in the catalogue`);
});
