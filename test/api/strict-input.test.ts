/**
 * Adversarial input (docs/api.md, "Order of checks", "Money" and "Tokens"): numbers read exactly
 * from the JSON text, repeated member names, nesting deeper than 32, invalid UTF-8, control
 * characters in identifiers, the API's own audience, a token issued in the future, two
 * Authorization headers, and the framework's own errors under /v1 (an over-long path parameter, a
 * bad percent-escape): each a 400 or 401 with the documented record, never a 500, and nothing
 * moved. Real HTTP against a started server.
 */
// @starts-early: among the slowest files of a quiet run
import { systemClock } from '../../src/clock/system-clock.js';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { test } from 'node:test';
import { SignJWT } from 'jose';
import { Keyring } from '../../src/auth/keyring.js';
import { Vault } from '../../src/auth/vault.js';
import { findRealm } from '../../src/store/realms.js';
import { findAccount } from '../../src/reference-core/storage/banking.js';
import { depositBody } from '../helpers/bodies.js';
import { initiatePath, reasonByStatus, type HttpResult } from '../helpers/http.js';
import { demoToken, testDeployment, type TestServer } from '../helpers/server.js';
import { describeEachStore } from '../helpers/suite.js';
import { coreTablesOf } from '../../src/reference-core/storage/core-db.js';

const loanPath = '/v1/merchandising-loan/7000000001/repayment-schedules/1/execute';

