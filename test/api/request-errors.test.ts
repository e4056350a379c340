/**
 * Request-level errors of the business API (docs/api.md, "Order of checks"): 415 for a body that is
 * not JSON, 413 over 64 KiB, 400 for malformed JSON or a body that is not a JSON object, 404 for
 * unknown routes; authentication (401) and authorization (403) decided before the body is looked
 * at; every error body an error record with `path` (docs/errors.md). None of these refusals
 * consumes the correlation id. Real HTTP against a started server with real tokens, on each store.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { test } from 'node:test';
import { FaultyCore } from '../helpers/faulty-core.js';
import { findAccount } from '../../src/reference-core/storage/banking.js';
import { depositBody } from '../helpers/bodies.js';
import { initiatePath, uuidPattern, type HttpResult } from '../helpers/http.js';
import { demo, demoToken, type TestServer } from '../helpers/server.js';
import { describeEachStore } from '../helpers/suite.js';
import { coreTablesOf } from '../../src/reference-core/storage/core-db.js';
import { assertErrorRecord as assertRecord } from '../helpers/error-record.js';

const initiateRecordPath = `POST ${initiatePath}`;
const bodyBytesLimit = 64 * 1024;

/** A valid body padded (with an unknown field, which the API ignores) to exactly `bytes` bytes. */
function paddedBody(bytes: number): string {
  const base = JSON.stringify({ ...depositBody(), padding: '' });
  const padded = JSON.stringify({ ...depositBody(), padding: 'x'.repeat(bytes - Buffer.byteLength(base)) });
  assert.equal(Buffer.byteLength(padded), bytes);
  return padded;
}

function parse(text: string): unknown {
  try {
    return text === '' ? undefined : JSON.parse(text);
  } catch {
    return text;
  }
}

async function send(url: string, init: RequestInit): Promise<HttpResult> {
  const response = await fetch(url, init);
  return { status: response.status, headers: response.headers, body: parse(await response.text()) };
}

interface PostOptions {
  token: string | null;
  /** The exact body; a string or bytes. */
  body?: string | Uint8Array;
  /** undefined: no Content-Type header at all (only possible with a bytes body). */
  contentType?: string | undefined;
  correlationId?: string;
  path?: string;
}

function post(server: TestServer, options: PostOptions): Promise<HttpResult> {
  const headers: Record<string, string> = { accept: 'application/json', 'x-correlation-id': options.correlationId ?? randomUUID() };
  if (options.contentType !== undefined) headers['content-type'] = options.contentType;
  if (options.token !== null) headers.authorization = `Bearer ${options.token}`;
  const body = options.body ?? JSON.stringify(depositBody());
  // fetch adds text/plain for a string body: send bytes when no Content-Type is wanted.
  const payload = options.contentType === undefined && typeof body === 'string' ? new TextEncoder().encode(body) : body;
  return send(`${server.url}${options.path ?? initiatePath}`, { method: 'POST', headers, body: payload });
}

