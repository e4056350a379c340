/**
 * POST /v1/merchandising-loan/{merchandisingLoanId}/repayment-schedules/{installmentSequence}/execute
 * (docs/loans.md; docs/api.md, "Correlation ids and duplicates" and "200, 202, 204"): every rule and
 * every error status, each refusal checked for its wrapped record ({"error": {...}}) and for
 * changing nothing (balances, installments, facility totals, movements, executions, read from the
 * store with openStore), the charges to the cent, 200 / 202 / 204, and 502 / 504 from the core with
 * reconciliation on repeat. Real HTTP against a started server, real tokens, on each store.
 */
// @deployments remote-core two-instances
// @starts-early: among the slowest files of a quiet run
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { toBigInt } from '../../src/store/bigint.js';
import { checkLedger } from '../../src/reference-core/storage/ledger.js';
import { depositBody } from '../helpers/bodies.js';
import { c0001Account, c0001Facility, readDemoData, writeTempDataFile, type SandboxData } from '../helpers/data-files.js';
import { FaultyCore } from '../helpers/faulty-core.js';
import { initiatePath, uuidPattern } from '../helpers/http.js';
import { demo, demoToken, type TestServer } from '../helpers/server.js';
import { withDb, withStore } from '../helpers/stores.js';
import { describeEachStore, type SuiteContext } from '../helpers/suite.js';
import { reconcilerIdle } from '../helpers/reconciler.js';
import { FakeClock } from '../helpers/fake-clock.js';
import { runPendingWorkers } from '../helpers/background.js';
import { findOperation, type OperationRecord } from '../../src/store/operations.js';
import { coreTablesOf } from '../../src/reference-core/storage/core-db.js';
import { assertErrorRecord } from '../helpers/error-record.js';

// ---------------------------------------------------------------------------------------------
// The data: the demo file plus a funded expense account, a poor one, a closed facility, a
// facility with a small approved limit and a facility with ten installments for the successes.
// ---------------------------------------------------------------------------------------------

/** The demo facility: USD, limit 100 000.00, installments 3 × 20 000.00, final maturity 2026-12-31. */
const demoFacility = '7000000001';
const closedFacility = '7000000002';
/** Approved limit 1 000.00, one installment of 5 000.00. */
const smallLimitFacility = '7000000003';
/** Ten installments of 20 000.00, limit 1 000 000.00, the demo facility's charges. */
const workhorse = '7000000004';

/** C0001, USD 250 000.00. */
const payer = '1000000001';
/** C0001, USD 1 500.00. */
const lowFunds = '1000000002';
/** C0001, EUR. */
const eurAccount = '1000000003';
/** C0001, USD, Blocked. */
const blockedAccount = '1000000004';
/** C0002's USD account. */
const otherCustomersAccount = '2000000001';
/** C0001, USD 10 000.00: pays the charges in most tests, so that its drop is exactly the charges. */
const expenseAccount = '1000000010';
/** C0001, USD 20.00: less than the smallest possible charges (10.00 + 25.00 + 5.60). */
const poorExpenseAccount = '1000000011';

const commissionIncome = 'INCOME-COMMISSION-USD';
const feeIncome = 'INCOME-FEE-USD';
const taxPayable = 'TAX-PAYABLE-USD';

const utcDateTimePattern = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

function writeLoanDataFile(): string {
  const data = readDemoData<SandboxData>();
  data.accounts.push(c0001Account(expenseAccount, 10_000.0), c0001Account(poorExpenseAccount, 20.0));
  const facility = c0001Facility;
  data.merchandisingLoans.push(
    facility(closedFacility, { approvedLimit: 50_000.0, status: 'Closed', installments: [{ sequence: 1, dueDate: '2026-04-30', amount: 10_000.0 }] }),
    facility(smallLimitFacility, { approvedLimit: 1_000.0, status: 'Active', installments: [{ sequence: 1, dueDate: '2026-04-30', amount: 5_000.0 }] }),
    facility(workhorse, {
      approvedLimit: 1_000_000.0,
      status: 'Active',
      installments: Array.from({ length: 10 }, (_, index) => ({
        sequence: index + 1,
        dueDate: `2026-${String(index + 3).padStart(2, '0')}-28`,
        amount: 20_000.0,
      })),
    }),
  );
  return writeTempDataFile(data, 'coregate-loans-');
}

const loanDataFile = writeLoanDataFile();

// ---------------------------------------------------------------------------------------------
// Requests
// ---------------------------------------------------------------------------------------------

interface HttpResult {
  status: number;
  headers: Headers;
  text: string;
  body: any;
}

interface BodyOptions {
  /** The amount; null omits loanAmount (the whole outstanding). */
  amount?: number | null;
  currency?: string;
  /** merchandisingLoanFacilityReference.loanInstallmentSequence; omitted when undefined. */
  sequence?: number;
  payment?: string;
  expense?: string;
  parameterType?: string;
  loanType?: string;
  maturity?: { dateContent: string; dateType: string };
  /** Replaces accountReferences entirely: [role, account number] pairs. */
  accounts?: Array<[string, string]>;
}

function loanBody(options: BodyOptions = {}): Record<string, unknown> {
  const reference: Record<string, unknown> = {};
  if (options.maturity) reference.loanMaturityDate = options.maturity;
  if (options.sequence !== undefined) reference.loanInstallmentSequence = options.sequence;
  if (options.amount !== null) {
    reference.loanAmount = { amountValue: options.amount ?? 1000, amountCurrency: { currencyCode: options.currency ?? 'USD' } };
  }
  const accounts = options.accounts ?? [
    ['PaymentAccount', options.payment ?? payer],
    ['ExpenseAccount', options.expense ?? expenseAccount],
  ];
  return {
    merchandisingLoanFacilityParameterType: options.parameterType ?? 'DocumentaryRemittance',
    merchandisingLoanType: options.loanType ?? 'CRDE',
    merchandisingLoanFacilityReference: reference,
    accountReferences: accounts.map(([role, identifierValue]) => ({
      accountIdentification: { accountIdentificationType: role, accountDescription: `${role} of the test`, identifierValue },
    })),
  };
}

function executePath(loanId: string, sequence: number | string): string {
  return `/v1/merchandising-loan/${loanId}/repayment-schedules/${sequence}/execute`;
}

interface ExecuteOptions {
  /** A token; null sends no Authorization header. */
  token: string | null;
  loanId?: string;
  sequence?: number | string;
  body?: unknown;
  /** Exact bytes, when a test needs them. */
  raw?: string;
  /** undefined: a fresh one; null: no header. */
  correlationId?: string | null;
  prefer?: string;
  contentType?: string;
  authorization?: string;
}

async function send(url: string, init: RequestInit): Promise<HttpResult> {
  const response = await fetch(url, init);
  const text = await response.text();
  let body: any;
  if (text !== '') {
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
  }
  return { status: response.status, headers: response.headers, text, body };
}

function execute(server: TestServer, options: ExecuteOptions): Promise<HttpResult> {
  const headers: Record<string, string> = { 'content-type': options.contentType ?? 'application/json', accept: 'application/json' };
  if (options.authorization !== undefined) headers.authorization = options.authorization;
  else if (options.token !== null) headers.authorization = `Bearer ${options.token}`;
  if (options.correlationId !== null) headers['x-correlation-id'] = options.correlationId ?? `ml-${randomUUID()}`;
  if (options.prefer !== undefined) headers.prefer = options.prefer;
  const body = options.raw ?? JSON.stringify(options.body ?? loanBody());
  return send(`${server.url}${executePath(options.loanId ?? demoFacility, options.sequence ?? 3)}`, { method: 'POST', headers, body });
}

function getOperation(server: TestServer, token: string, reference: string): Promise<HttpResult> {
  return send(`${server.url}/v1/operations/${encodeURIComponent(reference)}`, { headers: { authorization: `Bearer ${token}`, accept: 'application/json' } });
}

