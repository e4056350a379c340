/**
 * The API's error record, checked the one way every test checks it (docs/errors.md): at
 * top level for the term deposit family, wrapped in `{"error": ...}` for merchandising loans;
 * exactly its fields; the status's reason phrase; a message; the request's path; and, when a code
 * is expected, one `errordetail` naming it with the reason docs/errors.md gives that code.
 */
import assert from 'node:assert/strict';
import { documentedCodes, reasonByStatus, type HttpResult } from './http.js';

export interface ExpectedErrorRecord {
  status: number;
  /** The record's `path` (e.g. `POST /v1/term-deposits/initiate`). */
  path: string;
  /** The errordetail's code; without it, the record has no errordetail. */
  code?: string;
  /** The errordetail's reason when it is not docs/errors.md's for the code (a code the catalogue does not document). */
  detailReason?: string;
  /** The loan family's `{"error": record}`. */
  wrapped?: boolean;
}

/** Checks the body of an error answer; answers the record (unwrapped). */
export function assertErrorBody(body: unknown, expected: ExpectedErrorRecord): Record<string, any> {
  assert.equal(typeof body, 'object', String(body));
  let record = body as Record<string, any>;
  if (expected.wrapped === true) {
    assert.deepEqual(Object.keys(record), ['error'], 'the record is wrapped in {"error": ...}');
    record = record.error as Record<string, any>;
  }
  const fields = expected.code === undefined ? ['message', 'path', 'reason', 'status'] : ['errordetail', 'message', 'path', 'reason', 'status'];
  assert.deepEqual(Object.keys(record).sort(), fields, JSON.stringify(record));
  assert.equal(record.status, expected.status);
  assert.equal(record.reason, reasonByStatus[expected.status]);
  assert.equal(typeof record.message, 'string');
  assert.ok((record.message as string).length > 0, 'a human-readable message');
  assert.equal(record.path, expected.path);
  if (expected.code !== undefined) {
    assert.ok(Array.isArray(record.errordetail), 'errordetail is an array');
    assert.equal(record.errordetail.length, 1, 'one errordetail entry');
    const detail = record.errordetail[0] as Record<string, unknown>;
    assert.deepEqual(Object.keys(detail).sort(), ['code', 'message', 'reason']);
    assert.equal(detail.code, expected.code);
    const documented = documentedCodes.get(expected.code);
    if (expected.detailReason !== undefined) {
      assert.equal(detail.reason, expected.detailReason);
    } else {
      assert.ok(documented, `${expected.code} is listed in docs/errors.md`);
      assert.equal(documented.status, expected.status, `docs/errors.md gives ${expected.code} the status ${expected.status}`);
      assert.equal(detail.reason, documented.reason, `errordetail reason of ${expected.code} as documented`);
    }
    assert.equal(typeof detail.message, 'string');
    assert.ok((detail.message as string).length > 0);
  }
  return record;
}

/** Checks an error answer: its HTTP status, a JSON body, and the record (assertErrorBody). */
export function assertErrorRecord(response: HttpResult, expected: ExpectedErrorRecord): Record<string, any> {
  assert.equal(response.status, expected.status, JSON.stringify(response.body));
  assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
  return assertErrorBody(response.body, expected);
}

/** An OAuth error answer (RFC 6749 §5.2) of the token and introspection endpoints: never cached. */
export function assertOAuthError(response: { status: number; headers: Headers; body: any }, status: number, error: string): void {
  assert.equal(response.status, status, JSON.stringify(response.body));
  assert.equal(response.body.error, error);
  assert.equal(typeof response.body.error_description, 'string');
  assert.ok(response.body.error_description.length > 0);
  assert.equal(response.headers.get('cache-control'), 'no-store');
  assert.equal(response.headers.get('pragma'), 'no-cache');
}
