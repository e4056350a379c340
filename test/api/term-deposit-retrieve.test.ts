/**
 * GET /v1/term-deposits/{id}/retrieve and /v1/term-deposit/{id}/retrieve (docs/term-deposits.md,
 * "Decisions"): the initiation fields plus termDepositStatus and the interest expected at
 * maturity (principal × rateValue/100 × days / basis, half-up to the minor unit), checked against
 * hand-computed values; 404, 401, 403 and the clients of the demo data; on each store, over real
 * HTTP with real tokens from the token endpoint.
 */
// @deployments remote-core
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, test } from 'node:test';
import { toBigInt } from '../../src/store/bigint.js';
import { openStore, type Store } from '../../src/store/connect.js';
import { depositBodyWithTerms, type DepositTerms, initiationResponseFields } from '../helpers/bodies.js';
import { readDemoData, writeTempDataFile, type SandboxData } from '../helpers/data-files.js';
import { send, type HttpResult } from '../helpers/http.js';
import { demo, type TestServer } from '../helpers/server.js';
import { describeEachStore } from '../helpers/suite.js';
import { cachedTokens, type TokenRequest } from '../helpers/tokens.js';
import { embedded } from '../helpers/stores.js';
import { assertErrorRecord as assertRecord } from '../helpers/error-record.js';

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

type TokenName = 'treasury' | 'branch' | 'reporting' | 'treasuryInitiateOnly';

const tokenRequests: Record<TokenName, TokenRequest> = {
  treasury: { client: demo.treasury, extra: {} },
  branch: { client: demo.branch, extra: {} },
  reporting: { client: demo.reporting, extra: {} },
  treasuryInitiateOnly: { client: demo.treasury, extra: { scope: 'termDeposit:initiate' } },
};

interface CallOptions {
  /** A named token (default: treasury), or null for no Authorization header. */
  token?: TokenName | null;
  /** Raw Authorization header, overriding `token`. */
  authorization?: string;
}

function apiClient(server: () => TestServer) {
  const token = cachedTokens(server, tokenRequests);
  async function call(method: 'GET' | 'POST', path: string, body: unknown, options: CallOptions = {}): Promise<HttpResult> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (options.authorization !== undefined) headers.authorization = options.authorization;
    else if (options.token !== null) headers.authorization = `Bearer ${await token(options.token ?? 'treasury')}`;
    const init: RequestInit = { method, headers };
    if (method === 'POST') {
      headers['content-type'] = 'application/json';
      // A fresh correlation id per initiation keeps the duplicate rules out of these tests.
      headers['x-correlation-id'] = `td-retrieve-${randomUUID()}`;
      init.body = JSON.stringify(body);
    }
    return send(`${server().url}${path}`, init);
  }
  return {
    token,
    initiate: (body: unknown, options?: CallOptions) => call('POST', '/v1/term-deposits/initiate', body, options),
    retrieve: (id: string, options: CallOptions & { singular?: boolean } = {}) => call('GET', retrievePath(id, options.singular), undefined, options),
  };
}

function retrievePath(id: string, singular = false): string {
  return `/v1/${singular ? 'term-deposit' : 'term-deposits'}/${encodeURIComponent(id)}/retrieve`;
}

type Terms = Omit<DepositTerms, 'customer' | 'interest' | 'description'>;

/** Interest is settled to the source account, so that each body touches one account. */
function tdBody(terms: Terms = {}): Record<string, any> {
  return depositBodyWithTerms({ ...terms, interest: terms.source, description: 'coregate retrieve test' });
}

/** The error record (test/helpers/error-record.ts) with a documented code. */
function assertErrorRecord(response: HttpResult, status: number, code: string, path: string): void {
  assertRecord(response, { status, code, path });
}

const initiationFields = initiationResponseFields;
/** The retrieve body: the initiation fields, termDepositStatus, expectedInterestAmount; the rate may be echoed. */
const retrieveFields = new Set([...initiationFields, 'termDepositStatus', 'expectedInterestAmount', 'interestRate']);

/**
 * Checks a retrieve answer against the initiation answer: every initiation field equal, status
 * Active, and the expected interest exactly `interest` in the principal's currency.
 */