/** A term deposit initiation (the other business operation), for the correlation namespace. */
function initiateDeposit(server: TestServer, token: string, correlationId: string): Promise<HttpResult> {
  // The shared body pays from `payer` and settles interest to `lowFunds` (1000000002).
  const body = depositBody(1_000, payer);
  return send(`${server.url}${initiatePath}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json', 'x-correlation-id': correlationId },
    body: JSON.stringify(body),
  });
}

/**
 * GET /v1/operations/{reference} once the pending workers of every instance have run their pass
 * (a 202 starts one; this awaits it), so that the operation has left Pending.
 */
async function settled(server: TestServer, token: string, reference: string): Promise<HttpResult> {
  await runPendingWorkers(server);
  const response = await getOperation(server, token, reference);
  assert.equal(response.status, 200, response.text);
  return response;
}

/** Units of work that outlived their 504 on every instance have committed, or been recorded unknown. */
async function lateWorkSettled(server: TestServer): Promise<void> {
  for (const instance of server.instances) await instance.background.execution.idle();
}

/** The API's record of an operation, as the reconciler takes it. */
async function storedOperation(server: TestServer, reference: string): Promise<OperationRecord> {
  const record = await findOperation(server.coregate.store.db, reference);
  if (!record) throw new Error(`no operation ${reference}`);
  return record;
}

// ---------------------------------------------------------------------------------------------
// The store, read on its own connection (openStore + Kysely)
// ---------------------------------------------------------------------------------------------

interface Snapshot {
  /** account number → balance in minor units */
  balances: Record<string, bigint>;
  /** "loan/sequence" → paid in minor units */
  paid: Record<string, bigint>;
  /** loan → executed total in minor units */
  executed: Record<string, bigint>;
  movements: number;
  executions: number;
}

function snapshot(dbUrl: string): Promise<Snapshot> {
  return withDb(dbUrl, async (db) => {
    const accounts = await db.selectFrom('accounts').select(['account_number', 'balance_minor']).execute();
    const installments = await db.selectFrom('loan_installments').select(['loan_id', 'sequence', 'paid_minor']).execute();
    const facilities = await db.selectFrom('loan_facilities').select(['loan_id', 'executed_total_minor']).execute();
    const movements = await db.selectFrom('movements').select((eb) => eb.fn.countAll<string | number>().as('n')).executeTakeFirstOrThrow();
    const executions = await db.selectFrom('loan_executions').select((eb) => eb.fn.countAll<string | number>().as('n')).executeTakeFirstOrThrow();
    return {
      balances: Object.fromEntries(accounts.map((row) => [row.account_number, toBigInt(row.balance_minor)])),
      paid: Object.fromEntries(installments.map((row) => [`${row.loan_id}/${Number(row.sequence)}`, toBigInt(row.paid_minor)])),
      executed: Object.fromEntries(facilities.map((row) => [row.loan_id, toBigInt(row.executed_total_minor)])),
      movements: Number(movements.n),
      executions: Number(executions.n),
    };
  });
}

async function assertLedgerClean(dbUrl: string): Promise<void> {
  const report = await withStore(dbUrl, (store) => checkLedger(coreTablesOf(store.db)));
  assert.ok(report.movements > 0, 'the ledger holds the opening balances at least');
  assert.deepEqual(report.unbalancedMovements, [], 'every movement balances');
  assert.deepEqual(report.balanceMismatches, [], 'every balance equals its postings');
  assert.deepEqual(report.negativeCustomerAccounts, [], 'no customer account is negative');
}

/** A refusal changed no balance, no installment, no facility total, wrote no movement and no execution. */
async function assertNothingChanged(dbUrl: string, before: Snapshot): Promise<void> {
  const after = await snapshot(dbUrl);
  assert.deepEqual(after.balances, before.balances, 'no balance changed');
  assert.deepEqual(after.paid, before.paid, 'no installment changed');
  assert.deepEqual(after.executed, before.executed, 'no facility total changed');
  assert.equal(after.movements, before.movements, 'no movement was posted');
  assert.equal(after.executions, before.executions, 'no execution was recorded');
  await assertLedgerClean(dbUrl);
}

interface Payment {
  loanId: string;
  sequence: number;
  amountMinor: bigint;
  payment: string;
  expense: string;
  commissionMinor: bigint;
  feeMinor: bigint;
  taxMinor: bigint;
}

/** The snapshot after exactly these payments and nothing else. */
function expectedAfter(before: Snapshot, payments: Payment[]): Snapshot {
  const balances = { ...before.balances };
  const paid = { ...before.paid };
  const executed = { ...before.executed };
  const add = (map: Record<string, bigint>, key: string, delta: bigint) => {
    map[key] = (map[key] ?? 0n) + delta;
  };
  for (const p of payments) {
    add(balances, p.payment, -p.amountMinor);
    add(balances, p.loanId, p.amountMinor);
    add(balances, p.expense, -(p.commissionMinor + p.feeMinor + p.taxMinor));
    add(balances, commissionIncome, p.commissionMinor);
    add(balances, feeIncome, p.feeMinor);
    add(balances, taxPayable, p.taxMinor);
    add(paid, `${p.loanId}/${p.sequence}`, p.amountMinor);
    add(executed, p.loanId, p.amountMinor);
  }
  return { balances, paid, executed, movements: before.movements + payments.length, executions: before.executions + payments.length };
}

async function assertApplied(dbUrl: string, before: Snapshot, payments: Payment[]): Promise<void> {
  const after = await snapshot(dbUrl);
  const expected = expectedAfter(before, payments);
  assert.deepEqual(after.balances, expected.balances, 'balances moved by exactly the amounts and the charges');
  assert.deepEqual(after.paid, expected.paid, 'installments raised by exactly the amounts');
  assert.deepEqual(after.executed, expected.executed, 'facility totals raised by exactly the amounts');
  assert.equal(after.movements, expected.movements, 'one movement per execution');
  assert.equal(after.executions, expected.executions, 'one execution record per execution');
  await assertLedgerClean(dbUrl);
}

// ---------------------------------------------------------------------------------------------
// Assertions on answers
// ---------------------------------------------------------------------------------------------

function assertLoanError(response: HttpResult, status: number, code: string, detailReason: string, path: string): any {
  return assertErrorRecord(response, { status, code, detailReason, path: `POST ${path}`, wrapped: true });
}

function assertExecuted(response: HttpResult, status: 'Executed' | 'PartiallyExecuted'): void {
  assert.equal(response.status, 200, response.text);
  assert.deepEqual(Object.keys(response.body).sort(), ['executionDateTime', 'executionReference', 'merchandisingLoanFacilityStatus', 'merchandisingLoanOperationId']);
  assert.equal(response.body.merchandisingLoanFacilityStatus, status);
  assert.match(response.body.executionReference, uuidPattern);
  assert.match(response.body.executionDateTime, utcDateTimePattern);
  assert.match(response.body.merchandisingLoanOperationId, /^MLO\d{15}$/);
}

const minor = (value: number) => BigInt(Math.round(value * 100));

/** The suite's treasury token (scope merchandisingLoan:execute), fetched once per suite. */
function tokenCache(context: SuiteContext): () => Promise<string> {
  let token: Promise<string> | undefined;
  return () => (token ??= demoToken(context.server()));
}

// ---------------------------------------------------------------------------------------------
// Rules and errors
// ---------------------------------------------------------------------------------------------

describeEachStore(
  'merchandising loan execution: refusals',
  (context) => {
    const { server, dbUrl } = context;
    const treasury = tokenCache(context);
    const target = executePath(demoFacility, 3);

    /** Sends a request that must be refused with the given error and must change nothing. */
    async function refused(options: Omit<ExecuteOptions, 'token'> & { token?: string | null }, status: number, code: string, detailReason: string): Promise<any> {
      const before = await snapshot(dbUrl());
      const token = options.token === undefined ? await treasury() : options.token;
      const correlationId = options.correlationId === undefined ? `ml-refused-${randomUUID()}` : options.correlationId;
      const response = await execute(server(), { ...options, token, correlationId });
      const record = assertLoanError(response, status, code, detailReason, executePath(options.loanId ?? demoFacility, options.sequence ?? 3));
      if (code !== 'ML-400-004') assert.equal(response.headers.get('x-correlation-id'), correlationId, 'the correlation id is echoed on the refusal');
      await assertNothingChanged(dbUrl(), before);
      return record;
    }

    // 401
    test('ML 401: no Authorization header (ML-401-001), with WWW-Authenticate: Bearer', async () => {
      const before = await snapshot(dbUrl());
      const response = await execute(server(), { token: null });
      assertLoanError(response, 401, 'ML-401-001', 'MISSING_TOKEN', target);
      assert.match(response.headers.get('www-authenticate') ?? '', /^Bearer /);
      await assertNothingChanged(dbUrl(), before);
    });

    test('ML 401: a token that is no JWT (ML-401-002), with error="invalid_token"', async () => {
      const before = await snapshot(dbUrl());
      const response = await execute(server(), { token: 'not-a-jwt' });
      assertLoanError(response, 401, 'ML-401-002', 'INVALID_TOKEN', target);
      assert.match(response.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
      await assertNothingChanged(dbUrl(), before);
    });

    test('ML 401: a real token with a tampered signature (ML-401-002)', async () => {
      const token = await treasury();
      const [header, payload, signature = ''] = token.split('.');
      const flipped = `${signature.slice(0, -4)}${signature.slice(-4) === 'AAAA' ? 'BBBB' : 'AAAA'}`;
      await refused({ token: `${header}.${payload}.${flipped}` }, 401, 'ML-401-002', 'INVALID_TOKEN');
    });

    test('ML 401: an Authorization header that is not Bearer (ML-401-002)', async () => {
      await refused({ authorization: 'Basic dHJlYXN1cnk6c2VjcmV0' }, 401, 'ML-401-002', 'INVALID_TOKEN');
    });

    // 403
    test('ML 403: branch-portal lacks merchandisingLoan:execute (ML-403-001), error wrapped, insufficient_scope', async () => {
      const branch = await demoToken(server(), demo.branch);
      const before = await snapshot(dbUrl());
      const response = await execute(server(), { token: branch });
      assertLoanError(response, 403, 'ML-403-001', 'INSUFFICIENT_SCOPE', target);
      const challenge = response.headers.get('www-authenticate') ?? '';
      assert.match(challenge, /error="insufficient_scope"/);
      assert.match(challenge, /scope="merchandisingLoan:execute"/);
      await assertNothingChanged(dbUrl(), before);
    });

    test('ML 403: a treasury token narrowed to termDeposit:initiate (ML-403-001)', async () => {
      const narrowed = await demoToken(server(), demo.treasury, { scope: 'termDeposit:initiate' });
      await refused({ token: narrowed }, 403, 'ML-403-001', 'INSUFFICIENT_SCOPE');
    });

    test('ML 403: backbone_user not active in the core\'s directory (ML-403-002)', async () => {
      const token = await demoToken(server(), demo.treasury, { username: 'former-clerk' });
      await refused({ token }, 403, 'ML-403-002', 'USER_NOT_AUTHORIZED');
    });

    test('ML 403: workstation not active in the core\'s directory (ML-403-003)', async () => {
      const token = await demoToken(server(), demo.treasury, { workstation: 'WS-RETIRED-02' });
      await refused({ token }, 403, 'ML-403-003', 'WORKSTATION_NOT_AUTHORIZED');
    });

    // 400: checks that need no stored data
    test('ML 400: malformed JSON (ML-400-001)', async () => {
      await refused({ raw: '{"merchandisingLoanType": ' }, 400, 'ML-400-001', 'MALFORMED_JSON');
    });

    test('ML 400: a required field missing, merchandisingLoanType (ML-400-002)', async () => {
      const { merchandisingLoanType: _omitted, ...body } = loanBody();
      const record = await refused({ body }, 400, 'ML-400-002', 'MISSING_REQUIRED_FIELD');
      assert.match(record.message, /merchandisingLoanType/);
    });

    test('ML 400: accountReferences missing (ML-400-002)', async () => {
      const { accountReferences: _omitted, ...body } = loanBody();
      const record = await refused({ body }, 400, 'ML-400-002', 'MISSING_REQUIRED_FIELD');
      assert.match(record.message, /accountReferences/);
    });

    test('ML 400: accountReferences with 1 item, not exactly 2 (ML-400-003)', async () => {
      await refused({ body: loanBody({ accounts: [['PaymentAccount', payer]] }) }, 400, 'ML-400-003', 'INVALID_FIELD');
    });

    test('ML 400: accountReferences with 3 items, not exactly 2 (ML-400-003)', async () => {
      const accounts: Array<[string, string]> = [['PaymentAccount', payer], ['ExpenseAccount', expenseAccount], ['ExpenseAccount', lowFunds]];
      await refused({ body: loanBody({ accounts }) }, 400, 'ML-400-003', 'INVALID_FIELD');
    });

    test('ML 400: two PaymentAccounts and no ExpenseAccount (ML-400-010)', async () => {
      await refused({ body: loanBody({ accounts: [['PaymentAccount', payer], ['PaymentAccount', expenseAccount]] }) }, 400, 'ML-400-010', 'INVALID_ACCOUNT_REFERENCES');
    });

    test('ML 400: two ExpenseAccounts and no PaymentAccount (ML-400-010)', async () => {
      await refused({ body: loanBody({ accounts: [['ExpenseAccount', payer], ['ExpenseAccount', expenseAccount]] }) }, 400, 'ML-400-010', 'INVALID_ACCOUNT_REFERENCES');
    });

    test('ML 400: a DebitAccount role instead of the PaymentAccount (ML-400-010)', async () => {
      await refused({ body: loanBody({ accounts: [['DebitAccount', payer], ['ExpenseAccount', expenseAccount]] }) }, 400, 'ML-400-010', 'INVALID_ACCOUNT_REFERENCES');
    });

    test('ML 400: body loanInstallmentSequence differs from the path (ML-400-011)', async () => {
      const record = await refused({ body: loanBody({ sequence: 2 }) }, 400, 'ML-400-011', 'INSTALLMENT_SEQUENCE_MISMATCH');
      assert.match(record.message, /2/);
      assert.match(record.message, /3/);
    });

    test('ML 400: body loanInstallmentSequence 0, sequences start at 1 (ML-400-003)', async () => {
      await refused({ body: loanBody({ sequence: 0 }) }, 400, 'ML-400-003', 'INVALID_FIELD');
    });

    test('ML 400: loanMaturityDate of dateType RepaymentStartDate, not MaturityDate (ML-400-012)', async () => {
      await refused({ body: loanBody({ maturity: { dateContent: '2026-06-30', dateType: 'RepaymentStartDate' } }) }, 400, 'ML-400-012', 'INVALID_DATE_TYPE');
    });

    test('ML 400: loanMaturityDate not a calendar date, 2026-02-30 (ML-400-008)', async () => {
      await refused({ body: loanBody({ maturity: { dateContent: '2026-02-30', dateType: 'MaturityDate' } }) }, 400, 'ML-400-008', 'INVALID_DATE');
    });

    test('ML 400: loanMaturityDate not in YYYY-MM-DD form, 30/06/2026 (ML-400-008)', async () => {
      await refused({ body: loanBody({ maturity: { dateContent: '30/06/2026', dateType: 'MaturityDate' } }) }, 400, 'ML-400-008', 'INVALID_DATE');
    });

    test('ML 400: loanMaturityDate after the facility\'s final maturity 2026-12-31 (ML-400-013)', async () => {
      const record = await refused({ body: loanBody({ maturity: { dateContent: '2027-01-01', dateType: 'MaturityDate' } }) }, 400, 'ML-400-013', 'MATURITY_AFTER_FACILITY_FINAL_MATURITY');
      assert.match(record.message, /2026-12-31/);
    });

    test('ML 400: amount 0 (ML-400-005)', async () => {
      await refused({ body: loanBody({ amount: 0 }) }, 400, 'ML-400-005', 'INVALID_AMOUNT');
    });

    test('ML 400: a negative amount (ML-400-005)', async () => {
      await refused({ body: loanBody({ amount: -100 }) }, 400, 'ML-400-005', 'INVALID_AMOUNT');
    });

    test('ML 400: an amount with more decimals than USD allows, 100.001 (ML-400-006)', async () => {
      await refused({ body: loanBody({ amount: 100.001 }) }, 400, 'ML-400-006', 'INVALID_AMOUNT_PRECISION');
    });

    test('ML 400: an amount with more than 15 significant digits (ML-400-006)', async () => {
      await refused({ body: loanBody({ amount: 1234.5678901234567 }) }, 400, 'ML-400-006', 'INVALID_AMOUNT_PRECISION');
    });

    test('ML 400: an amount given as a string (ML-400-003)', async () => {
      const body = loanBody();
      (body.merchandisingLoanFacilityReference as any).loanAmount.amountValue = '1000.00';
      await refused({ body }, 400, 'ML-400-003', 'INVALID_FIELD');
    });

    test('ML 400: a currency that is no ISO 4217 code, XYZ (ML-400-007)', async () => {
      await refused({ body: loanBody({ currency: 'XYZ' }) }, 400, 'ML-400-007', 'INVALID_CURRENCY');
    });

    test('ML 400: a lower-case currency code, usd (ML-400-007)', async () => {
      await refused({ body: loanBody({ currency: 'usd' }) }, 400, 'ML-400-007', 'INVALID_CURRENCY');
    });

    test('ML 400: path installmentSequence "0" (ML-400-003)', async () => {
      await refused({ sequence: '0', body: loanBody() }, 400, 'ML-400-003', 'INVALID_FIELD');
    });

    test('ML 400: path installmentSequence "abc" (ML-400-003)', async () => {
      const record = await refused({ sequence: 'abc', body: loanBody() }, 400, 'ML-400-003', 'INVALID_FIELD');
      assert.match(record.message, /installmentSequence/);
    });

    test('ML 400: an x-correlation-id outside A-Z a-z 0-9 . _ : - (ML-400-004)', async () => {
      await refused({ correlationId: 'bad correlation id!' }, 400, 'ML-400-004', 'INVALID_CORRELATION_ID');
    });

    test('ML error record: path is the method and the path without the query string', async () => {
      const before = await snapshot(dbUrl());
      const response = await send(`${server().url}${target}?channel=test`, {
        method: 'POST',
        headers: { authorization: `Bearer ${await treasury()}`, 'content-type': 'application/json', 'x-correlation-id': `ml-query-${randomUUID()}` },
        body: JSON.stringify(loanBody({ amount: 20_000.01 })),
      });
      assertLoanError(response, 422, 'ML-422-005', 'AMOUNT_ABOVE_OUTSTANDING', target);
      await assertNothingChanged(dbUrl(), before);
    });

    test('ML 413: a body over 64 KiB (ML-413-001), wrapped', async () => {
      await refused({ body: { ...loanBody(), padding: 'x'.repeat(70 * 1024) } }, 413, 'ML-413-001', 'PAYLOAD_TOO_LARGE');
    });

    test('ML 415: a Content-Type other than JSON (ML-415-001), wrapped', async () => {
      await refused({ contentType: 'text/plain' }, 415, 'ML-415-001', 'UNSUPPORTED_MEDIA_TYPE');
    });

    // 404
    test('ML 404: unknown facility (ML-404-001)', async () => {
      const record = await refused({ loanId: '7999999999' }, 404, 'ML-404-001', 'FACILITY_NOT_FOUND');
      assert.match(record.message, /7999999999/);
    });

    test('ML 404: unknown installment, sequence 9 of a 3-installment facility (ML-404-002)', async () => {
      await refused({ sequence: 9 }, 404, 'ML-404-002', 'INSTALLMENT_NOT_FOUND');
    });

    test('ML 404: unknown payment account (ML-404-003)', async () => {
      const record = await refused({ body: loanBody({ payment: '1999999999' }) }, 404, 'ML-404-003', 'PAYMENT_ACCOUNT_NOT_FOUND');
      assert.match(record.message, /1999999999/);
    });

    test('ML 404: unknown expense account (ML-404-004)', async () => {
      const record = await refused({ body: loanBody({ expense: '1999999998' }) }, 404, 'ML-404-004', 'EXPENSE_ACCOUNT_NOT_FOUND');
      assert.match(record.message, /1999999998/);
    });

    // 409
    test('ML 409: a closed facility (ML-409-011)', async () => {
      await refused({ loanId: closedFacility, sequence: 1 }, 409, 'ML-409-011', 'FACILITY_CLOSED');
    });

    // 422
    test('ML 422: reserved parameter type LetterOfCredit, not yet supported (ML-422-003)', async () => {
      await refused({ body: loanBody({ parameterType: 'LetterOfCredit' }) }, 422, 'ML-422-003', 'FACILITY_PARAMETER_TYPE_NOT_SUPPORTED');
    });

    test('ML 422: reserved parameter type BankerAcceptance, not yet supported (ML-422-003)', async () => {
      await refused({ body: loanBody({ parameterType: 'BankerAcceptance' }) }, 422, 'ML-422-003', 'FACILITY_PARAMETER_TYPE_NOT_SUPPORTED');
    });

    test('ML 422: parameter type not the facility\'s (ML-422-002)', async () => {
      await refused({ body: loanBody({ parameterType: 'StandbyCredit' }) }, 422, 'ML-422-002', 'FACILITY_PARAMETER_TYPE_MISMATCH');
    });

    test('ML 422: loan type not the facility\'s, CRDI for a CRDE facility (ML-422-001)', async () => {
      await refused({ body: loanBody({ loanType: 'CRDI' }) }, 422, 'ML-422-001', 'LOAN_TYPE_MISMATCH');
    });

    test('ML 422: an EUR amount on a USD facility (ML-422-004)', async () => {
      await refused({ body: loanBody({ currency: 'EUR' }) }, 422, 'ML-422-004', 'CURRENCY_MISMATCH');
    });

    test('ML 422: an EUR payment account on a USD facility (ML-422-004)', async () => {
      await refused({ body: loanBody({ payment: eurAccount }) }, 422, 'ML-422-004', 'CURRENCY_MISMATCH');
    });

    test('ML 422: an EUR expense account on a USD facility (ML-422-004)', async () => {
      await refused({ body: loanBody({ expense: eurAccount }) }, 422, 'ML-422-004', 'CURRENCY_MISMATCH');
    });

    test('ML 422: a Blocked payment account (ML-422-009)', async () => {
      await refused({ body: loanBody({ payment: blockedAccount }) }, 422, 'ML-422-009', 'ACCOUNT_NOT_ACTIVE');
    });

    test('ML 422: a Blocked expense account (ML-422-009)', async () => {
      await refused({ body: loanBody({ expense: blockedAccount }) }, 422, 'ML-422-009', 'ACCOUNT_NOT_ACTIVE');
    });

    test('ML 422: a payment account of another customer, 2000000001 (ML-422-010)', async () => {
      await refused({ body: loanBody({ payment: otherCustomersAccount }) }, 422, 'ML-422-010', 'ACCOUNT_NOT_OWNED_BY_FACILITY_CUSTOMER');
    });

    test('ML 422: an expense account of another customer, 2000000001 (ML-422-010)', async () => {
      await refused({ body: loanBody({ expense: otherCustomersAccount }) }, 422, 'ML-422-010', 'ACCOUNT_NOT_OWNED_BY_FACILITY_CUSTOMER');
    });

    test('ML 422: the bank\'s own EQUITY-USD account as expense account is not the customer\'s (ML-422-010)', async () => {
      await refused({ body: loanBody({ expense: 'EQUITY-USD' }) }, 422, 'ML-422-010', 'ACCOUNT_NOT_OWNED_BY_FACILITY_CUSTOMER');
    });

    test('ML 422: amount above the installment outstanding, 20000.01 of 20000.00 (ML-422-005)', async () => {
      const record = await refused({ body: loanBody({ amount: 20_000.01 }) }, 422, 'ML-422-005', 'AMOUNT_ABOVE_OUTSTANDING');
      assert.match(record.message, /20000\.01/);
    });

    test('ML 422: amount taking the facility above its approved limit, 2000.00 on a 1000.00 limit (ML-422-006)', async () => {
      await refused({ loanId: smallLimitFacility, sequence: 1, body: loanBody({ amount: 2_000 }) }, 422, 'ML-422-006', 'APPROVED_LIMIT_EXCEEDED');
    });

    test('ML 422: insufficient funds in the payment account, 5000.00 from 1500.00 (ML-422-007)', async () => {
      const record = await refused({ body: loanBody({ amount: 5_000, payment: lowFunds }) }, 422, 'ML-422-007', 'INSUFFICIENT_FUNDS_PAYMENT_ACCOUNT');
      assert.match(record.message, new RegExp(lowFunds));
    });

    test('ML 422: insufficient funds in the expense account, charges 40.60 from 20.00 (ML-422-008)', async () => {
      const record = await refused({ body: loanBody({ amount: 5_000, expense: poorExpenseAccount }) }, 422, 'ML-422-008', 'INSUFFICIENT_FUNDS_EXPENSE_ACCOUNT');
      assert.match(record.message, /40\.60/);
    });

    test('ML 422: one account in both roles covers the amount but not amount + charges, 1480.00 + 40.60 from 1500.00 (ML-422-007)', async () => {
      await refused(
        { body: loanBody({ amount: 1_480, payment: lowFunds, expense: lowFunds }) },
        422,
        'ML-422-007',
        'INSUFFICIENT_FUNDS_PAYMENT_ACCOUNT',
      );
    });

    test('ML 422 with Prefer: return=minimal: a refusal still answers its wrapped record, not 204', async () => {
      await refused({ prefer: 'return=minimal', body: loanBody({ amount: 20_000.01 }) }, 422, 'ML-422-005', 'AMOUNT_ABOVE_OUTSTANDING');
    });
  },
  { data: loanDataFile },
);

// ---------------------------------------------------------------------------------------------
// Executions: amounts, charges, statuses, 200 / 202 / 204, correlation
// ---------------------------------------------------------------------------------------------

describeEachStore(
  'merchandising loan execution: payments',
  (context) => {
    const { server, dbUrl } = context;
    const treasury = tokenCache(context);

    test('ML 200: a partial payment is PartiallyExecuted, the rest with loanAmount omitted pays the whole outstanding and is Executed, a third attempt → 409 ML-409-010', async () => {
      const token = await treasury();
      const start = await snapshot(dbUrl());
      assert.equal(start.paid[`${demoFacility}/1`], 0n, 'installment 1 starts unpaid');

      const partial = await execute(server(), { token, sequence: 1, body: loanBody({ amount: 5_000, sequence: 1 }) });
      assertExecuted(partial, 'PartiallyExecuted');
      // 5000.00: commission max(7.50, 10.00) = 10.00, fee 25.00, tax 35.00 × 0.16 = 5.60.
      const first: Payment = { loanId: demoFacility, sequence: 1, amountMinor: 500_000n, payment: payer, expense: expenseAccount, commissionMinor: 1_000n, feeMinor: 2_500n, taxMinor: 560n };
      await assertApplied(dbUrl(), start, [first]);

      const middle = await snapshot(dbUrl());
      const rest = await execute(server(), { token, sequence: 1, body: loanBody({ amount: null }) });
      assertExecuted(rest, 'Executed');
      // The whole outstanding, 15000.00: commission 22.50, fee 25.00, tax 47.50 × 0.16 = 7.60.
      const second: Payment = { ...first, amountMinor: 1_500_000n, commissionMinor: 2_250n, taxMinor: 760n };
      await assertApplied(dbUrl(), middle, [second]);
      const row = await withDb(dbUrl(), (db) =>
        db.selectFrom('loan_executions').selectAll().where('execution_reference', '=', rest.body.executionReference).executeTakeFirstOrThrow(),
      );
      assert.equal(toBigInt(row.amount_minor), 1_500_000n, 'loanAmount omitted → the installment\'s whole outstanding');
      assert.equal(row.facility_status, 'Executed');

      const paid = await snapshot(dbUrl());
      assert.equal(paid.paid[`${demoFacility}/1`], 2_000_000n, 'the installment is fully paid');
      for (const body of [loanBody({ amount: null }), loanBody({ amount: 1 })]) {
        const third = await execute(server(), { token, sequence: 1, body });
        assertLoanError(third, 409, 'ML-409-010', 'INSTALLMENT_ALREADY_PAID', executePath(demoFacility, 1));
      }
      await assertNothingChanged(dbUrl(), paid);
    });

    // Charges: commission = max(amount × 0.0015, 10.00), fee 25.00, tax = (commission + fee) × 0.16,
    // each rounded half-up to the cent; the expense account pays exactly their sum.
    const chargeCases = [
      { sequence: 1, amount: 5_000, commission: 1_000n, tax: 560n, total: '40.60', why: '5000.00 × 0.0015 = 7.50 < 10.00: the minimum commission' },
      { sequence: 2, amount: 20_000, commission: 3_000n, tax: 880n, total: '63.80', why: '20000.00 × 0.0015 = 30.00; tax 55.00 × 0.16 = 8.80' },
      { sequence: 3, amount: 6_670, commission: 1_001n, tax: 560n, total: '40.61', why: '6670.00 × 0.0015 = 10.005, half-up 10.01; tax 35.01 × 0.16 = 5.6016 → 5.60' },
      { sequence: 4, amount: 7_000.01, commission: 1_050n, tax: 568n, total: '41.18', why: '7000.01 × 0.0015 = 10.500015 → 10.50; tax 35.50 × 0.16 = 5.68' },
    ];
    for (const charge of chargeCases) {
      test(`ML charges to the cent: ${charge.amount.toFixed(2)} → ${charge.total} (${charge.why})`, async () => {
        const token = await treasury();
        const before = await snapshot(dbUrl());
        const response = await execute(server(), { token, loanId: workhorse, sequence: charge.sequence, body: loanBody({ amount: charge.amount }) });
        assertExecuted(response, charge.amount === 20_000 ? 'Executed' : 'PartiallyExecuted');
        const payment: Payment = {
          loanId: workhorse,
          sequence: charge.sequence,
          amountMinor: minor(charge.amount),
          payment: payer,
          expense: expenseAccount,
          commissionMinor: charge.commission,
          feeMinor: 2_500n,
          taxMinor: charge.tax,
        };
        assert.equal(charge.commission + 2_500n + charge.tax, minor(Number(charge.total)), 'the case\'s own arithmetic');
        await assertApplied(dbUrl(), before, [payment]);
        const after = await snapshot(dbUrl());
        assert.equal(before.balances[expenseAccount]! - after.balances[expenseAccount]!, minor(Number(charge.total)), `the expense account pays exactly ${charge.total}`);
        assert.equal(before.balances[payer]! - after.balances[payer]!, minor(charge.amount), 'the payment account pays exactly the amount');
        await withDb(dbUrl(), async (db) => {
          const row = await db.selectFrom('loan_executions').selectAll().where('execution_reference', '=', response.body.executionReference).executeTakeFirstOrThrow();
          assert.equal(toBigInt(row.commission_minor), charge.commission);
          assert.equal(toBigInt(row.fee_minor), 2_500n);
          assert.equal(toBigInt(row.tax_minor), charge.tax);
          const movement = await db.selectFrom('movements').select('id').where('reference', '=', response.body.executionReference).execute();
          assert.equal(movement.length, 1, 'one movement for the execution');
          const postings = await db.selectFrom('postings').select(['account_number', 'amount_minor']).where('movement_id', '=', movement[0]!.id).execute();
          assert.deepEqual(
            Object.fromEntries(postings.map((p) => [p.account_number, toBigInt(p.amount_minor)])),
            {
              [payer]: -minor(charge.amount),
              [workhorse]: minor(charge.amount),
              [expenseAccount]: -(charge.commission + 2_500n + charge.tax),
              [commissionIncome]: charge.commission,
              [feeIncome]: 2_500n,
              [taxPayable]: charge.tax,
            },
            'one balanced movement: amount to the facility, charges to commission, fee and tax accounts',
          );
        });
      });
    }

    test('ML 200: one account in both roles is debited once with amount + charges', async () => {
      const token = await treasury();
      const before = await snapshot(dbUrl());
      const response = await execute(server(), { token, loanId: workhorse, sequence: 5, body: loanBody({ amount: 5_000, payment: payer, expense: payer }) });
      assertExecuted(response, 'PartiallyExecuted');
      await assertApplied(dbUrl(), before, [
        { loanId: workhorse, sequence: 5, amountMinor: 500_000n, payment: payer, expense: payer, commissionMinor: 1_000n, feeMinor: 2_500n, taxMinor: 560n },
      ]);
      const postings = await withDb(dbUrl(), (db) =>
        db
          .selectFrom('postings')
          .innerJoin('movements', 'movements.id', 'postings.movement_id')
          .select(['postings.account_number', 'postings.amount_minor'])
          .where('movements.reference', '=', response.body.executionReference)
          .where('postings.account_number', '=', payer)
          .execute(),
      );
      assert.equal(postings.length, 1, 'a single debit line for the account');
      assert.equal(toBigInt(postings[0]!.amount_minor), -(500_000n + 4_060n));
    });

    test('ML 200: response fields: merchandisingLoanOperationId from the core, status, executionReference (UUID), executionDateTime (UTC, Z)', async () => {
      const token = await treasury();
      const correlationId = `ml-fields-${randomUUID()}`;
      const sentAt = Date.now();
      const response = await execute(server(), { token, loanId: workhorse, sequence: 6, correlationId, body: loanBody({ amount: 1_000, sequence: 6 }) });
      const answeredAt = Date.now();
      assertExecuted(response, 'PartiallyExecuted');
      assert.equal(response.headers.get('x-correlation-id'), correlationId, 'the correlation id is echoed');
      const { merchandisingLoanOperationId, executionReference, executionDateTime } = response.body;
      assert.ok(executionDateTime.endsWith('Z'), 'UTC');
      assert.equal(new Date(executionDateTime).toISOString(), executionDateTime, 'an ISO 8601 instant');
      const at = Date.parse(executionDateTime);
      assert.ok(at >= sentAt - 1_000 && at <= answeredAt + 1_000, 'the time of the execution');
      await withDb(dbUrl(), async (db) => {
        const execution = await db.selectFrom('loan_executions').selectAll().where('execution_reference', '=', executionReference).executeTakeFirstOrThrow();
        assert.equal(execution.operation_id, merchandisingLoanOperationId, 'the operation id is the core\'s');
        assert.equal(execution.loan_id, workhorse);
        assert.equal(Number(execution.sequence), 6);
        const operation = await db.selectFrom('operations').selectAll().where('reference', '=', executionReference).executeTakeFirstOrThrow();
        assert.equal(operation.correlation_id, correlationId, 'the execution reference is the service\'s operation reference');
        assert.equal(operation.status, 'Executed');
      });
    });

    test('ML 200: loanMaturityDate on the facility\'s final maturity (2026-12-31) is accepted', async () => {
      const token = await treasury();
      const before = await snapshot(dbUrl());
      const response = await execute(server(), {
        token,
        loanId: workhorse,
        sequence: 7,
        body: loanBody({ amount: 1_000, maturity: { dateContent: '2026-12-31', dateType: 'MaturityDate' } }),
      });
      assertExecuted(response, 'PartiallyExecuted');
      await assertApplied(dbUrl(), before, [
        { loanId: workhorse, sequence: 7, amountMinor: 100_000n, payment: payer, expense: expenseAccount, commissionMinor: 1_000n, feeMinor: 2_500n, taxMinor: 560n },
      ]);
    });

    test('ML 204: Prefer: return=minimal → 204 with no body and Preference-Applied, the payment made', async () => {
      const token = await treasury();
      const correlationId = `ml-minimal-${randomUUID()}`;
      const before = await snapshot(dbUrl());
      const response = await execute(server(), { token, loanId: workhorse, sequence: 8, correlationId, prefer: 'return=minimal', body: loanBody({ amount: 2_000 }) });
      assert.equal(response.status, 204, response.text);
      assert.equal(response.text, '', 'no body');
      assert.equal(response.headers.get('preference-applied'), 'return=minimal');
      assert.equal(response.headers.get('x-correlation-id'), correlationId);
      await assertApplied(dbUrl(), before, [
        { loanId: workhorse, sequence: 8, amountMinor: 200_000n, payment: payer, expense: expenseAccount, commissionMinor: 1_000n, feeMinor: 2_500n, taxMinor: 560n },
      ]);
    });

    test('ML 202: Prefer: respond-async → 202 {executionReference, executionDateTime, Pending} with Location; GET /v1/operations/{ref} → Executed with the 200 body', async () => {
      const token = await treasury();
      const before = await snapshot(dbUrl());
      const response = await execute(server(), { token, loanId: workhorse, sequence: 9, prefer: 'respond-async', body: loanBody({ amount: 3_000 }) });
      assert.equal(response.status, 202, response.text);
      assert.deepEqual(Object.keys(response.body).sort(), ['executionDateTime', 'executionReference', 'merchandisingLoanFacilityStatus']);
      assert.equal(response.body.merchandisingLoanFacilityStatus, 'Pending');
      assert.match(response.body.executionReference, uuidPattern);
      assert.match(response.body.executionDateTime, utcDateTimePattern);
      const reference = response.body.executionReference as string;
      assert.equal(response.headers.get('location'), `/v1/operations/${reference}`);
      assert.equal(response.headers.get('preference-applied'), 'respond-async');

      const view = await settled(server(), token, reference);
      assert.equal(view.body.status, 'Executed', view.text);
      assert.equal(view.body.reference, reference);
      assert.equal(view.body.operation, 'executeMerchandisingLoanPayment');
      assert.equal(view.body.error, undefined);
      const result = view.body.result;
      assert.deepEqual(Object.keys(result).sort(), ['executionDateTime', 'executionReference', 'merchandisingLoanFacilityStatus', 'merchandisingLoanOperationId']);
      assert.equal(result.executionReference, reference, 'the result carries the 202\'s reference');
      assert.equal(result.merchandisingLoanFacilityStatus, 'PartiallyExecuted');
      assert.match(result.executionDateTime, utcDateTimePattern);
      const execution = await withDb(dbUrl(), (db) => db.selectFrom('loan_executions').selectAll().where('execution_reference', '=', reference).executeTakeFirstOrThrow());
      assert.equal(result.merchandisingLoanOperationId, execution.operation_id);
      // 3000.00: commission max(4.50, 10.00) = 10.00, fee 25.00, tax 5.60.
      await assertApplied(dbUrl(), before, [
        { loanId: workhorse, sequence: 9, amountMinor: 300_000n, payment: payer, expense: expenseAccount, commissionMinor: 1_000n, feeMinor: 2_500n, taxMinor: 560n },
      ]);
    });

    test('ML 202 refused by the core: GET /v1/operations/{ref} → Rejected with the error record and a result whose status is Rejected; nothing paid', async () => {
      const token = await treasury();
      const before = await snapshot(dbUrl());
      const response = await execute(server(), { token, loanId: workhorse, sequence: 10, prefer: 'respond-async', body: loanBody({ amount: 20_000.01 }) });
      assert.equal(response.status, 202, response.text);
      assert.equal(response.body.merchandisingLoanFacilityStatus, 'Pending');
      const reference = response.body.executionReference as string;
      const view = await settled(server(), token, reference);
      assert.equal(view.body.status, 'Rejected', view.text);
      assert.equal(view.body.reference, reference);
      const error = view.body.error;
      assert.equal(error.status, 422);
      assert.equal(error.reason, 'BUSINESS_RULE_VIOLATION');
      assert.equal(error.path, `POST ${executePath(workhorse, 10)}`);
      assert.equal(error.errordetail?.[0]?.code, 'ML-422-005');
      assert.equal(error.errordetail?.[0]?.reason, 'AMOUNT_ABOVE_OUTSTANDING');
      assert.equal(view.body.result?.merchandisingLoanFacilityStatus, 'Rejected');
      assert.equal(view.body.result?.executionReference, reference);
      assert.match(view.body.result?.executionDateTime ?? '', utcDateTimePattern);
      await assertNothingChanged(dbUrl(), before);
    });

    test('ML 409: a repeated x-correlation-id → 409 ML-409-001 naming the original reference and outcome; paid once', async () => {
      const token = await treasury();
      const correlationId = `ml-repeat-${randomUUID()}`;
      const body = loanBody({ amount: 1_000 });
      const before = await snapshot(dbUrl());
      const first = await execute(server(), { token, loanId: workhorse, sequence: 10, correlationId, body });
      assertExecuted(first, 'PartiallyExecuted');
      const afterFirst = await snapshot(dbUrl());
      for (const repeatBody of [body, loanBody({ amount: 2_000 })]) {
        const repeat = await execute(server(), { token, loanId: workhorse, sequence: 10, correlationId, body: repeatBody });
        const record = assertLoanError(repeat, 409, 'ML-409-001', 'DUPLICATE_CORRELATION_ID', executePath(workhorse, 10));
        assert.match(record.message, new RegExp(`${first.body.executionReference} \\(Executed\\)`), 'names the original operation and its outcome');
        assert.equal(repeat.headers.get('x-correlation-id'), correlationId);
      }
      await assertNothingChanged(dbUrl(), afterFirst);
      await assertApplied(dbUrl(), before, [
        { loanId: workhorse, sequence: 10, amountMinor: 100_000n, payment: payer, expense: expenseAccount, commissionMinor: 1_000n, feeMinor: 2_500n, taxMinor: 560n },
      ]);
    });

    test('ML 409: the correlation id of a core refusal is consumed: the repeat → 409 naming "Rejected with 422 ML-422-005"', async () => {
      const token = await treasury();
      const correlationId = `ml-refused-${randomUUID()}`;
      const before = await snapshot(dbUrl());
      const refusal = await execute(server(), { token, loanId: demoFacility, sequence: 2, correlationId, body: loanBody({ amount: 25_000 }) });
      assertLoanError(refusal, 422, 'ML-422-005', 'AMOUNT_ABOVE_OUTSTANDING', executePath(demoFacility, 2));
      const repeat = await execute(server(), { token, loanId: demoFacility, sequence: 2, correlationId, body: loanBody({ amount: 1_000 }) });
      const record = assertLoanError(repeat, 409, 'ML-409-001', 'DUPLICATE_CORRELATION_ID', executePath(demoFacility, 2));
      assert.match(record.message, /Rejected with 422 ML-422-005/);
      await assertNothingChanged(dbUrl(), before);
    });

    test('ML 400 does not consume the correlation id (checks without stored data): the same id then executes', async () => {
      const token = await treasury();
      const correlationId = `ml-not-consumed-${randomUUID()}`;
      const before = await snapshot(dbUrl());
      const invalid = await execute(server(), { token, loanId: demoFacility, sequence: 2, correlationId, body: loanBody({ amount: 1_000, sequence: 3 }) });
      assertLoanError(invalid, 400, 'ML-400-011', 'INSTALLMENT_SEQUENCE_MISMATCH', executePath(demoFacility, 2));
      await assertNothingChanged(dbUrl(), before);
      const valid = await execute(server(), { token, loanId: demoFacility, sequence: 2, correlationId, body: loanBody({ amount: 1_000, sequence: 2 }) });
      assertExecuted(valid, 'PartiallyExecuted');
      await assertApplied(dbUrl(), before, [
        { loanId: demoFacility, sequence: 2, amountMinor: 100_000n, payment: payer, expense: expenseAccount, commissionMinor: 1_000n, feeMinor: 2_500n, taxMinor: 560n },
      ]);
    });

    test('ML 409: a correlation id the same client used for a term deposit → 409 ML-409-001 (one namespace across both operations)', async () => {
      const token = await treasury();
      const correlationId = `ml-shared-${randomUUID()}`;
      const deposit = await initiateDeposit(server(), token, correlationId);
      assert.equal(deposit.status, 200, deposit.text);
      const before = await snapshot(dbUrl());
      const response = await execute(server(), { token, loanId: demoFacility, sequence: 2, correlationId, body: loanBody({ amount: 1_000 }) });
      const record = assertLoanError(response, 409, 'ML-409-001', 'DUPLICATE_CORRELATION_ID', executePath(demoFacility, 2));
      assert.match(record.message, new RegExp(`${deposit.body.operationReference} \\(Executed\\)`));
      await assertNothingChanged(dbUrl(), before);
    });

    test('ML 200: a correlation id used by another client (branch-portal) is free for treasury-app (one namespace per client)', async () => {
      const correlationId = `ml-other-client-${randomUUID()}`;
      const deposit = await initiateDeposit(server(), await demoToken(server(), demo.branch), correlationId);
      assert.equal(deposit.status, 200, deposit.text);
      const before = await snapshot(dbUrl());
      const response = await execute(server(), { token: await treasury(), loanId: demoFacility, sequence: 2, correlationId, body: loanBody({ amount: 1_000 }) });
      assertExecuted(response, 'PartiallyExecuted');
      await assertApplied(dbUrl(), before, [
        { loanId: demoFacility, sequence: 2, amountMinor: 100_000n, payment: payer, expense: expenseAccount, commissionMinor: 1_000n, feeMinor: 2_500n, taxMinor: 560n },
      ]);
    });

    test('ML 409: the same body again without x-correlation-id within the duplicate window → 409 ML-409-002; paid once', async () => {
      const token = await treasury();
      const body = loanBody({ amount: 1_234.56 });
      const before = await snapshot(dbUrl());
      const first = await execute(server(), { token, loanId: demoFacility, sequence: 2, correlationId: null, body });
      assertExecuted(first, 'PartiallyExecuted');
      assert.match(first.headers.get('x-correlation-id') ?? '', uuidPattern, 'a correlation id is generated');
      const second = await execute(server(), { token, loanId: demoFacility, sequence: 2, correlationId: null, body });
      const record = assertLoanError(second, 409, 'ML-409-002', 'DUPLICATE_REQUEST', executePath(demoFacility, 2));
      assert.match(record.message, new RegExp(first.body.executionReference));
      // 1234.56: commission max(1.85, 10.00) = 10.00, fee 25.00, tax 5.60.
      await assertApplied(dbUrl(), before, [
        { loanId: demoFacility, sequence: 2, amountMinor: 123_456n, payment: payer, expense: expenseAccount, commissionMinor: 1_000n, feeMinor: 2_500n, taxMinor: 560n },
      ]);
    });
  },
  { data: loanDataFile },
);

// --------------------------------------------------------------------------------------------- 502
// / 504: the core unavailable or slow, reconciled on repeat (docs/api.md, "Correlation ids and
// duplicates")
// ---------------------------------------------------------------------------------------------

const faulty = new FaultyCore();
const coreTimeoutMs = 300;
/**
 * The instances' clock in the fault suites: the core time-out passes when a test moves it, the
 * core's answer held meanwhile (FaultyCore's gated kinds), never because the machine was slow. At
 * the real time: the remote core (another process, on the system's clock) dates what it writes.
 */
const clock = new FakeClock(Date.now());

function operationRow(dbUrl: string, correlationId: string) {
  return withDb(dbUrl, (db) => db.selectFrom('operations').selectAll().where('correlation_id', '=', correlationId).executeTakeFirst());
}

function executionsOf(dbUrl: string, sequence: number) {
  return withDb(dbUrl, (db) => db.selectFrom('loan_executions').selectAll().where('loan_id', '=', workhorse).where('sequence', '=', sequence).execute());
}

describeEachStore(
  'merchandising loan execution: core timed out, settled in the background',
  (context) => {
    const { server, dbUrl } = context;
    const treasury = tokenCache(context);

    test('ML 504: the core commits after the time-out → 504 wrapped CORE_TIMEOUT (ML-504-001); the repeat → 409 naming the original reference; exactly one payment', async () => {
      const token = await treasury();
      const correlationId = `ml-504-${randomUUID()}`;
      const body = loanBody({ amount: 2_000 });
      const before = await snapshot(dbUrl());
      // The core does the work, its answer is held; the time-out passes on the instances' clock.
      const arrived = faulty.arrived();
      const request = faulty.withFault({ kind: 'commit-then-hold' }, () => execute(server(), { token, loanId: workhorse, sequence: 2, correlationId, body }));
      await arrived;
      clock.advance(coreTimeoutMs);
      const response = await request;
      const record = assertLoanError(response, 504, 'ML-504-001', 'CORE_TIMEOUT', executePath(workhorse, 2));
      assert.match(record.message, new RegExp(correlationId));
      // Answered while the core's answer was still held: at the time-out, before the core.
      faulty.release();

      // With the embedded core the unit of work commits once the core answers; with a remote core
      // the late answer found no one waiting, and the reconciler settles it by reference.
      await lateWorkSettled(server());
      const row = await operationRow(dbUrl(), correlationId);
      const held = await storedOperation(server(), row?.reference ?? '');
      const executed = held.status === 'Unknown' ? await server().coregate.reconciler.reconcile(held) : held;
      assert.equal(executed.status, 'Executed');
      const repeat = await execute(server(), { token, loanId: workhorse, sequence: 2, correlationId, body });
      const conflict = assertLoanError(repeat, 409, 'ML-409-001', 'DUPLICATE_CORRELATION_ID', executePath(workhorse, 2));
      assert.match(conflict.message, new RegExp(`${executed.reference} \\(Executed\\)`), 'names the original reference');

      const executions = await executionsOf(dbUrl(), 2);
      assert.equal(executions.length, 1, 'exactly one payment');
      assert.equal(executions[0]!.execution_reference, executed.reference);
      await assertApplied(dbUrl(), before, [
        { loanId: workhorse, sequence: 2, amountMinor: 200_000n, payment: payer, expense: expenseAccount, commissionMinor: 1_000n, feeMinor: 2_500n, taxMinor: 560n },
      ]);
    });

    test('ML 202 while the core is unavailable: the operation stays Pending, nothing paid; once the core is back it is executed exactly once', async () => {
      const token = await treasury();
      const before = await snapshot(dbUrl());
      faulty.fault = { kind: 'unavailable' };
      let reference: string;
      try {
        const response = await execute(server(), { token, loanId: workhorse, sequence: 4, prefer: 'respond-async', body: loanBody({ amount: 4_000 }) });
        assert.equal(response.status, 202, response.text);
        assert.equal(response.body.merchandisingLoanFacilityStatus, 'Pending');
        reference = response.body.executionReference as string;
        // The worker's pass, started by the 202, meets the unavailable core.
        await runPendingWorkers(server());
        assert.ok(server().logLines.some((line) => line.includes(reference) && line.includes('pending operation not executed yet')), 'the worker met the unavailable core');
        const view = await getOperation(server(), token, reference);
        assert.equal(view.status, 200, view.text);
        assert.equal(view.body.status, 'Pending');
        await assertNothingChanged(dbUrl(), before);
      } finally {
        faulty.fault = { kind: 'none' };
      }
      // The core is back: the reconciler owes the accepted operation its execution.
      const owed = await storedOperation(server(), reference);
      assert.equal((await server().coregate.reconciler.reconcile(owed)).status, 'Executed');
      const view = await getOperation(server(), token, reference);
      assert.equal(view.body.status, 'Executed', view.text);
      assert.equal(view.body.result.executionReference, reference);
      assert.equal((await executionsOf(dbUrl(), 4)).length, 1, 'exactly one payment');
      await assertApplied(dbUrl(), before, [
        { loanId: workhorse, sequence: 4, amountMinor: 400_000n, payment: payer, expense: expenseAccount, commissionMinor: 1_000n, feeMinor: 2_500n, taxMinor: 560n },
      ]);
    });
  },
  // The reconciler idle: the tests run it (on the fake clock no pass would come by itself anyway).
  { data: loanDataFile, wrapCore: faulty.wrap, clock, flags: { coreTimeoutMs: String(coreTimeoutMs), ...reconcilerIdle } },
);

// The client's repeat after a 502/504 executes an operation the core never did (docs/api.md,
// "Correlation ids and duplicates"): the reconciler stays idle so that it cannot fence the
// operation first (helpers/reconciler.ts), and the time-out is one a loaded machine's core calls
// stay within.
const repeatFaulty = new FaultyCore();
const repeatCoreTimeoutMs = 1_000;

describeEachStore(
  "merchandising loan execution: core unavailable or failed, the client's repeat reconciles",
  (context) => {
    const { server, dbUrl } = context;
    const treasury = tokenCache(context);

    test('ML 502: core unavailable → 502 wrapped CORE_UNAVAILABLE (ML-502-001), nothing paid; the repeat with the same id executes once', async () => {
      const token = await treasury();
      const correlationId = `ml-502-${randomUUID()}`;
      const body = loanBody({ amount: 1_000 });
      const before = await snapshot(dbUrl());
      const response = await repeatFaulty.withFault({ kind: 'unavailable' }, () => execute(server(), { token, loanId: workhorse, sequence: 1, correlationId, body }));
      const record = assertLoanError(response, 502, 'ML-502-001', 'CORE_UNAVAILABLE', executePath(workhorse, 1));
      assert.match(record.message, new RegExp(correlationId), 'tells the client to repeat with the correlation id');
      await assertNothingChanged(dbUrl(), before);
      // The unknown outcome is recorded before the 502 is answered.
      const held = await operationRow(dbUrl(), correlationId);
      assert.equal(held?.status, 'Unknown');
      if (!held) return;

      const repeat = await execute(server(), { token, loanId: workhorse, sequence: 1, correlationId, body });
      assertExecuted(repeat, 'PartiallyExecuted');
      assert.equal(repeat.body.executionReference, held.reference, 'the held operation is the one executed');
      await assertApplied(dbUrl(), before, [
        { loanId: workhorse, sequence: 1, amountMinor: 100_000n, payment: payer, expense: expenseAccount, commissionMinor: 1_000n, feeMinor: 2_500n, taxMinor: 560n },
      ]);
      const again = await execute(server(), { token, loanId: workhorse, sequence: 1, correlationId, body });
      assertLoanError(again, 409, 'ML-409-001', 'DUPLICATE_CORRELATION_ID', executePath(workhorse, 1));
      assert.equal((await executionsOf(dbUrl(), 1)).length, 1, 'exactly one payment');
    });

    test('ML 504: the core fails after the time-out (rolled back) → 504, nothing paid; the repeat reconciles and executes once', async () => {
      const token = await treasury();
      const correlationId = `ml-504-rollback-${randomUUID()}`;
      const body = loanBody({ amount: 3_000 });
      const before = await snapshot(dbUrl());
      // The call is held before the core sees it; the time-out passes on the instances' clock;
      // once let go it fails, and the unit of work rolls back.
      const arrived = repeatFaulty.arrived();
      const request = repeatFaulty.withFault({ kind: 'hold-then-fail' }, () => execute(server(), { token, loanId: workhorse, sequence: 3, correlationId, body }));
      await arrived;
      clock.advance(repeatCoreTimeoutMs);
      const response = await request;
      assertLoanError(response, 504, 'ML-504-001', 'CORE_TIMEOUT', executePath(workhorse, 3));
      repeatFaulty.release();
      await lateWorkSettled(server());
      assert.equal((await operationRow(dbUrl(), correlationId))?.status, 'Unknown', 'the unknown outcome is recorded');
      await assertNothingChanged(dbUrl(), before);

      const repeat = await execute(server(), { token, loanId: workhorse, sequence: 3, correlationId, body });
      assertExecuted(repeat, 'PartiallyExecuted');
      assert.equal((await executionsOf(dbUrl(), 3)).length, 1, 'exactly one payment');
      await assertApplied(dbUrl(), before, [
        { loanId: workhorse, sequence: 3, amountMinor: 300_000n, payment: payer, expense: expenseAccount, commissionMinor: 1_000n, feeMinor: 2_500n, taxMinor: 560n },
      ]);
    });
  },
  { data: loanDataFile, wrapCore: repeatFaulty.wrap, clock, flags: { coreTimeoutMs: String(repeatCoreTimeoutMs), ...reconcilerIdle } },
);
