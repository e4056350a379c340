/**
 * POST /v1/term-deposits/initiate: every rule of docs/term-deposits.md, "Checks, in order" and
 * "Decisions", every status of docs/errors.md, and docs/api.md, "Money", on each
 * store, over real HTTP with real tokens from the token endpoint. Every refusal is also checked
 * against the store: a request refused for any reason changes no balance and creates no contract.
 */
// @deployments remote-core two-instances
// @starts-early: among the slowest files of a quiet run
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, test } from 'node:test';
import { toBigInt } from '../../src/store/bigint.js';
import { openStore, type Store } from '../../src/store/connect.js';
import { checkLedger } from '../../src/reference-core/storage/ledger.js';
import { depositBodyWithTerms as tdBody, type DepositTerms as Terms, initiationResponseFields } from '../helpers/bodies.js';
import { FaultyCore } from '../helpers/faulty-core.js';
import { FakeClock } from '../helpers/fake-clock.js';
import { initiatePath, send, type HttpResult } from '../helpers/http.js';
import { demo, type TestServer } from '../helpers/server.js';
import { describeEachStore } from '../helpers/suite.js';
import { cachedTokens, type TokenRequest } from '../helpers/tokens.js';
import { coreTablesOf } from '../../src/reference-core/storage/core-db.js';
import { embedded } from '../helpers/stores.js';
import { assertErrorRecord as assertRecord } from '../helpers/error-record.js';

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

const errorPath = `POST ${initiatePath}`;

interface CallOptions {
  /** A named token (default: treasury), or null for no Authorization header. */
  token?: TokenName | null;
  /** Raw Authorization header, overriding `token`. */
  authorization?: string;
  /** undefined: a fresh unique id; null: no header. */
  correlationId?: string | null;
  headers?: Record<string, string>;
  /** Sent as-is instead of JSON.stringify(body). */
  raw?: string;
}

type TokenName = 'treasury' | 'branch' | 'reporting' | 'treasuryRetrieveOnly' | 'disabledUser' | 'disabledWorkstation';

const tokenRequests: Record<TokenName, TokenRequest> = {
  treasury: { client: demo.treasury, extra: {} },
  branch: { client: demo.branch, extra: {} },
  reporting: { client: demo.reporting, extra: {} },
  treasuryRetrieveOnly: { client: demo.treasury, extra: { scope: 'termDeposit:retrieve' } },
  disabledUser: { client: demo.treasury, extra: { username: 'former-clerk' } },
  disabledWorkstation: { client: demo.treasury, extra: { username: 'jdoe', workstation: 'WS-RETIRED-02' } },
};

/** Tokens are cached per suite and renewed well before their 300 s expire (docs/auth.md, "A client's secret and tokens"). */
function apiClient(server: () => TestServer) {
  const token = cachedTokens(server, tokenRequests);
  async function call(method: 'GET' | 'POST', path: string, body: unknown, options: CallOptions = {}): Promise<HttpResult> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (method === 'POST') headers['content-type'] = 'application/json';
    if (options.authorization !== undefined) headers.authorization = options.authorization;
    else if (options.token !== null) headers.authorization = `Bearer ${await token(options.token ?? 'treasury')}`;
    if (options.correlationId !== null) headers['x-correlation-id'] = options.correlationId ?? `td-test-${randomUUID()}`;
    Object.assign(headers, options.headers);
    const init: RequestInit = { method, headers };
    if (method === 'POST') init.body = options.raw ?? JSON.stringify(body);
    return send(`${server().url}${path}`, init);
  }
  return {
    token,
    initiate: (body: unknown, options?: CallOptions) => call('POST', initiatePath, body, options),
    retrieve: (id: string, options?: CallOptions & { singular?: boolean }) =>
      call('GET', `/v1/${options?.singular ? 'term-deposit' : 'term-deposits'}/${encodeURIComponent(id)}/retrieve`, undefined, options),
  };
}

/** What a refused request must leave untouched: every account and balance, contracts, movements. */
interface LedgerState {
  balances: Record<string, string>;
  termDeposits: number;
  movements: number;
  postings: number;
}

/** Reads the store the way `coregate check` does: its own connection, plain reads. */
function ledgerReader(dbUrl: () => string) {
  let store: Store | undefined;
  const db = async () => (store ??= await openStore(dbUrl())).db;
  async function count(table: 'term_deposits' | 'movements' | 'postings'): Promise<number> {
    const row = await embedded(await db()).selectFrom(table).select((eb) => eb.fn.countAll<string | number>().as('n')).executeTakeFirstOrThrow();
    return Number(row.n);
  }
  return {
    async state(): Promise<LedgerState> {
      const accounts = await embedded(await db()).selectFrom('accounts').select(['account_number', 'balance_minor']).orderBy('account_number').execute();
      return {
        balances: Object.fromEntries(accounts.map((row) => [row.account_number, toBigInt(row.balance_minor).toString()])),
        termDeposits: await count('term_deposits'),
        movements: await count('movements'),
        postings: await count('postings'),
      };
    },
    async balance(accountNumber: string): Promise<bigint> {
      const row = await embedded(await db()).selectFrom('accounts').select('balance_minor').where('account_number', '=', accountNumber).executeTakeFirstOrThrow();
      return toBigInt(row.balance_minor);
    },
    async account(accountNumber: string) {
      return embedded(await db()).selectFrom('accounts').selectAll().where('account_number', '=', accountNumber).executeTakeFirst();
    },
    async contract(contractNumber: string) {
      return embedded(await db()).selectFrom('term_deposits').selectAll().where('contract_number', '=', contractNumber).executeTakeFirst();
    },
    async postingsOf(reference: string) {
      return embedded(await db())
        .selectFrom('postings')
        .innerJoin('movements', 'movements.id', 'postings.movement_id')
        .select(['postings.account_number', 'postings.amount_minor', 'postings.currency', 'movements.description'])
        .where('movements.reference', '=', reference)
        .orderBy('postings.line')
        .execute();
    },
    async assertLedgerChecks(): Promise<void> {
      const check = await checkLedger(coreTablesOf(await db()));
      assert.deepEqual(check.unbalancedMovements, []);
      assert.deepEqual(check.balanceMismatches, []);
      assert.deepEqual(check.negativeCustomerAccounts, []);
    },
    async close(): Promise<void> {
      await store?.close().catch(() => {});
      store = undefined;
    },
  };
}

