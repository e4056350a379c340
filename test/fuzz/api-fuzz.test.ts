/**
 * A property-based fuzzer over every endpoint (docs/api.md, "Order of checks": no request, however
 * malformed, gets a 500; every /v1 error is the documented record; a refused request moves no
 * money). fast-check generates valid-shaped requests and mutations of them: fields dropped,
 * replaced by any JSON value or by numbers a double cannot hold, members repeated, long and odd
 * strings (lone surrogates included), odd headers, paths with `..`, `%00`, bad escapes and very
 * long ids. Checked for every case: no 5xx; the error's shape; the balances unchanged unless the
 * answer was a success. At the end the service is still ready and `coregate check` passes.
 *
 * CI runs FUZZ_RUNS (default 150) cases per store; FUZZ_RUNS=5000 runs more; FUZZ_SEED=n replays
 * a run. A failure prints its seed and the shrunk request (fast-check's report).
 */
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { test } from 'node:test';
import fc from 'fast-check';
import { checkEverything } from '../../src/cli/check.js';
import { coreRecords } from '../../src/reference-core/storage/core-records.js';
import { depositBody } from '../helpers/bodies.js';
import { reasonByStatus } from '../helpers/http.js';
import { demo, demoToken, type TestServer } from '../helpers/server.js';
import { describeEachStore } from '../helpers/suite.js';
import { coreTablesOf } from '../../src/reference-core/storage/core-db.js';
import { embedded } from '../helpers/stores.js';

const runs = Number(process.env.FUZZ_RUNS ?? 150);
const seed = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED);

interface FuzzRequest {
  method: string;
  path: string;
  headers: Array<[string, string]>;
  body: string | undefined;
}

interface Answer {
  status: number;
  contentType: string;
  text: string;
}

function send(server: TestServer, request: FuzzRequest): Promise<Answer> {
  const url = new URL(server.url);
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      { host: url.hostname, port: url.port, method: request.method, path: request.path, headers: [['host', url.host], ...request.headers].flat() as unknown as Record<string, string> },
      (response) => {
        const parts: Buffer[] = [];
        response.on('data', (part: Buffer) => parts.push(part));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, contentType: String(response.headers['content-type'] ?? ''), text: Buffer.concat(parts).toString('utf8') }));
      },
    );
    outgoing.on('error', reject);
    if (request.body !== undefined) outgoing.write(request.body);
    outgoing.end();
  });
}

// --- values ------------------------------------------------------------------------------------

/** Number texts a double cannot hold exactly, or at all; spliced into the JSON text as written. */
const rawNumbers = ['1e400', '-1e400', '1e-400', '0e999999999', '9007199254740993', '1000.0000000000000001', '-0', '0.1e1', '1E+2', '123456789012345678901234567890'];
const oddStrings = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom('', ' ', '\u0000', '\u202e', '../../etc/passwd', '%00', 'C0001\n', '𝔘𝔫𝔦𝔠𝔬𝔡𝔢', '\ud800'),
  fc.integer({ min: 1, max: 70_000 }).map((length) => 'x'.repeat(length)),
);
const anyValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  oddStrings,
  fc.constantFrom(...rawNumbers).map((text) => ({ raw: text })),
  fc.integer({ min: 1, max: 40 }).map((depth) => JSON.parse('['.repeat(depth) + ']'.repeat(depth))),
);

type Mutation = { kind: 'drop'; at: number } | { kind: 'set'; at: number; value: unknown } | { kind: 'repeat'; at: number; value: unknown } | { kind: 'truncate'; at: number };
const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant('drop' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('set' as const), at: fc.nat(), value: anyValue }),
  fc.record({ kind: fc.constant('repeat' as const), at: fc.nat(), value: anyValue }),
  fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }),
);

/** Every (object, member) of a JSON value: the places a mutation can hit. */
function members(value: unknown, found: Array<[Record<string, unknown>, string]> = []): Array<[Record<string, unknown>, string]> {
  if (value !== null && typeof value === 'object') {
    for (const [key, child] of Object.entries(value)) {
      if (!Array.isArray(value)) found.push([value as Record<string, unknown>, key]);
      members(child, found);
    }
  }
  return found;
}