/** A request through node:http, for what fetch does not send: a chunked body without Content-Length. */
function chunkedPost(server: TestServer, headers: Record<string, string>, chunks: Buffer[]): Promise<HttpResult> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${server.url}${initiatePath}`, { method: 'POST', headers }, (response) => {
      const parts: Buffer[] = [];
      response.on('data', (part: Buffer) => parts.push(part));
      response.on('end', () => {
        const responseHeaders = new Headers();
        for (const [name, value] of Object.entries(response.headers)) {
          if (value !== undefined) responseHeaders.set(name, Array.isArray(value) ? value.join(', ') : value);
        }
        resolve({ status: response.statusCode ?? 0, headers: responseHeaders, body: parse(Buffer.concat(parts).toString('utf8')) });
      });
    });
    request.on('error', reject);
    for (const chunk of chunks) request.write(chunk);
    request.end();
  });
}

/** The error record at top level (test/helpers/error-record.ts); with `code`, one errordetail naming it. */
function assertErrorRecord(response: HttpResult, status: number, path: string, code?: string, detailReason?: string): void {
  assertRecord(response, { status, path, ...(code === undefined ? {} : { code }), ...(detailReason === undefined ? {} : { detailReason }) });
}

function assertExecuted(response: HttpResult): void {
  assert.equal(response.status, 200, JSON.stringify(response.body));
  assert.match(String(response.body.operationReference), uuidPattern);
}

describeEachStore('business API request errors', ({ server }) => {
  const token = () => demoToken(server());

  /** The refusal did not consume the correlation id: a valid request with it executes. */
  async function assertIdNotConsumed(correlationId: string): Promise<void> {
    assertExecuted(await post(server(), { token: await token(), correlationId, contentType: 'application/json' }));
  }

  // --- 415 -----------------------------------------------------------------------------------------

  test('Content-Type text/plain with a JSON body → 415 UNSUPPORTED_MEDIA_TYPE TD-415-001; the id is echoed and not consumed', async () => {
    const correlationId = randomUUID();
    const response = await post(server(), { token: await token(), contentType: 'text/plain', correlationId });
    assertErrorRecord(response, 415, initiateRecordPath, 'TD-415-001', 'UNSUPPORTED_MEDIA_TYPE');
    assert.equal(response.headers.get('x-correlation-id'), correlationId);
    await assertIdNotConsumed(correlationId);
  });

  test('no Content-Type with a body → 415', async () => {
    const response = await post(server(), { token: await token(), contentType: undefined });
    assertErrorRecord(response, 415, initiateRecordPath, 'TD-415-001');
  });

  test('Content-Type application/x-www-form-urlencoded → 415', async () => {
    const response = await post(server(), { token: await token(), contentType: 'application/x-www-form-urlencoded', body: 'customerReference=C0001' });
    assertErrorRecord(response, 415, initiateRecordPath, 'TD-415-001');
  });

  test('Content-Type application/xml → 415', async () => {
    const response = await post(server(), { token: await token(), contentType: 'application/xml', body: '<deposit/>' });
    assertErrorRecord(response, 415, initiateRecordPath, 'TD-415-001');
  });

  test('Content-Type application/json; charset=utf-8 is JSON → 200', async () => {
    assertExecuted(await post(server(), { token: await token(), contentType: 'application/json; charset=utf-8' }));
  });

  test('the record\'s path is the method and path without the query string', async () => {
    const response = await post(server(), { token: await token(), contentType: 'text/plain', path: `${initiatePath}?debug=1&x=y` });
    assertErrorRecord(response, 415, initiateRecordPath, 'TD-415-001');
  });

  // --- 413 -----------------------------------------------------------------------------------------

  test('a body of 64 KiB + 1 byte → 413 PAYLOAD_TOO_LARGE TD-413-001; the id is not consumed', async () => {
    const correlationId = randomUUID();
    const response = await post(server(), { token: await token(), contentType: 'application/json', body: paddedBody(bodyBytesLimit + 1), correlationId });
    assertErrorRecord(response, 413, initiateRecordPath, 'TD-413-001', 'PAYLOAD_TOO_LARGE');
    assert.equal(response.headers.get('x-correlation-id'), correlationId);
    await assertIdNotConsumed(correlationId);
  });

  test('a body of exactly 64 KiB is not over the limit (unknown fields ignored) → 200', async () => {
    assertExecuted(await post(server(), { token: await token(), contentType: 'application/json', body: paddedBody(bodyBytesLimit) }));
  });

  test('a chunked body (no Content-Length) over 64 KiB → 413', async () => {
    const body = Buffer.from(paddedBody(bodyBytesLimit + 4096));
    const chunks = [body.subarray(0, 20_000), body.subarray(20_000, 50_000), body.subarray(50_000)];
    const response = await chunkedPost(
      server(),
      { authorization: `Bearer ${await token()}`, 'content-type': 'application/json', 'x-correlation-id': randomUUID() },
      chunks,
    );
    assertErrorRecord(response, 413, initiateRecordPath, 'TD-413-001');
  });

  // --- 400: malformed JSON, not an object ----------------------------------------------------------

  for (const [name, raw] of [
    ['truncated', '{"customerReference": "C0001", '],
    ['unquoted keys', '{customerReference: "C0001"}'],
    ['single quotes', "{'customerReference': 'C0001'}"],
    ['trailing comma', `${JSON.stringify(depositBody()).slice(0, -1)},}`],
  ] as const) {
    test(`malformed JSON (${name}) → 400 VALIDATION_ERROR TD-400-001 MALFORMED_JSON; the id is not consumed`, async () => {
      const correlationId = randomUUID();
      const response = await post(server(), { token: await token(), contentType: 'application/json', body: raw, correlationId });
      assertErrorRecord(response, 400, initiateRecordPath, 'TD-400-001', 'MALFORMED_JSON');
      await assertIdNotConsumed(correlationId);
    });
  }

  for (const [name, raw] of [
    ['a JSON array', JSON.stringify([depositBody()])],
    ['a JSON number', '42'],
    ['a JSON string', '"C0001"'],
    ['JSON null', 'null'],
    ['JSON true', 'true'],
  ] as const) {
    test(`a body that is ${name}, not an object → 400 VALIDATION_ERROR TD-400-002 ("must be a JSON object")`, async () => {
      const response = await post(server(), { token: await token(), contentType: 'application/json', body: raw });
      assertErrorRecord(response, 400, initiateRecordPath, 'TD-400-002', 'MISSING_REQUIRED_FIELD');
      assert.match(response.body.message, /JSON object/);
    });
  }

  test('an empty body with Content-Type application/json → 400', async () => {
    const response = await post(server(), { token: await token(), contentType: 'application/json', body: '' });
    assertErrorRecord(response, 400, initiateRecordPath, 'TD-400-002', 'MISSING_REQUIRED_FIELD');
  });

  test('a missing required field → 400 TD-400-002 naming the field', async () => {
    const { sourceAccount: _omitted, ...body } = depositBody();
    const response = await post(server(), { token: await token(), contentType: 'application/json', body: JSON.stringify(body) });
    assertErrorRecord(response, 400, initiateRecordPath, 'TD-400-002', 'MISSING_REQUIRED_FIELD');
    assert.match(response.body.errordetail[0].message, /sourceAccount/);
  });

  test('issue 12 item 9: every validation problem of a request is in errordetail, not only the first, each with its code', async () => {
    const { sourceAccount: _source, valueDate: _date, ...body } = depositBody();
    const wrongType = { ...body, customerReference: 42 };
    const response = await post(server(), { token: await token(), contentType: 'application/json', body: JSON.stringify(wrongType) });
    assert.equal(response.status, 400, JSON.stringify(response.body));
    const details = response.body.errordetail as Array<{ code: string; message: string }>;
    assert.deepEqual(details.map((detail) => detail.code).sort(), ['TD-400-002', 'TD-400-002', 'TD-400-003']);
    const text = details.map((detail) => detail.message).join(' | ');
    assert.match(text, /sourceAccount is required/);
    assert.match(text, /valueDate is required/);
    assert.match(text, /customerReference/);
    assert.match(response.body.message, /and 2 more problems: see errordetail/);
  });

  test('issue 12 item 9: "currencyCode" in a term deposit is named as the spelling trap (the field is "currencycode")', async () => {
    const body = depositBody() as Record<string, any>;
    const principal = { ...body.principalAmount, amountCurrency: { currencyCode: 'USD' } };
    const response = await post(server(), { token: await token(), contentType: 'application/json', body: JSON.stringify({ ...body, principalAmount: principal }) });
    assertErrorRecord(response, 400, initiateRecordPath, 'TD-400-002', 'MISSING_REQUIRED_FIELD');
    assert.match(response.body.errordetail[0].message, /principalAmount\.amountCurrency\.currencycode is required \(found "currencyCode": this field is spelled "currencycode"\)/);
  });

  test('issue 12 item 9: installmentSequence 0 is explained in words, with no regular expression in the message', async () => {
    const path = '/v1/merchandising-loan/7000000001/repayment-schedules/0/execute';
    const response = await post(server(), { token: await token(), contentType: 'application/json', body: '{}', path });
    assert.equal(response.status, 400, JSON.stringify(response.body));
    const message = response.body.error.errordetail[0].message as string;
    assert.match(message, /path parameter installmentSequence is not valid: expected sequence of the installment, from 1, got "0"/);
    assert.doesNotMatch(JSON.stringify(response.body), /\^|\[0-9\]|\{0,/);
  });

  test('issue 12 item 9: "Authorization: Bearer " with no token (an empty $TOKEN) is 401 saying so and how to get a token', async () => {
    const response = await send(`${server().url}${initiatePath}`, {
      method: 'POST',
      headers: { authorization: 'Bearer ', 'content-type': 'application/json', 'x-correlation-id': randomUUID() },
      body: JSON.stringify(depositBody()),
    });
    assert.equal(response.status, 401);
    assert.match(response.body.message, /no token after "Bearer" \(an empty shell variable such as \$TOKEN\?\); get one with POST \/realms\/\{realm\}\/protocol\/openid-connect\/token/);
    const missing = await post(server(), { token: null, contentType: 'application/json' });
    assert.match(missing.body.message, /^A Bearer token is required: send "Authorization: Bearer <token>"/);
  });

  test('unknown fields are ignored → 200', async () => {
    const body = { ...depositBody(), channelNote: 'hello', principalAmount: { ...(depositBody().principalAmount as object), extra: true } };
    assertExecuted(await post(server(), { token: await token(), contentType: 'application/json', body: JSON.stringify(body) }));
  });

  // --- order: 401 and 403 before the body is looked at ---------------------------------------------

  test('order: no token and a text/plain body → 401, not 415', async () => {
    const response = await post(server(), { token: null, contentType: 'text/plain' });
    assertErrorRecord(response, 401, initiateRecordPath, 'TD-401-001');
    assert.match(response.headers.get('www-authenticate') ?? '', /^Bearer realm=/);
  });

  test('order: no token and malformed JSON → 401, not 400', async () => {
    const response = await post(server(), { token: null, contentType: 'application/json', body: '{"broken": ' });
    assertErrorRecord(response, 401, initiateRecordPath, 'TD-401-001');
  });

  test('order: no token and a JSON array body → 401, not 400', async () => {
    assertErrorRecord(await post(server(), { token: null, contentType: 'application/json', body: '[]' }), 401, initiateRecordPath, 'TD-401-001');
  });

  test('order: no token and a body over 64 KiB → 401, not 413', async () => {
    const response = await post(server(), { token: null, contentType: 'application/json', body: paddedBody(bodyBytesLimit + 1) });
    assertErrorRecord(response, 401, initiateRecordPath, 'TD-401-001');
  });

  test('order: an invalid token and malformed JSON → 401 invalid_token, not 400', async () => {
    const response = await post(server(), { token: 'not-a-jwt', contentType: 'application/json', body: '{"broken": ' });
    assertErrorRecord(response, 401, initiateRecordPath, 'TD-401-002');
    assert.match(response.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
  });

  test('order: a token without the scope and malformed JSON or text/plain → 403, not 400 / 415', async () => {
    const reporting = await demoToken(server(), demo.reporting);
    assertErrorRecord(await post(server(), { token: reporting, contentType: 'application/json', body: '{"broken": ' }), 403, initiateRecordPath, 'TD-403-001');
    assertErrorRecord(await post(server(), { token: reporting, contentType: 'text/plain' }), 403, initiateRecordPath, 'TD-403-001');
  });

  test('order: an invalid x-correlation-id is refused (TD-400-004) before the body is parsed', async () => {
    const response = await post(server(), { token: await token(), contentType: 'application/json', body: '{"broken": ', correlationId: 'not valid!' });
    assertErrorRecord(response, 400, initiateRecordPath, 'TD-400-004');
  });

  // --- 404 -----------------------------------------------------------------------------------------

  for (const [method, path] of [
    ['GET', '/v1/no-such-resource'],
    ['POST', '/v1/term-deposits/no-such-operation'],
    ['GET', '/v1/term-deposits/initiate'],
    ['DELETE', '/v1/operations/abc'],
    ['POST', '/v2/term-deposits/initiate'],
  ] as const) {
    test(`unknown route ${method} ${path} → 404 NOT_FOUND with an error record naming the path`, async () => {
      const response = await send(`${server().url}${path}?q=1`, {
        method,
        headers: { authorization: `Bearer ${await token()}`, accept: 'application/json', ...(method === 'POST' ? { 'content-type': 'application/json' } : {}) },
        ...(method === 'POST' ? { body: JSON.stringify(depositBody()) } : {}),
      });
      assertErrorRecord(response, 404, `${method} ${path}`);
    });
  }

  test('unknown route under /v1: x-correlation-id is echoed on the 404 as on every response', async () => {
    const correlationId = randomUUID();
    const response = await send(`${server().url}/v1/no-such-resource`, { headers: { 'x-correlation-id': correlationId } });
    assertErrorRecord(response, 404, 'GET /v1/no-such-resource');
    assert.equal(response.headers.get('x-correlation-id'), correlationId);
  });

  test('a known term deposit route with an unknown contract → 404 TD-404-004 record', async () => {
    const path = '/v1/term-deposits/TD999999999999999/retrieve';
    const response = await send(`${server().url}${path}`, { headers: { authorization: `Bearer ${await token()}` } });
    assertErrorRecord(response, 404, `GET ${path}`, 'TD-404-004', 'TERM_DEPOSIT_NOT_FOUND');
  });
});

// =============================================================================================
// 500: an unexpected failure of the core
// =============================================================================================

/** While armed, the core's write fails with an unexpected error (not a refusal, not CoreUnavailable). */
const unexpected = { detail: 'relation "td_secret_internal_table" does not exist' };

/** While armed, the core adapter fails unexpectedly (FaultyCore's crash fault). */
const breakable = new FaultyCore();

describeEachStore(
  'business API request errors: unexpected failures',
  ({ server }) => {
    test('an unexpected error → 500 INTERNAL_ERROR error record with path, no internals leaked, nothing written, id echoed', async () => {
      const token = await demoToken(server());
      const correlationId = randomUUID();
      const before = (await findAccount(coreTablesOf(server().coregate.store.db), '1000000001'))?.balanceMinor;
      const response: HttpResult = await breakable.withFault({ kind: 'crash', error: new Error(unexpected.detail) }, () =>
        post(server(), { token, contentType: 'application/json', correlationId }),
      );
      assert.equal(response.status, 500, JSON.stringify(response.body));
      const code = response.body?.errordetail?.[0]?.code as string | undefined;
      assertErrorRecord(response, 500, initiateRecordPath, code);
      if (code !== undefined) assert.equal(code, 'TD-500-001');
      assert.equal(JSON.stringify(response.body).includes('td_secret_internal_table'), false, 'the cause stays in the log');
      assert.equal(response.headers.get('x-correlation-id'), correlationId);
      assert.equal((await findAccount(coreTablesOf(server().coregate.store.db), '1000000001'))?.balanceMinor, before);
      assert.ok(server().logLines.some((line) => line.includes('td_secret_internal_table')), 'the cause is logged');
    });
  },
  { wrapCore: breakable.wrap },
);