function assertRetrieved(retrieved: HttpResult, initiated: HttpResult, interest: number, rate: number): void {
  assert.equal(retrieved.status, 200, JSON.stringify(retrieved.body));
  for (const key of Object.keys(retrieved.body)) assert.ok(retrieveFields.has(key), `unexpected field ${key}`);
  for (const key of initiationFields) assert.deepEqual(retrieved.body[key], initiated.body[key], `field ${key} as at initiation`);
  assert.equal(retrieved.body.termDepositStatus, 'Active');
  assert.deepEqual(retrieved.body.expectedInterestAmount, {
    amountValue: interest,
    amountCurrency: { currencycode: initiated.body.principalAmount.amountCurrency.currencycode },
  });
  if ('interestRate' in retrieved.body) assert.deepEqual(retrieved.body.interestRate, { rateValue: rate, rateType: 'Nominal' });
}

// ---------------------------------------------------------------------------------------------
// Retrieve on the demo data
// ---------------------------------------------------------------------------------------------

describeEachStore('term deposit retrieve', ({ server, dbUrl }) => {
  const api = apiClient(server);
  let store: Store | undefined;
  after(async () => {
    await store?.close().catch(() => {});
  });
  const db = async () => (store ??= await openStore(dbUrl())).db;

  async function constitute(terms: Terms, options?: CallOptions): Promise<HttpResult> {
    const response = await api.initiate(tdBody(terms), options);
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response;
  }

  test('GET /v1/term-deposits/{id}/retrieve: the initiation fields, termDepositStatus Active and the expected interest', async () => {
    const initiated = await constitute({ amount: 10000, rate: 5.25, days: 30 });
    const retrieved = await api.retrieve(initiated.body.termDepositAccount);
    assertRetrieved(retrieved, initiated, 43.75, 5.25);
    assert.deepEqual(retrieved.body.termDepositPeriod, { numberOfDays: 30, maturityDate: '2026-04-01' });
  });

  test('GET /v1/term-deposit/{id}/retrieve (singular spelling) answers the same body', async () => {
    const initiated = await constitute({ amount: 10000, rate: 5.25, days: 30 });
    const plural = await api.retrieve(initiated.body.termDepositAccount);
    const singular = await api.retrieve(initiated.body.termDepositAccount, { singular: true });
    assertRetrieved(singular, initiated, 43.75, 5.25);
    assert.deepEqual(singular.body, plural.body);
  });

  // Expected interest, ACT/360 (TDFIX), computed by hand:
  //   10000.00 × 5.25/100 × 30/360 = 43.75 exactly.
  //   1005.00 × 1/100 × 36/360 = 1.005 → half-up 1.01 (truncation or half-even give 1.00; binary
  //     floats give 1.0049999… or 1.0050000…1, so only exact arithmetic is reliably 1.01).
  //   12345.67 × 4.75/100 × 91/360 = 148.2337… → 148.23: 90 days from 2026-03-02 end on Sunday
  //     2026-05-31, rolled to Monday 2026-06-01, so the term is 91 days (90 days would give 146.60).
  //   EUR 2000.00 × 2.5/100 × 45/360 = 6.25 EUR.
  const interestCases: Array<{ title: string; terms: Terms; interest: number; days: number; maturity: string }> = [
    { title: '10000.00 USD at 5.25 % for 30 days = 43.75', terms: { amount: 10000, rate: 5.25, days: 30 }, interest: 43.75, days: 30, maturity: '2026-04-01' },
    { title: '1005.00 USD at 1 % for 36 days = 1.005, half-up to 1.01', terms: { amount: 1005, rate: 1, days: 36 }, interest: 1.01, days: 36, maturity: '2026-04-07' },
    {
      title: '12345.67 USD at 4.75 % for 90 days, rolled to 91 days = 148.2337 → 148.23',
      terms: { amount: 12345.67, rate: 4.75, days: 90 },
      interest: 148.23,
      days: 91,
      maturity: '2026-06-01',
    },
    {
      title: '2000.00 EUR at 2.5 % for 45 days = 6.25 EUR',
      terms: { amount: 2000, currency: 'EUR', source: '1000000003', rate: 2.5, days: 45 },
      interest: 6.25,
      days: 45,
      maturity: '2026-04-16',
    },
  ];
  for (const { title, terms, interest, days, maturity } of interestCases) {
    test(`expected interest, ACT/360: ${title}`, async () => {
      const initiated = await constitute(terms);
      assert.deepEqual(initiated.body.termDepositPeriod, { numberOfDays: days, maturityDate: maturity });
      assertRetrieved(await api.retrieve(initiated.body.termDepositAccount), initiated, interest, terms.rate ?? 0);
    });
  }

  test('expected interest, half-up on the singular spelling too: 1005.00 at 1 % for 36 days = 1.01', async () => {
    const initiated = await constitute({ amount: 1005, rate: 1, days: 36 });
    const retrieved = await api.retrieve(initiated.body.termDepositAccount, { singular: true });
    assert.equal(retrieved.body.expectedInterestAmount.amountValue, 1.01);
  });

  test('the retrieved contract is the stored one: principal, maturity and days as in the store', async () => {
    const initiated = await constitute({ amount: 12345.67, rate: 4.75, days: 90 });
    const retrieved = await api.retrieve(initiated.body.termDepositAccount);
    const row = await embedded(await db()).selectFrom('term_deposits').selectAll().where('contract_number', '=', initiated.body.termDepositAccount).executeTakeFirstOrThrow();
    assert.equal(toBigInt(row.principal_minor), 1234567n);
    assert.equal(retrieved.body.principalAmount.amountValue, 12345.67);
    assert.equal(row.maturity_date, retrieved.body.termDepositPeriod.maturityDate);
    assert.equal(row.number_of_days, retrieved.body.termDepositPeriod.numberOfDays);
  });

  test('retrieving is safe: balances, contracts and movements are unchanged', async () => {
    const initiated = await constitute({ amount: 1000 });
    const snapshot = async () => ({
      balances: await embedded(await db()).selectFrom('accounts').select(['account_number', 'balance_minor']).orderBy('account_number').execute(),
      contracts: (await embedded(await db()).selectFrom('term_deposits').select('contract_number').execute()).length,
      movements: (await embedded(await db()).selectFrom('movements').select('id').execute()).length,
    });
    const before = await snapshot();
    assert.equal((await api.retrieve(initiated.body.termDepositAccount)).status, 200);
    assert.equal((await api.retrieve(initiated.body.termDepositAccount, { singular: true })).status, 200);
    assert.deepEqual(await snapshot(), before);
  });

  // ----- 404 -----

  test('TD 404: unknown id (TD-404-004)', async () => {
    const response = await api.retrieve('TD000000000000000');
    assertErrorRecord(response, 404, 'TD-404-004', `GET ${retrievePath('TD000000000000000')}`);
  });

  test('TD 404: unknown id on the singular spelling (TD-404-004), path as requested', async () => {
    const response = await api.retrieve('TD999999999999999', { singular: true });
    assertErrorRecord(response, 404, 'TD-404-004', `GET ${retrievePath('TD999999999999999', true)}`);
  });

  test('TD 404: a customer account number is not a term deposit (TD-404-004)', async () => {
    assertErrorRecord(await api.retrieve('1000000001'), 404, 'TD-404-004', `GET ${retrievePath('1000000001')}`);
  });

  // ----- clients and scopes -----

  test('the reporting-app client (termDeposit:retrieve only) can retrieve a deposit', async () => {
    const initiated = await constitute({ amount: 10000, rate: 5.25, days: 30 });
    assertRetrieved(await api.retrieve(initiated.body.termDepositAccount, { token: 'reporting' }), initiated, 43.75, 5.25);
    assertRetrieved(await api.retrieve(initiated.body.termDepositAccount, { token: 'reporting', singular: true }), initiated, 43.75, 5.25);
  });

  test('TD 403: the reporting-app client gets 403 on initiate (TD-403-001) and nothing is debited', async () => {
    const balance = async () => toBigInt((await embedded(await db()).selectFrom('accounts').select('balance_minor').where('account_number', '=', '1000000001').executeTakeFirstOrThrow()).balance_minor);
    const before = await balance();
    const response = await api.initiate(tdBody(), { token: 'reporting' });
    assertErrorRecord(response, 403, 'TD-403-001', 'POST /v1/term-deposits/initiate');
    assert.match(response.headers.get('www-authenticate') ?? '', /error="insufficient_scope"/);
    assert.equal(await balance(), before);
  });

  test('TD 403: a token narrowed to termDeposit:initiate cannot retrieve (TD-403-001)', async () => {
    const initiated = await constitute({}, { token: 'treasuryInitiateOnly' });
    const response = await api.retrieve(initiated.body.termDepositAccount, { token: 'treasuryInitiateOnly' });
    assertErrorRecord(response, 403, 'TD-403-001', `GET ${retrievePath(initiated.body.termDepositAccount)}`);
    assert.match(response.headers.get('www-authenticate') ?? '', /scope="termDeposit:retrieve"/);
  });

  test('TD 401: retrieve without a token (TD-401-001), with WWW-Authenticate: Bearer', async () => {
    const initiated = await constitute({});
    for (const singular of [false, true]) {
      const response = await api.retrieve(initiated.body.termDepositAccount, { token: null, singular });
      assertErrorRecord(response, 401, 'TD-401-001', `GET ${retrievePath(initiated.body.termDepositAccount, singular)}`);
      assert.match(response.headers.get('www-authenticate') ?? '', /^Bearer /);
    }
  });

  test('TD 401: retrieve with an invalid token (TD-401-002)', async () => {
    const initiated = await constitute({});
    const response = await api.retrieve(initiated.body.termDepositAccount, { authorization: 'Bearer not.a.jwt' });
    assertErrorRecord(response, 401, 'TD-401-002', `GET ${retrievePath(initiated.body.termDepositAccount)}`);
    assert.match(response.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
  });

  test('TD 401: an unknown id without a token is 401, not 404 (authentication first)', async () => {
    assertErrorRecord(await api.retrieve('TD000000000000000', { token: null }), 401, 'TD-401-001', `GET ${retrievePath('TD000000000000000')}`);
  });

  test('the branch-portal client (no technical user) initiates and retrieves', async () => {
    const initiated = await constitute({ amount: 10000, rate: 5.25, days: 30 }, { token: 'branch' });
    assertRetrieved(await api.retrieve(initiated.body.termDepositAccount, { token: 'branch' }), initiated, 43.75, 5.25);
    assertRetrieved(await api.retrieve(initiated.body.termDepositAccount, { token: 'branch', singular: true }), initiated, 43.75, 5.25);
  });
});

// ---------------------------------------------------------------------------------------------
// ACT/365: the basis is the product's dayCount (docs/term-deposits.md, "Decisions")
// ---------------------------------------------------------------------------------------------

/** The demo data plus an active ACT/365 product (the demo's only ACT/365 product is inactive). */
function act365DataFile(): string {
  const data = readDemoData<SandboxData>();
  data.termDepositProducts.push({
    productCode: 'TDYEAR',
    componentCode: 'TD365',
    active: true,
    currencies: ['USD'],
    minAmount: 1000,
    maxAmount: 1000000,
    minDays: 30,
    maxDays: 400,
    dayCount: 'ACT/365',
  });
  return writeTempDataFile(data, 'coregate-td-retrieve-');
}

describeEachStore(
  'term deposit retrieve: ACT/365 product',
  ({ server }) => {
    const api = apiClient(server);
    const act365 = { product: 'TDYEAR', component: 'TD365' };

    // 1002.50 × 1/100 × 73/365 = 2.005 → half-up 2.01 (ACT/360 would give 2.0328 → 2.03).
    test('expected interest, ACT/365: 1002.50 USD at 1 % for 73 days = 2.005, half-up to 2.01', async () => {
      const initiated = await api.initiate(tdBody({ ...act365, amount: 1002.5, rate: 1, days: 73 }));
      assert.equal(initiated.status, 200, JSON.stringify(initiated.body));
      assert.deepEqual(initiated.body.termDepositPeriod, { numberOfDays: 73, maturityDate: '2026-05-14' });
      assertRetrieved(await api.retrieve(initiated.body.termDepositAccount), initiated, 2.01, 1);
    });

    // 50000.00 × 3.65/100 × 100/365 = 500.00 exactly.
    test('expected interest, ACT/365: 50000.00 USD at 3.65 % for 100 days = 500.00', async () => {
      const initiated = await api.initiate(tdBody({ ...act365, amount: 50000, rate: 3.65, days: 100 }));
      assert.equal(initiated.status, 200, JSON.stringify(initiated.body));
      assert.deepEqual(initiated.body.termDepositPeriod, { numberOfDays: 100, maturityDate: '2026-06-10' });
      assertRetrieved(await api.retrieve(initiated.body.termDepositAccount, { singular: true }), initiated, 500, 3.65);
    });
  },
  { data: act365DataFile() },
);
