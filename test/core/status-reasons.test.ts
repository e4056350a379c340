/**
 * One status→reason catalogue (src/core/status-reasons.ts) for the business API, whose words
 * docs/errors.md, "The error record" fixes, and the operator API, which uses the same ones.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ErrorEntry } from '../../src/core/error-catalogue.js';
import { reasonOf, statusReasons } from '../../src/core/status-reasons.js';
import { errorRecord, reasonByStatus } from '../../src/operations/error-record.js';
import { operatorErrorBody } from '../../src/operator/errors.js';

/** The business API's reasons, written out here (docs/errors.md, "The error record"). */
const contractReasons: Record<number, string> = {
  400: 'VALIDATION_ERROR',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  409: 'CONFLICT',
  422: 'BUSINESS_RULE_VIOLATION',
  500: 'INTERNAL_ERROR',
  502: 'CORE_UNAVAILABLE',
  504: 'CORE_TIMEOUT',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  429: 'TOO_MANY_REQUESTS',
};

test('the business API\'s error record has the contract\'s reason for each of its statuses', () => {
  for (const [status, reason] of Object.entries(contractReasons)) {
    const entry: ErrorEntry = { family: 'both', status: Number(status), number: 1, reason: 'ANY_CAUSE', description: '' };
    assert.equal(errorRecord(entry, 'message', 'POST /v1/term-deposits/initiate', 'TD').reason, reason, `status ${status}`);
    assert.equal(reasonByStatus[Number(status)], reason, `docs/errors.md's table, status ${status}`);
  }
});

test('the operator API answers the business API\'s reason for every status of the catalogue (400 is VALIDATION_ERROR in both)', () => {
  for (const [status, { reason }] of Object.entries(statusReasons)) assert.equal(operatorErrorBody(Number(status), 'm').reason, reason, `status ${status}`);
  assert.deepEqual(operatorErrorBody(400, 'The body must be {"to": "YYYY-MM-DD"}'), { status: 400, reason: 'VALIDATION_ERROR', message: 'The body must be {"to": "YYYY-MM-DD"}' });
  assert.equal(operatorErrorBody(501, 'm').reason, 'NOT_IMPLEMENTED');
  assert.equal(reasonByStatus[501], undefined, 'the business API never answers 501: it is not in its table');
});

test('a status outside the catalogue reads as the client\'s fault below 500, as ours from 500 on', () => {
  assert.equal(reasonOf(405), 'VALIDATION_ERROR');
  assert.equal(reasonOf(414), 'VALIDATION_ERROR');
  assert.equal(reasonOf(505), 'INTERNAL_ERROR');
});