function parse(text: string): any {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Sends exact bytes and headers in order (node:http raw headers: fetch would merge or refuse some of what these tests send). */
function rawRequest(server: TestServer, options: { method?: string; path?: string; headers: Array<[string, string]>; body?: Buffer | string }): Promise<HttpResult> {
  return new Promise((resolve, reject) => {
    const url = new URL(server.url);
    const request = httpRequest(
      { host: url.hostname, port: url.port, method: options.method ?? 'POST', path: options.path ?? initiatePath, headers: [['host', url.host], ...options.headers].flat() as unknown as Record<string, string> },
      (response) => {
        const parts: Buffer[] = [];
        response.on('data', (part: Buffer) => parts.push(part));
        response.on('end', () => {
          const headers = new Headers();
          for (const [name, value] of Object.entries(response.headers)) if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
          resolve({ status: response.statusCode ?? 0, headers, body: parse(Buffer.concat(parts).toString('utf8')) });
        });
      },
    );
    request.on('error', reject);
    if (options.body !== undefined) request.write(options.body);
    request.end();
  });
}

function postText(server: TestServer, token: string, body: Buffer | string, path = initiatePath): Promise<HttpResult> {
  return rawRequest(server, {
    path,
    headers: [
      ['content-type', 'application/json'],
      ['authorization', `Bearer ${token}`],
      ['x-correlation-id', randomUUID()],
    ],
    body,
  });
}

/** The deposit body as JSON text with the amount written exactly as given. */
function depositText(amountText: string, overrides: Record<string, unknown> = {}): string {
  return JSON.stringify({ ...depositBody(123_456), ...overrides }).replace('123456', amountText);
}

function assertRecord(response: HttpResult, status: number, code?: string, path = `POST ${initiatePath}`, wrapped = false): Record<string, any> {
  assert.equal(response.status, status, JSON.stringify(response.body));
  const record = wrapped ? response.body.error : response.body;
  if (wrapped) assert.deepEqual(Object.keys(response.body), ['error']);
  assert.equal(record.status, status);
  assert.equal(record.reason, reasonByStatus[status]);
  assert.equal(record.path, path);
  assert.equal(typeof record.message, 'string');
  if (code !== undefined) assert.equal(record.errordetail?.[0]?.code, code, JSON.stringify(record));
  return record;
}

describeEachStore('adversarial input', ({ server }) => {
  const token = () => demoToken(server());
  const sourceBalance = async () => (testDeployment === 'embedded' ? (await findAccount(coreTablesOf(server().coregate.store.db), '1000000001'))?.balanceMinor : undefined);

  test('exact numbers: 1000.0000000000000001 USD is 400 TD-400-006 quoting the amount as sent, nothing booked', async () => {
    const before = await sourceBalance();
    const record = assertRecord(await postText(server(), await token(), depositText('1000.0000000000000001')), 400, 'TD-400-006');
    assert.match(record.message, /1000\.0000000000000001/);
    assert.equal(await sourceBalance(), before);
  });

  test('exact numbers: 9007199254740993 is refused as more than 15 significant digits, quoted exactly', async () => {
    const record = assertRecord(await postText(server(), await token(), depositText('9007199254740993')), 400, 'TD-400-006');
    assert.match(record.message, /9007199254740993/);
  });

  test('exact numbers: decimals are counted as written (1000.001 and 1000.000 USD are 400), 1000.10 and 1.0001e3 are exact', async () => {
    assertRecord(await postText(server(), await token(), depositText('1000.001')), 400, 'TD-400-006');
    assertRecord(await postText(server(), await token(), depositText('1000.000')), 400, 'TD-400-006');
    assert.equal((await postText(server(), await token(), depositText('1000.10'))).status, 200);
    const exponent = await postText(server(), await token(), depositText('1.0001e3'));
    assert.equal(exponent.status, 200, JSON.stringify(exponent.body));
    assert.equal(exponent.body.principalAmount.amountValue, 1000.1);
  });

  test('exact numbers: a rate just above 100 is refused exactly (100.0000000000000001 → TD-400-013)', async () => {
    const text = JSON.stringify(depositBody()).replace('"rateValue":5.25', '"rateValue":100.0000000000000001');
    assertRecord(await postText(server(), await token(), text), 400, 'TD-400-013');
  });

  test('exact numbers: a rate with more than 12 decimals (1e-13, 1e-31, 1e-400) is TD-400-013 on every store and core, never 500 or 502', async () => {
    for (const rate of ['1e-13', '0.0000000000001', '1e-31', '1e-400']) {
      const text = JSON.stringify(depositBody()).replace('"rateValue":5.25', `"rateValue":${rate}`);
      assert.match(assertRecord(await postText(server(), await token(), text), 400, 'TD-400-013').message, /12 decimals/);
    }
    const smallest = JSON.stringify(depositBody()).replace('"rateValue":5.25', '"rateValue":1e-12');
    const accepted = await postText(server(), await token(), smallest);
    assert.equal(accepted.status, 200, JSON.stringify(accepted.body));
  });

  test('exact numbers: an amount of 10^15 minor units or more (1e13, 1e17, 1e20 USD) is TD-400-006, never an overflow', async () => {
    const before = await sourceBalance();
    for (const amount of ['1e13', '1e17', '1e20']) {
      assert.match(assertRecord(await postText(server(), await token(), depositText(amount)), 400, 'TD-400-006').message, /too large: at most 9999999999999\.99 USD/);
    }
    assert.equal(await sourceBalance(), before);
  });

  test('free text (transactionDescription, accountDescription) refuses NUL and control characters but keeps tabs and line breaks', async () => {
    const nul = JSON.stringify({ ...depositBody(), transactionDescription: 'rent\u0000' });
    assert.match(assertRecord(await postText(server(), await token(), nul), 400, 'TD-400-003').message, /transactionDescription must not contain control characters other than tab and line breaks/);
    const lines = JSON.stringify({ ...depositBody(), transactionDescription: 'rent\tMay\r\nsecond line' });
    assert.equal((await postText(server(), await token(), lines)).status, 200);
    const loan = JSON.stringify({
      merchandisingLoanFacilityParameterType: 'DocumentaryRemittance',
      merchandisingLoanType: 'CRDE',
      merchandisingLoanFacilityReference: { loanAmount: { amountValue: 1, amountCurrency: { currencyCode: 'USD' } } },
      accountReferences: [
        { accountIdentification: { accountIdentificationType: 'PaymentAccount', accountDescription: 'x\u0000', identifierValue: '1000000001' } },
        { accountIdentification: { accountIdentificationType: 'ExpenseAccount', identifierValue: '1000000002' } },
      ],
    });
    const record = assertRecord(await postText(server(), await token(), loan, loanPath), 400, 'ML-400-003', `POST ${loanPath}`, true);
    assert.match(record.message, /accountDescription must not contain control characters/);
  });

  test('a number a double cannot hold (1e400), even in an unknown field, is 400, never 500', async () => {
    assertRecord(await postText(server(), await token(), depositText('1000', { x: 1 }).replace('"x":1', '"x":1e400')), 400, 'TD-400-001');
    assertRecord(await postText(server(), await token(), depositText('1e400')), 400, 'TD-400-001');
    assertRecord(await postText(server(), await token(), depositText('0e999999999999')), 400);
  });

  test('RFC 7493: a member name repeated in one object is 400 naming it', async () => {
    const text = depositText('1000').replace('"customerReference":"C0001"', '"customerReference":"C0001","customerReference":"C0002"');
    const record = assertRecord(await postText(server(), await token(), text), 400, 'TD-400-001');
    assert.match(record.message, /customerReference/);
  });

  test('nesting of 32 levels is read, 33 is 400, and 10,000 is 400 (not a stack overflow)', async () => {
    const nested = (depth: number) => depositText('1000', { x: 0 }).replace('"x":0', `"x":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}`);
    assert.equal((await postText(server(), await token(), nested(32))).status, 200);
    const record = assertRecord(await postText(server(), await token(), nested(33)), 400, 'TD-400-001');
    assert.match(record.message, /32 levels/);
    assertRecord(await postText(server(), await token(), '['.repeat(10_000) + ']'.repeat(10_000)), 400, 'TD-400-001');
    assertRecord(await postText(server(), await token(), `{"a":${'{"a":'.repeat(10_000)}1${'}'.repeat(10_001)}`, loanPath), 400, 'ML-400-001', `POST ${loanPath}`, true);
  });

  test('a body that is not valid UTF-8 (invalid or overlong sequences) is 400, never read with replacement characters', async () => {
    const valid = Buffer.from(depositText('1000', { transactionDescription: 'XX' }));
    const at = valid.indexOf('XX');
    for (const bad of [Buffer.from([0xff, 0xfe]), Buffer.from([0xc0, 0xaf]), Buffer.from([0xed, 0xa0, 0x80])]) {
      const body = Buffer.concat([valid.subarray(0, at), bad, valid.subarray(at + 2)]);
      const record = assertRecord(await postText(server(), await token(), body), 400, 'TD-400-001');
      assert.match(record.message, /UTF-8/);
    }
  });

  test('an unpaired surrogate escape and a "__proto__" member are 400', async () => {
    assertRecord(await postText(server(), await token(), depositText('1000', { transactionDescription: 'X' }).replace('"X"', '"\\ud800"')), 400, 'TD-400-001');
    assertRecord(await postText(server(), await token(), depositText('1000', { x: 1 }).replace('"x"', '"__proto__"')), 400, 'TD-400-001');
  });

  test('identifiers refuse control characters; every string has a maximum length', async () => {
    const control = JSON.stringify({ ...depositBody(), customerReference: 'C0001\u0000' });
    const record = assertRecord(await postText(server(), await token(), control), 400, 'TD-400-003');
    assert.match(record.message, /customerReference must not contain control characters/);
    const long = JSON.stringify({ ...depositBody(), transactionDescription: 'x'.repeat(257) });
    assert.match(assertRecord(await postText(server(), await token(), long), 400, 'TD-400-003').message, /at most 256 characters/);
  });

  test('an over-long path parameter and a bad percent-escape under /v1 get the documented record, with the correlation id', async () => {
    const t = await token();
    const long = `/v1/term-deposits/${'9'.repeat(3000)}/retrieve`;
    const overLong = await rawRequest(server(), { method: 'GET', path: long, headers: [['authorization', `Bearer ${t}`], ['x-correlation-id', 'probe-1']] });
    assert.equal(overLong.status, 400, JSON.stringify(overLong.body));
    assert.equal(overLong.body.reason, 'VALIDATION_ERROR');
    assert.equal(overLong.headers.get('x-correlation-id'), 'probe-1');
    const tooLongForSchema = await rawRequest(server(), { method: 'GET', path: `/v1/term-deposits/${'9'.repeat(200)}/retrieve`, headers: [['authorization', `Bearer ${t}`]] });
    assertRecord(tooLongForSchema, 400, 'TD-400-003', `GET /v1/term-deposits/${'9'.repeat(200)}/retrieve`);
    const badEscape = await rawRequest(server(), { method: 'GET', path: '/v1/term-deposits/%E0%A4%A/retrieve', headers: [['authorization', `Bearer ${t}`]] });
    assertRecord(badEscape, 400, 'TD-400-020', 'GET /v1/term-deposits/%E0%A4%A/retrieve');
    const badEscapeLoan = await rawRequest(server(), { path: '/v1/merchandising-loan/%zz/repayment-schedules/1/execute', headers: [['content-type', 'application/json']], body: '{}' });
    assertRecord(badEscapeLoan, 400, 'ML-400-020', 'POST /v1/merchandising-loan/%zz/repayment-schedules/1/execute', true);
  });

  test('RFC 6750 §3.1: two Authorization headers are 400 with WWW-Authenticate invalid_request, whichever comes first', async () => {
    const t = await token();
    const response = await rawRequest(server(), {
      headers: [
        ['content-type', 'application/json'],
        ['authorization', `Bearer ${t}`],
        ['authorization', 'Bearer other'],
      ],
      body: JSON.stringify(depositBody()),
    });
    assertRecord(response, 400, 'TD-400-009');
    assert.match(response.headers.get('www-authenticate') ?? '', /error="invalid_request"/);
  });
});

describeEachStore('adversarial tokens', ({ server }) => {
  /** A token of the demo realm, signed with its active key (read from the store as the server would), with chosen claims. */
  async function forged(claims: Record<string, unknown>): Promise<string> {
    const valid = await demoToken(server());
    const [header, payload] = valid.split('.').slice(0, 2).map((part) => JSON.parse(Buffer.from(part, 'base64url').toString()));
    const realm = await findRealm(server().coregate.store.db, 'sandbox');
    assert.ok(realm);
    const key = await new Keyring(server().coregate.store, new Vault(undefined), systemClock).activeKey(realm);
    assert.ok(key.signingKey);
    return new SignJWT({ ...payload, ...claims }).setProtectedHeader({ alg: header.alg, kid: header.kid, typ: 'JWT' }).sign(key.signingKey);
  }

  async function call(token: string): Promise<HttpResult> {
    return rawRequest(server(), {
      headers: [
        ['content-type', 'application/json'],
        ['authorization', `Bearer ${token}`],
      ],
      body: JSON.stringify(depositBody()),
    });
  }

  test('the signing path works (a re-signed copy of a valid token is accepted)', async () => {
    assert.equal((await call(await forged({}))).status, 200);
  });

  test('a token with another audience than the API\'s own is 401, even from a realm of this store', async () => {
    const response = await call(await forged({ aud: 'partner-api' }));
    assertRecord(response, 401, 'TD-401-002');
    assert.match(response.headers.get('www-authenticate') ?? '', /invalid_token/);
  });

  test('a token whose iat lies more than 30 s in the future is 401; 20 s is within the skew', async () => {
    const now = Math.floor(Date.now() / 1000);
    assertRecord(await call(await forged({ iat: now + 3600 })), 401, 'TD-401-002');
    assert.equal((await call(await forged({ iat: now + 20 }))).status, 200);
  });

  test('an iss with a bad percent-escape is 401, never 500', async () => {
    const valid = await demoToken(server());
    const [, payload] = valid.split('.').slice(0, 2).map((part) => JSON.parse(Buffer.from(part, 'base64url').toString()));
    assertRecord(await call(await forged({ iss: `${String(payload.iss).replace(/\/realms\/.*/, '/realms/')}%E0%A4%A` })), 401, 'TD-401-002');
  });
});

describeEachStore('adversarial input at the auth service', ({ server }) => {
  const form = (body: string) =>
    rawRequest(server(), { path: new URL(server().tokenUrl()).pathname, headers: [['content-type', 'application/x-www-form-urlencoded']], body });

  test('on the token form: a control character, bytes that are not UTF-8, or a value over 8,192 characters → 400 invalid_request', async () => {
    for (const body of [
      'grant_type=client_credentials&client_id=treasury-app%00&client_secret=x',
      'grant_type=client_credentials&client_id=treasury-app%FF&client_secret=x',
      `grant_type=client_credentials&client_id=treasury-app&client_secret=${'x'.repeat(8_193)}`,
    ]) {
      const response = await form(body);
      assert.equal(response.status, 400, JSON.stringify(response.body));
      assert.equal(response.body.error, 'invalid_request');
    }
  });

  test('a realm name with a NUL (%00) in the path is an unknown realm (404), never 500, on every store', async () => {
    const response = await rawRequest(server(), { method: 'GET', path: '/realms/%00/protocol/openid-connect/certs', headers: [] });
    assert.equal(response.status, 404, JSON.stringify(response.body));
    assert.equal(response.body.error, 'not_found');
  });

  test('a bad percent-escape under /realms is an OAuth invalid_request, not the framework\'s body', async () => {
    const response = await rawRequest(server(), { method: 'GET', path: '/realms/%zz/protocol/openid-connect/certs', headers: [] });
    assert.equal(response.status, 400, JSON.stringify(response.body));
    assert.equal(response.body.error, 'invalid_request');
  });
});