/** The body's JSON text after the mutations; raw numbers are written as given. */
function mutatedJson(valid: Record<string, unknown>, mutations: Mutation[]): string {
  const body = structuredClone(valid);
  const raws: string[] = [];
  const encode = (value: unknown): unknown => {
    if (value !== null && typeof value === 'object' && 'raw' in (value as object)) {
      raws.push((value as { raw: string }).raw);
      return `__RAW_${raws.length - 1}__`;
    }
    return value;
  };
  const repeats: Array<[string, unknown]> = [];
  let truncateAt: number | undefined;
  for (const change of mutations) {
    const places = members(body);
    const place = places[change.at % Math.max(1, places.length)];
    if (change.kind === 'truncate') truncateAt = change.at;
    if (!place) continue;
    const [object, key] = place;
    if (change.kind === 'drop') delete object[key];
    if (change.kind === 'set') object[key] = encode(change.value);
    if (change.kind === 'repeat') repeats.push([key, encode(change.value)]);
  }
  let text = JSON.stringify(body);
  // A repeated member: the same name once more at the start of the top-level object.
  for (const [key, value] of repeats) text = text.replace(/^\{/, `{${JSON.stringify(key)}:${JSON.stringify(value) ?? 'null'}${text === '{}' ? '' : ','}`);
  raws.forEach((raw, index) => (text = text.replace(`"__RAW_${index}__"`, raw)));
  return truncateAt === undefined ? text : text.slice(0, truncateAt % (text.length + 1));
}

// --- requests ----------------------------------------------------------------------------------

const realmPath = `/realms/${demo.realm}/protocol/openid-connect`;
const idVariants = fc.oneof(
  fc.constantFrom('TD000000000000001', '7000000001', '1', '..', '%00', '%2e%2e', '%zz', '%E0%A4%A', 'a%2Fb', '..%2F..%2Fetc', '00000000-0000-7000-8000-000000000000'),
  fc.integer({ min: 60, max: 3_000 }).map((length) => '9'.repeat(length)),
  fc.string({ unit: 'binary', maxLength: 20 }).map((text) => encodeURIComponent(text.replace(/[\ud800-\udfff]/g, 'x'))),
);
const contentTypes = fc.constantFrom('application/json', 'application/json; charset=utf-8', 'APPLICATION/JSON', 'text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=latin1', 'multipart/form-data; boundary=x');
const correlationIds = fc.oneof(fc.uuid(), fc.constantFrom('', 'a b', 'x'.repeat(129), 'ok.id:1', '\u00e9'));

function loanBody(): Record<string, unknown> {
  return {
    merchandisingLoanFacilityParameterType: 'DocumentaryRemittance',
    merchandisingLoanType: 'CRDE',
    merchandisingLoanFacilityReference: { loanInstallmentSequence: 1, loanAmount: { amountValue: 1, amountCurrency: { currencyCode: 'USD' } } },
    accountReferences: [
      { accountIdentification: { accountIdentificationType: 'PaymentAccount', identifierValue: '1000000001' } },
      { accountIdentification: { accountIdentificationType: 'ExpenseAccount', identifierValue: '1000000001' } },
    ],
  };
}

type Auth = 'valid' | 'none' | 'garbage' | 'basic' | 'twice';
const auths = fc.constantFrom<Auth>('valid', 'valid', 'valid', 'none', 'garbage', 'basic', 'twice');

interface Case {
  endpoint: 'token' | 'introspect' | 'jwks' | 'discovery' | 'initiate' | 'retrieve' | 'retrieveSingular' | 'loan' | 'operation';
  mutations: Mutation[];
  id: string;
  contentType: string;
  correlationId: string;
  auth: Auth;
  form: Array<[string, string]>;
}

const formParameters = fc.array(
  fc.tuple(fc.constantFrom('grant_type', 'client_id', 'client_secret', 'scope', 'token', 'backbone_user', 'workstation', 'x'), fc.oneof(fc.constantFrom('client_credentials', demo.treasury.clientId, demo.treasury.secret), oddStrings)),
  { maxLength: 6 },
);

const cases: fc.Arbitrary<Case> = fc.record({
  endpoint: fc.constantFrom<Case['endpoint']>('token', 'introspect', 'jwks', 'discovery', 'initiate', 'initiate', 'retrieve', 'retrieveSingular', 'loan', 'loan', 'operation'),
  mutations: fc.array(mutation, { maxLength: 3 }),
  id: idVariants,
  contentType: contentTypes,
  correlationId: correlationIds,
  auth: auths,
  form: formParameters,
});

function requestOf(c: Case, token: string): FuzzRequest {
  const headers: Array<[string, string]> = [];
  const bearer = () => {
    if (c.auth === 'valid') headers.push(['authorization', `Bearer ${token}`]);
    if (c.auth === 'garbage') headers.push(['authorization', 'Bearer not-a.jwt']);
    if (c.auth === 'basic') headers.push(['authorization', 'Basic Zm9vOmJhcg==']);
    if (c.auth === 'twice') headers.push(['authorization', `Bearer ${token}`], ['authorization', `Bearer ${token}`]);
  };
  const form = (pairs: Array<[string, string]>) => pairs.map(([key, value]) => `${encodeURIComponent(key)}=${encodeURIComponent(value.replace(/[\ud800-\udfff]/g, 'x'))}`).join('&');
  switch (c.endpoint) {
    case 'token':
      headers.push(['content-type', c.contentType === 'application/json' ? 'application/x-www-form-urlencoded' : c.contentType]);
      return { method: 'POST', path: `${realmPath}/token`, headers, body: form([['grant_type', 'client_credentials'], ...c.form]) };
    case 'introspect':
      headers.push(['content-type', 'application/x-www-form-urlencoded'], ['authorization', `Basic ${Buffer.from(`${demo.treasury.clientId}:${demo.treasury.secret}`).toString('base64')}`]);
      return { method: 'POST', path: `${realmPath}/token/introspect`, headers, body: form([['token', c.auth === 'valid' ? token : c.id], ...c.form]) };
    case 'jwks':
      return { method: 'GET', path: c.auth === 'valid' ? `${realmPath}/certs` : `/realms/${c.id}/protocol/openid-connect/certs`, headers, body: undefined };
    case 'discovery':
      return { method: 'GET', path: c.auth === 'valid' ? `/realms/${demo.realm}/.well-known/openid-configuration` : `/realms/${c.id}/.well-known/openid-configuration`, headers, body: undefined };
    case 'initiate':
    case 'loan': {
      bearer();
      headers.push(['content-type', c.contentType], ['x-correlation-id', c.correlationId]);
      const path = c.endpoint === 'initiate' ? '/v1/term-deposits/initiate' : `/v1/merchandising-loan/${c.mutations.length === 0 ? '7000000001' : c.id}/repayment-schedules/1/execute`;
      return { method: 'POST', path, headers, body: mutatedJson(c.endpoint === 'initiate' ? depositBody(1) : loanBody(), c.mutations) };
    }
    case 'retrieve':
    case 'retrieveSingular':
      bearer();
      return { method: 'GET', path: `/v1/${c.endpoint === 'retrieve' ? 'term-deposits' : 'term-deposit'}/${c.id}/retrieve`, headers, body: undefined };
    case 'operation':
      bearer();
      return { method: 'GET', path: `/v1/operations/${c.id}`, headers, body: undefined };
  }
}

// --- invariants --------------------------------------------------------------------------------

const recordKeys = new Set(['status', 'reason', 'message', 'path', 'errordetail']);

function assertAnswerShape(request: FuzzRequest, answer: Answer): void {
  assert.ok(answer.status < 500, `a ${answer.status} for input: ${answer.text.slice(0, 300)}`);
  if (answer.status < 400) return;
  assert.match(answer.contentType, /^application\/json/, `an error that is not JSON: ${answer.text.slice(0, 200)}`);
  const body = JSON.parse(answer.text) as Record<string, any>;
  if (!request.path.startsWith('/v1')) {
    assert.equal(typeof body.error, 'string', `an OAuth error without "error": ${answer.text.slice(0, 200)}`);
    return;
  }
  const wrapped = Object.keys(body).length === 1 && typeof body.error === 'object';
  if (wrapped) assert.ok(request.path.startsWith('/v1/merchandising-loan/'), 'only the loan operation wraps its record');
  const record = wrapped ? body.error : body;
  for (const key of Object.keys(record)) assert.ok(recordKeys.has(key), `an undocumented member "${key}" in ${answer.text.slice(0, 200)}`);
  assert.equal(record.status, answer.status);
  assert.equal(record.reason, reasonByStatus[answer.status]);
  assert.equal(typeof record.message, 'string');
  assert.equal(typeof record.path, 'string');
  if (record.errordetail !== undefined) {
    assert.ok(Array.isArray(record.errordetail) && record.errordetail.length > 0);
    for (const detail of record.errordetail) assert.match(detail.code, /^(TD|ML)-\d{3}-\d{3}$/);
  }
}

async function balances(server: TestServer): Promise<string> {
  const rows = await embedded(server.coregate.store.db).selectFrom('accounts').select(['account_number', 'balance_minor']).orderBy('account_number').execute();
  return rows.map((row) => `${row.account_number}=${String(row.balance_minor)}`).join(',');
}

describeEachStore('fuzzer: every endpoint, valid-shaped and mutated requests', ({ server }) => {
  test(`no input gets a 5xx, every error has its documented shape, no refused request moves money (${runs} cases)`, async () => {
    const token = await demoToken(server());
    await fc.assert(
      fc.asyncProperty(cases, async (c) => {
        const request = requestOf(c, token);
        const before = await balances(server());
        const answer = await send(server(), request);
        assertAnswerShape(request, answer);
        if (answer.status >= 300) assert.equal(await balances(server()), before, `a refused request (${answer.status}) changed a balance`);
      }),
      { numRuns: runs, ...(seed === undefined ? {} : { seed }), endOnFailure: false },
    );
    const ready = await fetch(`${server().url}/health/ready`);
    assert.equal(ready.status, 200, 'the service stays ready');
    await server().coregate.chainer.idle();
    const report = await checkEverything(server().coregate.store, coreRecords(coreTablesOf(server().coregate.store.db)), 3600, { masterKey: undefined });
    assert.equal(report.ok, true, JSON.stringify(report).slice(0, 500));
  });
});