/** A valid body changed by `mutate` (for malformed and missing fields). */
function mutated(mutate: (body: Record<string, any>) => void, terms: Terms = {}): Record<string, any> {
  const body = tdBody(terms);
  mutate(body);
  return body;
}

/** The error record at top level (test/helpers/error-record.ts), with a documented code. */
function assertErrorRecord(response: HttpResult, status: number, code: string, path: string = errorPath): void {
  assertRecord(response, { status, code, path });
}

const successFields = initiationResponseFields;

function assertSuccess(response: HttpResult): void {
  assert.equal(response.status, 200, JSON.stringify(response.body));
  assert.deepEqual(Object.keys(response.body).sort(), successFields);
}

// ---------------------------------------------------------------------------------------------
// The main suite
// ---------------------------------------------------------------------------------------------

describeEachStore('term deposit initiation', ({ server, dbUrl }) => {
  const api = apiClient(server);
  const ledger = ledgerReader(dbUrl);
  after(() => ledger.close());

  /** Sends a request that must be refused, and proves that it changed nothing. */
  async function expectRefused(body: unknown, status: number, code: string, options?: CallOptions): Promise<HttpResult> {
    const before = await ledger.state();
    const response = await api.initiate(body, options);
    assertErrorRecord(response, status, code);
    assert.deepEqual(await ledger.state(), before, 'a refused request changes no balance and creates no contract');
    return response;
  }

  /** Sends a request that must succeed; answers the response and the source's debit in minor units. */
  async function expectConstituted(body: Record<string, any>, options?: CallOptions): Promise<{ response: HttpResult; debitedMinor: bigint }> {
    const source = body.sourceAccount.accountIdentification as string;
    const before = await ledger.balance(source);
    const response = await api.initiate(body, options);
    assertSuccess(response);
    return { response, debitedMinor: before - (await ledger.balance(source)) };
  }

  // ----- 200: the response and the ledger -----

  test('200: exactly the documented response fields, echoing the request', async () => {
    const correlationId = `td-happy-${randomUUID()}`;
    const body = tdBody({ amount: 10000, rate: 4.5, days: 30, description: 'Happy path deposit' });
    const response = await api.initiate(body, { correlationId });
    assertSuccess(response);
    const { termDepositAccount, operationReference, ...rest } = response.body;
    assert.equal(typeof termDepositAccount, 'string');
    assert.ok(termDepositAccount.length > 0);
    assert.equal(typeof operationReference, 'string');
    assert.ok(operationReference.length > 0);
    assert.deepEqual(rest, {
      customerReference: 'C0001',
      termDepositProduct: { productCode: 'TDFIX', componentCode: 'TD30-365' },
      principalAmount: { amountValue: 10000, amountCurrency: { currencycode: 'USD' } },
      termDepositPeriod: { numberOfDays: 30, maturityDate: '2026-04-01' },
      valueDate: '2026-03-02',
      sourceAccount: { accountIdentification: '1000000001', valueDate: '2026-03-02' },
      interestSettlementAccount: { accountIdentification: '1000000001' },
      transactionDescription: 'Happy path deposit',
    });
    assert.equal(response.headers.get('x-correlation-id'), correlationId);
  });

  test('200: the source account drops by exactly the principal, the contract account holds it, the ledger check passes', async () => {
    const before = await ledger.state();
    const response = await api.initiate(tdBody({ amount: 12500.5, description: 'Ledger check deposit' }));
    assertSuccess(response);
    const after = await ledger.state();
    const contractNumber: string = response.body.termDepositAccount;
    assert.equal(BigInt(before.balances['1000000001'] ?? '0') - BigInt(after.balances['1000000001'] ?? '0'), 1250050n);
    assert.equal(after.balances[contractNumber], '1250050');
    assert.equal(before.balances[contractNumber], undefined, 'the contract account is new');
    // No other account moved.
    for (const [account, balance] of Object.entries(before.balances)) {
      if (account !== '1000000001') assert.equal(after.balances[account], balance, `account ${account} unchanged`);
    }
    assert.equal(after.termDeposits, before.termDeposits + 1);
    assert.equal(after.movements, before.movements + 1);
    assert.equal(after.postings, before.postings + 2);

    const account = await ledger.account(contractNumber);
    assert.equal(account?.customer_reference, 'C0001');
    assert.equal(account?.currency, 'USD');
    assert.equal(account?.status, 'Active');
    const contract = await ledger.contract(contractNumber);
    assert.equal(contract?.customer_reference, 'C0001');
    assert.equal(toBigInt(contract?.principal_minor), 1250050n);
    assert.equal(contract?.currency, 'USD');
    assert.equal(contract?.maturity_date, '2026-04-01');
    assert.equal(contract?.number_of_days, 30);
    assert.equal(contract?.operation_reference, response.body.operationReference);
    const postings = await ledger.postingsOf(response.body.operationReference);
    assert.deepEqual(
      postings.map((row) => [row.account_number, toBigInt(row.amount_minor), row.currency]),
      [
        ['1000000001', -1250050n, 'USD'],
        [contractNumber, 1250050n, 'USD'],
      ],
    );
    assert.equal(postings[0]?.description, 'Ledger check deposit');
    await ledger.assertLedgerChecks();
  });

  test('200: transactionDescription omitted → the response carries the description recorded on the movement', async () => {
    const body = tdBody();
    delete body.transactionDescription;
    const response = await api.initiate(body);
    assertSuccess(response);
    assert.equal(typeof response.body.transactionDescription, 'string');
    assert.ok(response.body.transactionDescription.length > 0);
    const postings = await ledger.postingsOf(response.body.operationReference);
    assert.equal(postings[0]?.description, response.body.transactionDescription);
  });

  test('200: each initiation creates its own contract and operation reference', async () => {
    const first = await api.initiate(tdBody());
    const second = await api.initiate(tdBody());
    assertSuccess(first);
    assertSuccess(second);
    assert.notEqual(first.body.termDepositAccount, second.body.termDepositAccount);
    assert.notEqual(first.body.operationReference, second.body.operationReference);
  });

  test('a EUR principal from the EUR account 1000000003 debits that account in EUR', async () => {
    const { response, debitedMinor } = await expectConstituted(tdBody({ amount: 2500, currency: 'EUR', source: '1000000003', interest: '1000000003' }));
    assert.deepEqual(response.body.principalAmount, { amountValue: 2500, amountCurrency: { currencycode: 'EUR' } });
    assert.equal(debitedMinor, 250000n);
    const account = await ledger.account(response.body.termDepositAccount);
    assert.equal(account?.currency, 'EUR');
    assert.equal(toBigInt(account?.balance_minor), 250000n);
  });

  test('unknown extra fields are ignored (200)', async () => {
    const body = mutated((b) => {
      b.unexpected = { nested: true };
      b.principalAmount.note = 'ignored';
      b.sourceAccount.accountDescription = 'informative only';
      b.termDepositPeriod.unit = 'days';
    });
    const { response, debitedMinor } = await expectConstituted(body);
    assert.equal(debitedMinor, 100000n);
    assert.equal('unexpected' in response.body, false);
  });

  test('the recommended x-channel header is accepted', async () => {
    await expectConstituted(tdBody(), { headers: { 'x-channel': 'BACKOFFICE' } });
  });

  test('an interest settlement account other than the source, of the same customer, is accepted', async () => {
    const { response } = await expectConstituted(tdBody({ interest: '1000000002' }));
    assert.deepEqual(response.body.interestSettlementAccount, { accountIdentification: '1000000002' });
    assert.deepEqual(response.body.sourceAccount, { accountIdentification: '1000000001', valueDate: '2026-03-02' });
  });

  test('a client without technical user (branch-portal, no backbone_user claims) can initiate', async () => {
    const { debitedMinor } = await expectConstituted(tdBody(), { token: 'branch' });
    assert.equal(debitedMinor, 100000n);
  });

  // ----- the term and the maturity -----

  test('maturity from numberOfDays: value date + 30 days is a business day (2026-04-01), numberOfDays 30', async () => {
    const { response } = await expectConstituted(tdBody({ days: 30 }));
    assert.deepEqual(response.body.termDepositPeriod, { numberOfDays: 30, maturityDate: '2026-04-01' });
  });

  test('maturity from numberOfDays: a term ending on Good Friday 2026-04-03 rolls to Monday 2026-04-06; numberOfDays 33', async () => {
    const { response } = await expectConstituted(tdBody({ valueDate: '2026-03-04', days: 30 }));
    assert.deepEqual(response.body.termDepositPeriod, { numberOfDays: 33, maturityDate: '2026-04-06' });
    assert.equal(response.body.valueDate, '2026-03-04');
    assert.equal(response.body.sourceAccount.valueDate, '2026-03-04');
  });

  test('maturity from numberOfDays: a term ending on Saturday 2026-04-11 rolls to Monday 2026-04-13; numberOfDays 42', async () => {
    const { response } = await expectConstituted(tdBody({ days: 40 }));
    assert.deepEqual(response.body.termDepositPeriod, { numberOfDays: 42, maturityDate: '2026-04-13' });
  });

  test('maturity from numberOfDays: a term ending on a Friday holiday then a weekend rolls over all three days (32 → 35 days)', async () => {
    const { response } = await expectConstituted(tdBody({ days: 32 }));
    assert.deepEqual(response.body.termDepositPeriod, { numberOfDays: 35, maturityDate: '2026-04-06' });
  });

  test('the contract records the rolled maturity and the days from valueDate to maturityDate', async () => {
    const { response } = await expectConstituted(tdBody({ days: 40 }));
    const contract = await ledger.contract(response.body.termDepositAccount);
    assert.equal(contract?.maturity_date, '2026-04-13');
    assert.equal(contract?.number_of_days, 42);
  });

  test('explicit maturityDate only: the core computes numberOfDays (2026-04-01 → 30)', async () => {
    const { response } = await expectConstituted(tdBody({ maturity: '2026-04-01' }));
    assert.deepEqual(response.body.termDepositPeriod, { numberOfDays: 30, maturityDate: '2026-04-01' });
  });

  test('explicit maturityDate only: numberOfDays counts calendar days (2026-05-04 → 63)', async () => {
    const { response } = await expectConstituted(tdBody({ maturity: '2026-05-04' }));
    assert.deepEqual(response.body.termDepositPeriod, { numberOfDays: 63, maturityDate: '2026-05-04' });
  });

  test('both given and agreeing as the plain sum (30 days, 2026-04-01) → 200', async () => {
    const { response } = await expectConstituted(tdBody({ days: 30, maturity: '2026-04-01' }));
    assert.deepEqual(response.body.termDepositPeriod, { numberOfDays: 30, maturityDate: '2026-04-01' });
  });

  test('both given and agreeing as the rolled sum (32 days → holiday 2026-04-03 → 2026-04-06) → 200, numberOfDays 35', async () => {
    const { response } = await expectConstituted(tdBody({ days: 32, maturity: '2026-04-06' }));
    assert.deepEqual(response.body.termDepositPeriod, { numberOfDays: 35, maturityDate: '2026-04-06' });
  });

  test('TD 400: numberOfDays and maturityDate disagree, maturity after the sum (TD-400-011)', async () => {
    await expectRefused(tdBody({ days: 30, maturity: '2026-04-02' }), 400, 'TD-400-011');
  });

  test('TD 400: numberOfDays and maturityDate disagree, maturity after the rolled sum (TD-400-011)', async () => {
    await expectRefused(tdBody({ days: 32, maturity: '2026-04-07' }), 400, 'TD-400-011');
  });

  test('TD 400: numberOfDays and maturityDate disagree, maturity before the sum (TD-400-011)', async () => {
    await expectRefused(tdBody({ days: 40, maturity: '2026-04-01' }), 400, 'TD-400-011');
  });

  test('TD 400: no term at all, termDepositPeriod omitted (TD-400-010)', async () => {
    await expectRefused(mutated((b) => delete b.termDepositPeriod), 400, 'TD-400-010');
  });

  test('TD 400: no term at all, termDepositPeriod empty (TD-400-010)', async () => {
    await expectRefused(mutated((b) => (b.termDepositPeriod = {})), 400, 'TD-400-010');
  });

  test('TD 400: maturityDate equal to the value date (TD-400-012)', async () => {
    await expectRefused(tdBody({ maturity: '2026-03-02' }), 400, 'TD-400-012');
  });

  test('TD 400: maturityDate before the value date (TD-400-012)', async () => {
    await expectRefused(tdBody({ valueDate: '2026-03-04', maturity: '2026-03-03' }), 400, 'TD-400-012');
  });

  test('TD 422: explicit maturityDate on a Saturday (TD-422-012)', async () => {
    await expectRefused(tdBody({ maturity: '2026-04-04' }), 422, 'TD-422-012');
  });

  test('TD 422: explicit maturityDate on the calendar holiday 2026-04-03 (TD-422-012)', async () => {
    await expectRefused(tdBody({ maturity: '2026-04-03' }), 422, 'TD-422-012');
  });

  test('TD 422: term shorter than the product minimum, 29 days (TD-422-005)', async () => {
    await expectRefused(tdBody({ days: 29 }), 422, 'TD-422-005');
  });

  test('TD 422: term longer than the product maximum, 366 days (TD-422-005)', async () => {
    await expectRefused(tdBody({ days: 366 }), 422, 'TD-422-005');
  });

  test('TD 422: explicit maturityDate giving a 29-day term (TD-422-005)', async () => {
    await expectRefused(tdBody({ maturity: '2026-03-31' }), 422, 'TD-422-005');
  });

  test('term exactly at the product limits (30 and 365 days) is accepted', async () => {
    const shortest = await expectConstituted(tdBody({ days: 30 }));
    assert.equal(shortest.response.body.termDepositPeriod.numberOfDays, 30);
    const longest = await expectConstituted(tdBody({ days: 365 }));
    assert.deepEqual(longest.response.body.termDepositPeriod, { numberOfDays: 365, maturityDate: '2027-03-02' });
  });

  // ----- the value date -----

  test('TD 422: value date on a Saturday is not a business day (TD-422-010), and the message names the next one (issue 12 item 9)', async () => {
    const response = await expectRefused(tdBody({ valueDate: '2026-03-07' }), 422, 'TD-422-010');
    assert.match(response.body.message, /valueDate 2026-03-07 is not a business day: the next business day is 2026-03-09/);
  });

  test('TD 422: value date on the calendar holiday 2026-04-03 is not a business day (TD-422-010); the next one is the Monday after the weekend', async () => {
    const response = await expectRefused(tdBody({ valueDate: '2026-04-03', days: 31 }), 422, 'TD-422-010');
    assert.match(response.body.message, /the next business day is 2026-04-06/);
  });

  test('TD 422: value date before the business date 2026-03-02 (TD-422-011)', async () => {
    await expectRefused(tdBody({ valueDate: '2026-02-27' }), 422, 'TD-422-011');
  });

  // Dates are strict YYYY-MM-DD real calendar dates; 0099-03-02 is one (a Monday in
  // the proleptic Gregorian calendar), so the answer is the business-date rule, not INVALID_DATE.
  test('TD 422: value date 0099-03-02, a real calendar date long before the business date (TD-422-011)', async () => {
    await expectRefused(tdBody({ valueDate: '0099-03-02' }), 422, 'TD-422-011');
  });

  test('a value date after the business date, on a business day, is accepted', async () => {
    const { response } = await expectConstituted(tdBody({ valueDate: '2026-03-10', days: 30 }));
    assert.deepEqual(response.body.termDepositPeriod, { numberOfDays: 30, maturityDate: '2026-04-09' });
    assert.equal(response.body.valueDate, '2026-03-10');
  });

  // ----- money (docs/api.md, "Money") -----

  test('TD 400: amountValue 0 (TD-400-005)', async () => {
    await expectRefused(tdBody({ amount: 0 }), 400, 'TD-400-005');
  });

  test('TD 400: amountValue negative (TD-400-005)', async () => {
    await expectRefused(tdBody({ amount: -1000 }), 400, 'TD-400-005');
  });

  test('TD 400: USD 10.001 has more decimals than USD\'s 2 minor units (TD-400-006)', async () => {
    await expectRefused(tdBody({ amount: 10.001 }), 400, 'TD-400-006');
  });

  test('TD 400: USD 1000.001 has more decimals than USD\'s 2 minor units (TD-400-006)', async () => {
    await expectRefused(tdBody({ amount: 1000.001 }), 400, 'TD-400-006');
  });

  test('TD 400: JPY 1000.5, JPY has no minor units (TD-400-006)', async () => {
    await expectRefused(tdBody({ amount: 1000.5, currency: 'JPY' }), 400, 'TD-400-006');
  });

  test('TD 400: KWD 1000.0001 has more decimals than KWD\'s 3 minor units (TD-400-006)', async () => {
    await expectRefused(tdBody({ amount: 1000.0001, currency: 'KWD' }), 400, 'TD-400-006');
  });

  test('KWD 1000.001 (3 minor units) passes the money rules and reaches the product check (TD-422-009)', async () => {
    await expectRefused(tdBody({ amount: 1000.001, currency: 'KWD' }), 422, 'TD-422-009');
  });

  test('TD 400: more than 15 significant digits, USD 12345678901234.56 (TD-400-006)', async () => {
    await expectRefused(tdBody({ amount: 12345678901234.56 }), 400, 'TD-400-006');
  });

  test('TD 400: more than 15 significant digits, JPY 1234567890123456 (TD-400-006)', async () => {
    await expectRefused(tdBody({ amount: 1234567890123456, currency: 'JPY' }), 400, 'TD-400-006');
  });

  test('15 significant digits (USD 1234567890123.45) pass the money rules and reach the product limits (TD-422-004)', async () => {
    await expectRefused(tdBody({ amount: 1234567890123.45 }), 422, 'TD-422-004');
  });

  for (const [label, code] of [
    ['unknown code "XYZ"', 'XYZ'],
    ['lower case "usd"', 'usd'],
    ['two letters "US"', 'US'],
    ['empty string', ''],
    ['precious metal "XAU" (no minor units)', 'XAU'],
    ['withdrawn code "HRK" (inactive)', 'HRK'],
    ['numeric code "840"', '840'],
  ] as const) {
    test(`TD 400: invalid currency, ${label} (TD-400-007)`, async () => {
      await expectRefused(tdBody({ currency: code }), 400, 'TD-400-007');
    });
  }

  test('TD 400: currency spelled currencyCode instead of currencycode is a missing field (TD-400-002)', async () => {
    await expectRefused(
      mutated((b) => (b.principalAmount.amountCurrency = { currencyCode: 'USD' })),
      400,
      'TD-400-002',
    );
  });

  test('money kept exactly: 1000.10 written in the JSON debits exactly 100010 minor units', async () => {
    const raw = JSON.stringify(tdBody({ amount: 999 })).replace('"amountValue":999', '"amountValue":1000.10');
    assert.ok(raw.includes('"amountValue":1000.10'));
    const before = await ledger.balance('1000000001');
    const response = await api.initiate(undefined, { raw });
    assertSuccess(response);
    assert.equal(before - (await ledger.balance('1000000001')), 100010n);
    assert.equal(response.body.principalAmount.amountValue, 1000.1);
    assert.equal(await ledger.balance(response.body.termDepositAccount), 100010n);
  });

  for (const [amount, minor] of [
    [1000.3, 100030n],
    [10000.07, 1000007n],
    [1024.09, 102409n],
    [1024.13, 102413n],
  ] as const) {
    test(`money kept exactly, no binary float drift: ${amount} debits exactly ${minor} minor units`, async () => {
      const { response, debitedMinor } = await expectConstituted(tdBody({ amount }));
      assert.equal(debitedMinor, minor);
      assert.equal(response.body.principalAmount.amountValue, amount);
      const contract = await ledger.contract(response.body.termDepositAccount);
      assert.equal(toBigInt(contract?.principal_minor), minor);
    });
  }

  test('money kept exactly: 1000.1 then 1000.2 debit exactly 200030 minor units in total (no 0.1 + 0.2 drift)', async () => {
    const before = await ledger.balance('1000000001');
    assertSuccess(await api.initiate(tdBody({ amount: 1000.1 })));
    assertSuccess(await api.initiate(tdBody({ amount: 1000.2 })));
    assert.equal(before - (await ledger.balance('1000000001')), 200030n);
    await ledger.assertLedgerChecks();
  });

  // ----- the interest rate -----

  test('TD 400: rateValue 0 (TD-400-013)', async () => {
    await expectRefused(tdBody({ rate: 0 }), 400, 'TD-400-013');
  });

  test('TD 400: rateValue negative (TD-400-013)', async () => {
    await expectRefused(tdBody({ rate: -1.5 }), 400, 'TD-400-013');
  });

  test('TD 400: rateValue above 100, 100.01 (TD-400-013)', async () => {
    await expectRefused(tdBody({ rate: 100.01 }), 400, 'TD-400-013');
  });

  test('TD 400: rateValue above 100, 250 (TD-400-013)', async () => {
    await expectRefused(tdBody({ rate: 250 }), 400, 'TD-400-013');
  });

  test('rateValue 100 (the maximum) is accepted', async () => {
    await expectConstituted(tdBody({ rate: 100 }));
  });

  test('a small rateValue (0.01 %) is accepted', async () => {
    await expectConstituted(tdBody({ rate: 0.01 }));
  });

  // ----- 404 -----

  test('TD 404: unknown customer (TD-404-001)', async () => {
    await expectRefused(tdBody({ customer: 'C9999' }), 404, 'TD-404-001');
  });

  test('TD 404: unknown source account (TD-404-002)', async () => {
    await expectRefused(tdBody({ source: '1999999999' }), 404, 'TD-404-002');
  });

  test('TD 404: unknown interest settlement account (TD-404-003)', async () => {
    await expectRefused(tdBody({ interest: '1999999999' }), 404, 'TD-404-003');
  });

  // ----- 422 -----

  test('TD 422: blocked customer C0002 (TD-422-001)', async () => {
    await expectRefused(tdBody({ customer: 'C0002', source: '2000000001', interest: '2000000001' }), 422, 'TD-422-001');
  });

  test('TD 422: unknown product (TD-422-003)', async () => {
    await expectRefused(tdBody({ product: 'NOPROD', component: 'TD30-365' }), 422, 'TD-422-003');
  });

  test('TD 422: unknown component of an existing product (TD-422-003)', async () => {
    await expectRefused(tdBody({ product: 'TDFIX', component: 'TD90' }), 422, 'TD-422-003');
  });

  test('TD 422: inactive product/component TDOLD/TD90 (TD-422-003)', async () => {
    await expectRefused(tdBody({ product: 'TDOLD', component: 'TD90', days: 90 }), 422, 'TD-422-003');
  });

  test('TD 422: amount below the product minimum, 999.99 (TD-422-004)', async () => {
    await expectRefused(tdBody({ amount: 999.99 }), 422, 'TD-422-004');
  });

  test('TD 422: amount above the product maximum, 5000000.01 (TD-422-004)', async () => {
    await expectRefused(tdBody({ amount: 5000000.01 }), 422, 'TD-422-004');
  });

  test('TD 422: source account not active, 1000000004 is Blocked (TD-422-006)', async () => {
    await expectRefused(tdBody({ source: '1000000004' }), 422, 'TD-422-006');
  });

  test('TD 422: interest settlement account not active, 1000000004 is Blocked (TD-422-006)', async () => {
    await expectRefused(tdBody({ interest: '1000000004' }), 422, 'TD-422-006');
  });

  test('TD 422: source account of another customer (TD-422-007)', async () => {
    await expectRefused(tdBody({ source: '2000000001' }), 422, 'TD-422-007');
  });

  test('TD 422: interest settlement account of another customer (TD-422-007)', async () => {
    await expectRefused(tdBody({ interest: '2000000001' }), 422, 'TD-422-007');
  });

  test('TD 422: a term deposit contract account is not a source account of the customer (TD-422-007)', async () => {
    const { response } = await expectConstituted(tdBody({ amount: 3000 }));
    await expectRefused(tdBody({ source: response.body.termDepositAccount }), 422, 'TD-422-007');
  });

  test('TD 422: source account in EUR, principal in USD (TD-422-008)', async () => {
    await expectRefused(tdBody({ source: '1000000003' }), 422, 'TD-422-008');
  });

  test('TD 422: source account in USD, principal in EUR (TD-422-008)', async () => {
    await expectRefused(tdBody({ currency: 'EUR' }), 422, 'TD-422-008');
  });

  test('TD 422: product not offered in the currency, GBP (TD-422-009)', async () => {
    await expectRefused(tdBody({ currency: 'GBP' }), 422, 'TD-422-009');
  });

  test('TD 422: product not offered in the currency, JPY 100000 (TD-422-009)', async () => {
    await expectRefused(tdBody({ amount: 100000, currency: 'JPY' }), 422, 'TD-422-009');
  });

  test('TD 422: insufficient funds in the source account (TD-422-002)', async () => {
    const balance = await ledger.balance('1000000002');
    // 1000000002 holds 1500.00 in the demo data; ask for one cent more than it holds.
    const wantedMinor = balance + 1n > 100000n ? balance + 1n : 100000n;
    const response = await expectRefused(tdBody({ amount: Number(wantedMinor) / 100, source: '1000000002' }), 422, 'TD-422-002');
    assert.equal(response.body.errordetail[0].reason, 'INSUFFICIENT_FUNDS_SOURCE_ACCOUNT');
    assert.match(response.body.errordetail[0].message, /1000000002/);
  });

  test('TD 422: insufficient funds, 1500.01 from 1000000002 (TD-422-002)', async () => {
    const response = await expectRefused(tdBody({ amount: 1500.01, source: '1000000002' }), 422, 'TD-422-002');
    assert.equal(response.body.errordetail[0].reason, 'INSUFFICIENT_FUNDS_SOURCE_ACCOUNT');
  });

  test('TD 422: insufficient funds, a principal above 1000000001\'s whole balance (TD-422-002)', async () => {
    const balance = await ledger.balance('1000000001');
    await expectRefused(tdBody({ amount: Number(balance + 100n) / 100 }), 422, 'TD-422-002');
  });

  test('a balance exactly equal to the principal is enough; the source account ends at zero', async () => {
    const balance = await ledger.balance('1000000002');
    assert.ok(balance >= 100000n, 'the demo account 1000000002 still holds at least the product minimum');
    const { debitedMinor } = await expectConstituted(tdBody({ amount: Number(balance) / 100, source: '1000000002', interest: '1000000002' }));
    assert.equal(debitedMinor, balance);
    assert.equal(await ledger.balance('1000000002'), 0n);
    await ledger.assertLedgerChecks();
  });

  // ----- 400: malformed or missing fields -----

  const malformed: Array<[string, (body: Record<string, any>) => void, string]> = [
    ['customerReference missing', (b) => delete b.customerReference, 'TD-400-002'],
    ['customerReference empty', (b) => (b.customerReference = ''), 'TD-400-003'],
    ['customerReference a number', (b) => (b.customerReference = 1), 'TD-400-003'],
    ['termDepositProduct missing', (b) => delete b.termDepositProduct, 'TD-400-002'],
    ['productCode missing', (b) => delete b.termDepositProduct.productCode, 'TD-400-002'],
    ['componentCode missing', (b) => delete b.termDepositProduct.componentCode, 'TD-400-002'],
    ['principalAmount missing', (b) => delete b.principalAmount, 'TD-400-002'],
    ['amountValue missing', (b) => delete b.principalAmount.amountValue, 'TD-400-002'],
    ['amountValue a string "1000.00"', (b) => (b.principalAmount.amountValue = '1000.00'), 'TD-400-003'],
    ['amountValue null', (b) => (b.principalAmount.amountValue = null), 'TD-400-003'],
    ['amountCurrency missing', (b) => delete b.principalAmount.amountCurrency, 'TD-400-002'],
    ['currencycode missing', (b) => delete b.principalAmount.amountCurrency.currencycode, 'TD-400-002'],
    ['currencycode a number', (b) => (b.principalAmount.amountCurrency.currencycode = 840), 'TD-400-003'],
    ['amountType missing', (b) => delete b.principalAmount.amountType, 'TD-400-002'],
    ['amountType other than Principal', (b) => (b.principalAmount.amountType = 'Interest'), 'TD-400-003'],
    ['interestRate missing', (b) => delete b.interestRate, 'TD-400-002'],
    ['rateValue missing', (b) => delete b.interestRate.rateValue, 'TD-400-002'],
    ['rateValue a string', (b) => (b.interestRate.rateValue = '5.25'), 'TD-400-003'],
    ['rateType missing', (b) => delete b.interestRate.rateType, 'TD-400-002'],
    ['rateType other than Nominal', (b) => (b.interestRate.rateType = 'Effective'), 'TD-400-003'],
    ['valueDate missing', (b) => delete b.valueDate, 'TD-400-002'],
    ['valueDate not a real date, 2026-02-30', (b) => (b.valueDate = '2026-02-30'), 'TD-400-008'],
    ['valueDate not YYYY-MM-DD, 02/03/2026', (b) => (b.valueDate = '02/03/2026'), 'TD-400-008'],
    ['valueDate without zero padding, 2026-3-2', (b) => (b.valueDate = '2026-3-2'), 'TD-400-008'],
    ['valueDate a date-time', (b) => (b.valueDate = '2026-03-02T00:00:00Z'), 'TD-400-008'],
    ['valueDate 2100-02-29, not a leap year', (b) => (b.valueDate = '2100-02-29'), 'TD-400-008'],
    ['maturityDate not a real date, 2026-04-31', (b) => (b.termDepositPeriod = { maturityDate: '2026-04-31' }), 'TD-400-008'],
    ['numberOfDays 0', (b) => (b.termDepositPeriod = { numberOfDays: 0 }), 'TD-400-003'],
    ['numberOfDays negative', (b) => (b.termDepositPeriod = { numberOfDays: -30 }), 'TD-400-003'],
    ['numberOfDays not an integer, 1.5', (b) => (b.termDepositPeriod = { numberOfDays: 1.5 }), 'TD-400-003'],
    ['numberOfDays a string', (b) => (b.termDepositPeriod = { numberOfDays: '30' }), 'TD-400-003'],
    ['termDepositPeriod not an object', (b) => (b.termDepositPeriod = 30), 'TD-400-003'],
    ['sourceAccount missing', (b) => delete b.sourceAccount, 'TD-400-002'],
    ['sourceAccount.accountIdentification missing', (b) => delete b.sourceAccount.accountIdentification, 'TD-400-002'],
    ['sourceAccount.accountType missing', (b) => delete b.sourceAccount.accountType, 'TD-400-002'],
    ['sourceAccount.accountType other than DebitAccount', (b) => (b.sourceAccount.accountType = 'CreditAccount'), 'TD-400-003'],
    [
      'more than one source account (exactly one)',
      (b) => (b.sourceAccount = [b.sourceAccount, { accountIdentification: '1000000002', accountType: 'DebitAccount' }]),
      'TD-400-003',
    ],
    ['interestSettlementAccount missing', (b) => delete b.interestSettlementAccount, 'TD-400-002'],
    ['interestSettlementAccount.accountIdentification missing', (b) => delete b.interestSettlementAccount.accountIdentification, 'TD-400-002'],
    ['interestSettlementAccount.accountType other than CreditAccount', (b) => (b.interestSettlementAccount.accountType = 'DebitAccount'), 'TD-400-003'],
    ['transactionDescription not a string', (b) => (b.transactionDescription = 42), 'TD-400-003'],
  ];
  for (const [label, mutate, code] of malformed) {
    test(`TD 400: ${label} (${code})`, async () => {
      await expectRefused(mutated(mutate), 400, code);
    });
  }

  test('TD 400: the body is a JSON array, not an object (TD-400-002)', async () => {
    await expectRefused([tdBody()], 400, 'TD-400-002');
  });

  test('TD 400: malformed JSON (TD-400-001)', async () => {
    await expectRefused(undefined, 400, 'TD-400-001', { raw: '{"customerReference": "C0001",' });
  });

  test('TD 400: an empty body (TD-400-002)', async () => {
    await expectRefused(undefined, 400, 'TD-400-002', { raw: '' });
  });

  test('TD 400: x-correlation-id with characters outside A-Z a-z 0-9 . _ : - (TD-400-004)', async () => {
    await expectRefused(tdBody(), 400, 'TD-400-004', { correlationId: 'not allowed/id' });
  });

  test('TD 415: a body that is not application/json (TD-415-001)', async () => {
    await expectRefused(undefined, 415, 'TD-415-001', { raw: JSON.stringify(tdBody()), headers: { 'content-type': 'text/plain' } });
  });

  test('TD 413: a body over 64 KiB (TD-413-001)', async () => {
    await expectRefused(mutated((b) => (b.padding = 'x'.repeat(70_000))), 413, 'TD-413-001');
  });

  // ----- 401 / 403 (docs/api.md, "Tokens") -----

  test('TD 401: no token (TD-401-001), with WWW-Authenticate: Bearer', async () => {
    const response = await expectRefused(tdBody(), 401, 'TD-401-001', { token: null });
    assert.match(response.headers.get('www-authenticate') ?? '', /^Bearer /);
  });

  test('TD 401: a token whose signature was tampered with (TD-401-002)', async () => {
    const token = await api.token('treasury');
    const [header, payload, signature] = token.split('.');
    const tampered = `${header}.${payload}.${(signature ?? '').slice(0, -4)}${(signature ?? '').slice(-4) === 'AAAA' ? 'BBBB' : 'AAAA'}`;
    const response = await expectRefused(tdBody(), 401, 'TD-401-002', { authorization: `Bearer ${tampered}` });
    assert.match(response.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
  });

  test('TD 401: an Authorization header that is not a Bearer token (TD-401-002)', async () => {
    await expectRefused(tdBody(), 401, 'TD-401-002', { authorization: 'Basic dHJlYXN1cnk6c2VjcmV0' });
  });

  test('TD 403: the reporting-app client lacks termDeposit:initiate (TD-403-001)', async () => {
    const response = await expectRefused(tdBody(), 403, 'TD-403-001', { token: 'reporting' });
    assert.match(response.headers.get('www-authenticate') ?? '', /error="insufficient_scope"/);
  });

  test('TD 403: a treasury token narrowed to termDeposit:retrieve lacks termDeposit:initiate (TD-403-001)', async () => {
    await expectRefused(tdBody(), 403, 'TD-403-001', { token: 'treasuryRetrieveOnly' });
  });

  test('TD 403: backbone_user former-clerk is not an active user of the directory (TD-403-002)', async () => {
    await expectRefused(tdBody(), 403, 'TD-403-002', { token: 'disabledUser' });
  });

  test('TD 403: workstation WS-RETIRED-02 is not an active workstation of the directory (TD-403-003)', async () => {
    await expectRefused(tdBody(), 403, 'TD-403-003', { token: 'disabledWorkstation' });
  });

  // ----- 409 (docs/api.md, "Correlation ids and duplicates") -----

  test('TD 409: a repeated x-correlation-id is a duplicate (TD-409-001); only the first debits', async () => {
    const correlationId = `td-dup-${randomUUID()}`;
    const { response: first } = await expectConstituted(tdBody({ amount: 1111 }), { correlationId });
    const repeat = await expectRefused(tdBody({ amount: 1111 }), 409, 'TD-409-001', { correlationId });
    assert.ok(repeat.body.errordetail[0].message.includes(first.body.operationReference), 'the message names the original operation');
  });

  test('TD 409: the same body again without x-correlation-id within the window (TD-409-002)', async () => {
    const body = tdBody({ amount: 1212, description: `no correlation ${randomUUID()}` });
    await expectConstituted(body, { correlationId: null });
    await expectRefused(body, 409, 'TD-409-002', { correlationId: null });
  });

  // ----- The ledger as a whole -----

  test('after every test above the ledger check passes: balanced movements, balances equal postings, no negative customer account', async () => {
    await ledger.assertLedgerChecks();
    const state = await ledger.state();
    for (const account of ['1000000001', '1000000002', '1000000003']) assert.ok(BigInt(state.balances[account] ?? '-1') >= 0n);
    assert.equal(state.balances['1000000004'], '500000', 'the blocked account was never debited');
    assert.equal(state.balances['2000000001'], '8000000', 'the blocked customer\'s account was never debited');
  });
});

// ---------------------------------------------------------------------------------------------
// 500, 502, 504: the core fails (fault injection at the port)
// ---------------------------------------------------------------------------------------------

const faults = new FaultyCore();
const coreTimeoutMs = 2_000;
/** The instances' clock here: the 504 comes when the test moves it past the core time-out, the core's call held meanwhile. */
const faultClock = new FakeClock(Date.now());

describeEachStore(
  'term deposit initiation: core failures',
  ({ server, dbUrl }) => {
    const api = apiClient(server);
    const ledger = ledgerReader(dbUrl);
    after(() => ledger.close());

    /** `timeOut`: the call is held (hold-then-fail), the clock passes the time-out, then the held call fails and its work rolls back. */
    async function refusedWhileFaulty(status: number, code: string, timeOut = false): Promise<HttpResult> {
      const before = await ledger.state();
      const arrived = timeOut ? faults.arrived() : undefined;
      const answer = api.initiate(tdBody({ description: `fault ${randomUUID()}` }));
      if (arrived) {
        await arrived;
        faultClock.advance(coreTimeoutMs);
      }
      const response = await answer;
      assertErrorRecord(response, status, code);
      if (timeOut) {
        // The core's late failure, then its rollback, must leave nothing.
        faults.release();
        for (const instance of server().instances) await instance.background.execution.idle();
      }
      assert.deepEqual(await ledger.state(), before, 'a refused request changes no balance and creates no contract');
      return response;
    }

    test('TD 500: an unexpected failure in the core answers 500 INTERNAL_ERROR (TD-500-001) and changes nothing', async () => {
      const response = await faults.withFault({ kind: 'crash', error: new TypeError('injected: the core adapter failed unexpectedly') }, () => refusedWhileFaulty(500, 'TD-500-001'));
      assert.equal(response.body.message.includes('injected'), false, 'the cause stays in the log, not in the answer');
    });

    test('TD 502: the core is unavailable (TD-502-001) and nothing changes', async () => {
      faults.fault = { kind: 'unavailable' };
      try {
        await refusedWhileFaulty(502, 'TD-502-001');
      } finally {
        faults.fault = { kind: 'none' };
      }
    });

    test('TD 504: the core does not answer in time and then fails (TD-504-001); nothing changes', async () => {
      faults.fault = { kind: 'hold-then-fail' };
      try {
        await refusedWhileFaulty(504, 'TD-504-001', true);
      } finally {
        faults.fault = { kind: 'none' };
      }
    });

    test('a healthy core after the faults constitutes normally and the ledger check passes', async () => {
      const before = await ledger.balance('1000000001');
      const response = await api.initiate(tdBody({ amount: 1000 }));
      assertSuccess(response);
      assert.equal(before - (await ledger.balance('1000000001')), 100000n);
      await ledger.assertLedgerChecks();
    });
  },
  { wrapCore: faults.wrap, clock: faultClock, flags: { coreTimeoutMs: String(coreTimeoutMs) } },
);
