/**
 * Correlation, duplicates, 200 / 202 and unknown outcomes (docs/api.md, "Correlation ids and
 * duplicates" and "200, 202, 204") on
 * POST /v1/term-deposits/initiate: x-correlation-id echoed, generated and checked; ids consumed
 * once per client, and only by requests that passed authentication, authorization and schema
 * validation; the duplicate window without the header; Prefer: respond-async and the core's
 * batch window (202, GET /v1/operations/{reference}); 502 / 504 from the core, reconciled on
 * repeat so that nothing is executed twice. Real HTTP, real tokens, on each store; the ledger is
 * read from the server's store.
 */
// @deployments remote-core two-instances
// @starts-early: among the slowest files of a quiet run
import { FakeClock } from '../helpers/fake-clock.js';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { findAccount } from '../../src/reference-core/storage/banking.js';
import { depositBody, freshAmount } from '../helpers/bodies.js';
import { FaultyCore } from '../helpers/faulty-core.js';
import { initiatePath, send, uuidPattern, type HttpResult } from '../helpers/http.js';
import { demo, demoToken, startTestServer, type TestServer } from '../helpers/server.js';
import { describeEachStore, describeEachStoreUrl } from '../helpers/suite.js';
import { reconcilerIdle } from '../helpers/reconciler.js';
import { runPendingWorkers } from '../helpers/background.js';
import { findOperation, type OperationRecord } from '../../src/store/operations.js';
import { coreTablesOf } from '../../src/reference-core/storage/core-db.js';
import { embedded } from '../helpers/stores.js';
import { assertErrorBody } from '../helpers/error-record.js';

const initiateRecordPath = `POST ${initiatePath}`;
const sourceAccount = '1000000001';
const referenceInMessage = /operation ([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})/;
/** 300 000 USD: more than 1000000001 ever holds (250 000), within the product's limits. */
const unaffordable = 300_000;

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

interface InitiateOptions {
  /** A token, or null for no Authorization header. */
  token: string | null;
  body?: unknown;
  /** The raw request body, when a test needs exact bytes. */
  raw?: string;
  /** undefined: no x-correlation-id header. */
  correlationId?: string | undefined;
  headers?: Record<string, string>;
}

function initiate(server: TestServer, options: InitiateOptions): Promise<HttpResult> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json', ...options.headers };
  if (options.token !== null) headers.authorization = `Bearer ${options.token}`;
  if (options.correlationId !== undefined) headers['x-correlation-id'] = options.correlationId;
  const body = options.raw ?? JSON.stringify(options.body ?? depositBody());
  return send(`${server.url}${initiatePath}`, { method: 'POST', headers, body });
}

const loanPath = '/v1/merchandising-loan/7000000001/repayment-schedules/1/execute';

/** Pays part of installment 1 of the demo facility 7000000001 (payment 1000000001, charges 1000000002). */
function executeLoan(server: TestServer, token: string, correlationId: string, amountValue: number): Promise<HttpResult> {
  const body = {
    merchandisingLoanFacilityParameterType: 'DocumentaryRemittance',
    merchandisingLoanType: 'CRDE',
    merchandisingLoanFacilityReference: { loanInstallmentSequence: 1, loanAmount: { amountValue, amountCurrency: { currencyCode: 'USD' } } },
    accountReferences: [
      { accountIdentification: { accountIdentificationType: 'PaymentAccount', identifierValue: sourceAccount } },
      { accountIdentification: { accountIdentificationType: 'ExpenseAccount', identifierValue: '1000000002' } },
    ],
  };
  return send(`${server.url}${loanPath}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json', 'x-correlation-id': correlationId },
    body: JSON.stringify(body),
  });
}

function getOperation(server: TestServer, token: string, reference: string, headers: Record<string, string> = {}): Promise<HttpResult> {
  return send(`${server.url}/v1/operations/${encodeURIComponent(reference)}`, {
    headers: { authorization: `Bearer ${token}`, accept: 'application/json', ...headers },
  });
}

/**
 * GET /v1/operations/{reference} once the pending workers of every instance have run a pass (a
 * 202 starts one; this awaits it): the operation has then left Pending, unless the core failed it.
 */
async function settledOperation(server: TestServer, token: string, reference: string): Promise<HttpResult> {
  await runPendingWorkers(server);
  const response = await getOperation(server, token, reference);
  assert.equal(response.status, 200, JSON.stringify(response.body));
  return response;
}

/** Units of work that outlived their 504, on every instance, have committed or been recorded unknown. */
async function lateWorkSettled(server: TestServer): Promise<void> {
  for (const instance of server.instances) await instance.background.execution.idle();
}

/** The API's full record of the operation of a correlation id, as the reconciler takes it. */
async function operationRecord(server: TestServer, correlationId: string): Promise<OperationRecord> {
  const row = await storedOperation(server, correlationId);
  const record = row && (await findOperation(server.coregate.store.db, row.reference));
  if (!record) throw new Error(`no operation for x-correlation-id ${correlationId}`);
  return record;
}

/**
 * The operation of a correlation id settled by the reconciler when it is still unknown (a remote
 * core's late answer found no one waiting; the embedded core's late commit settled it already).
 */
async function reconciled(server: TestServer, correlationId: string): Promise<OperationRecord> {
  const record = await operationRecord(server, correlationId);
  return record.status === 'Unknown' ? server.coregate.reconciler.reconcile(record) : record;
}

/** Balance of an account in minor units, from the server's store. */
async function balanceOf(server: TestServer, account: string = sourceAccount): Promise<bigint> {
  const record = await findAccount(coreTablesOf(server.coregate.store.db), account);
  assert.ok(record, `account ${account} exists`);
  return record.balanceMinor;
}

const minor = (amountValue: number) => BigInt(Math.round(amountValue * 100));

/** Ledger movements (postings) recorded under an operation reference. */
async function movementsOf(server: TestServer, reference: string): Promise<number> {
  const rows = await embedded(server.coregate.store.db).selectFrom('movements').select('id').where('reference', '=', reference).execute();
  return rows.length;
}

async function termDepositCount(server: TestServer): Promise<number> {
  return (await embedded(server.coregate.store.db).selectFrom('term_deposits').select('contract_number').execute()).length;
}

/** The stored operation that consumed a correlation id (ids are random UUIDs: unique across clients here). */
async function storedOperation(server: TestServer, correlationId: string): Promise<{ reference: string; status: string } | undefined> {
  return server.coregate.store.db
    .selectFrom('operations')
    .select(['reference', 'status'])
    .where('correlation_id', '=', correlationId)
    .executeTakeFirst();
}

/** An error record's body at top level (test/helpers/error-record.ts); with `code`, one errordetail naming it. */
function assertErrorRecord(body: any, status: number, path: string, code?: string): void {
  assertErrorBody(body, { status, path, ...(code === undefined ? {} : { code }) });
}

function assertRefused(response: HttpResult, status: number, code: string): void {
  assert.equal(response.status, status, JSON.stringify(response.body));
  assertErrorRecord(response.body, status, initiateRecordPath, code);
}

function assertExecuted(response: HttpResult): void {
  assert.equal(response.status, 200, JSON.stringify(response.body));
  assert.match(String(response.body.operationReference), uuidPattern);
  assert.equal(typeof response.body.termDepositAccount, 'string');
}

/** 409 for a repeated correlation id, naming the original operation's reference and outcome. */
function assertDuplicateId(response: HttpResult, reference: string, outcome: RegExp): void {
  assertRefused(response, 409, 'TD-409-001');
  assert.equal(response.body.errordetail[0].reason, 'DUPLICATE_CORRELATION_ID');
  assert.ok(response.body.message.includes(reference), `the message names ${reference}: ${response.body.message}`);
  assert.match(response.body.message, outcome);
}

// =============================================================================================
// x-correlation-id and the duplicate protection
// =============================================================================================

describeEachStore('correlation ids and duplicate protection', ({ server }) => {
  // --- echo ------------------------------------------------------------------------------------

  const echoCases: Array<[string, number, (id: string) => Promise<HttpResult>]> = [
    ['200', 200, async (id) => initiate(server(), { token: await demoToken(server()), correlationId: id })],
    ['400 (schema failure)', 400, async (id) => initiate(server(), { token: await demoToken(server()), correlationId: id, body: { customerReference: 'C0001' } })],
    ['401 (no token)', 401, async (id) => initiate(server(), { token: null, correlationId: id })],
    ['403 (missing scope)', 403, async (id) => initiate(server(), { token: await demoToken(server(), demo.reporting), correlationId: id })],
    [
      '409 (repeated id)',
      409,
      async (id) => {
        const token = await demoToken(server());
        assertExecuted(await initiate(server(), { token, correlationId: id }));
        return initiate(server(), { token, correlationId: id });
      },
    ],
    ['422 (insufficient funds)', 422, async (id) => initiate(server(), { token: await demoToken(server()), correlationId: id, body: depositBody(unaffordable) })],
    ['404 (unknown operation)', 404, async (id) => getOperation(server(), await demoToken(server()), randomUUID(), { 'x-correlation-id': id })],
  ];
  for (const [name, status, run] of echoCases) {
    test(`x-correlation-id is echoed on a ${name} response`, async () => {
      const id = `echo-${status}-${randomUUID()}`;
      const response = await run(id);
      assert.equal(response.status, status, JSON.stringify(response.body));
      assert.equal(response.headers.get('x-correlation-id'), id);
    });
  }

  test('x-correlation-id is generated (a UUID) when absent: on 200 and on 401, a different one each time', async () => {
    const token = await demoToken(server());
    const ok = await initiate(server(), { token });
    assertExecuted(ok);
    const unauthorized = await initiate(server(), { token: null });
    assert.equal(unauthorized.status, 401);
    const ids = [ok.headers.get('x-correlation-id'), unauthorized.headers.get('x-correlation-id')];
    for (const id of ids) assert.match(String(id), uuidPattern);
    assert.notEqual(ids[0], ids[1]);
  });

  // --- validity ----------------------------------------------------------------------------------

  for (const [name, id] of [
    ['empty', ''],
    ['129 characters', 'a'.repeat(129)],
    ['with a space', 'abc def'],
    ['with a non-ASCII character (é)', 'caf\u00e9-1'],
    ['with a slash (a/b)', 'a/b'],
    ['with a comma', 'a,b'],
  ] as const) {
    test(`an invalid x-correlation-id, ${name} → 400 VALIDATION_ERROR TD-400-004, nothing executed`, async () => {
      const token = await demoToken(server());
      const before = await balanceOf(server());
      const response = await initiate(server(), { token, correlationId: id });
      assertRefused(response, 400, 'TD-400-004');
      assert.equal(response.body.errordetail[0].reason, 'INVALID_CORRELATION_ID');
      assert.equal(await balanceOf(server()), before);
    });
  }

  test('an x-correlation-id of exactly 128 characters of A-Z a-z 0-9 . _ : - is accepted and echoed', async () => {
    const allowed = `ABCxyz019._:-${randomUUID().replace(/-/g, '')}`;
    const id = allowed.repeat(Math.ceil(128 / allowed.length)).slice(0, 128);
    assert.equal(id.length, 128);
    const response = await initiate(server(), { token: await demoToken(server()), correlationId: id });
    assertExecuted(response);
    assert.equal(response.headers.get('x-correlation-id'), id);
  });

  // --- consumption -----------------------------------------------------------------------------

  test('the same id again, with a different body → 409 CONFLICT naming the original reference and outcome; executed once', async () => {
    const token = await demoToken(server());
    const id = randomUUID();
    const before = await balanceOf(server());
    const first = await initiate(server(), { token, correlationId: id, body: depositBody(1500) });
    assertExecuted(first);
    const repeat = await initiate(server(), { token, correlationId: id, body: depositBody(freshAmount()) });
    assertDuplicateId(repeat, first.body.operationReference, /Executed/);
    assert.equal(await balanceOf(server()), before - minor(1500));
    assert.equal(await movementsOf(server(), first.body.operationReference), 1);
  });

  test('the same id again with the same body → 409 as well (not a second execution)', async () => {
    const token = await demoToken(server());
    const id = randomUUID();
    const body = depositBody();
    const first = await initiate(server(), { token, correlationId: id, body });
    assertExecuted(first);
    const before = await balanceOf(server());
    assertDuplicateId(await initiate(server(), { token, correlationId: id, body }), first.body.operationReference, /Executed/);
    assert.equal(await balanceOf(server()), before);
  });

  test('an id consumed by a refused request (422 insufficient funds) → 409 naming the rejection, even with a valid body', async () => {
    const token = await demoToken(server());
    const id = randomUUID();
    const refused = await initiate(server(), { token, correlationId: id, body: depositBody(unaffordable) });
    assertRefused(refused, 422, 'TD-422-002');
    assert.equal(refused.body.errordetail[0].reason, 'INSUFFICIENT_FUNDS_SOURCE_ACCOUNT');
    const stored = await storedOperation(server(), id);
    assert.ok(stored, 'the refusal consumed the id');
    const before = await balanceOf(server());
    const repeat = await initiate(server(), { token, correlationId: id });
    assertDuplicateId(repeat, stored.reference, /Rejected/);
    assert.match(repeat.body.message, /422/);
    assert.match(repeat.body.message, /TD-422-002/);
    assert.equal(await balanceOf(server()), before);
  });

  test('an id used for a 400 schema failure is not consumed: the repeat with a valid body succeeds', async () => {
    const token = await demoToken(server());
    const id = randomUUID();
    const { customerReference: _omitted, ...missingCustomer } = depositBody();
    const invalid = await initiate(server(), { token, correlationId: id, body: missingCustomer });
    assertRefused(invalid, 400, 'TD-400-002');
    assert.equal(await storedOperation(server(), id), undefined);
    assertExecuted(await initiate(server(), { token, correlationId: id }));
  });

  test('an id used for a 400 of the checks that need no stored data (amount 0, too many decimals) is not consumed', async () => {
    const token = await demoToken(server());
    const id = randomUUID();
    assertRefused(await initiate(server(), { token, correlationId: id, body: depositBody(0) }), 400, 'TD-400-005');
    assertRefused(await initiate(server(), { token, correlationId: id, body: depositBody(1000.001) }), 400, 'TD-400-006');
    assertExecuted(await initiate(server(), { token, correlationId: id }));
  });

  test('an id used by a request refused with 401 or 403 (same client, narrowed scope or Disabled user) is not consumed', async () => {
    const id = randomUUID();
    assert.equal((await initiate(server(), { token: null, correlationId: id })).status, 401);
    const narrowed = await demoToken(server(), demo.treasury, { scope: 'termDeposit:retrieve' });
    assertRefused(await initiate(server(), { token: narrowed, correlationId: id }), 403, 'TD-403-001');
    const disabledUser = await demoToken(server(), demo.treasury, { username: 'former-clerk', workstation: 'WS-BRANCH-07' });
    assertRefused(await initiate(server(), { token: disabledUser, correlationId: id }), 403, 'TD-403-002');
    assertExecuted(await initiate(server(), { token: await demoToken(server()), correlationId: id }));
  });

  test('ids are per client: another client may use the same id; the first client still gets 409', async () => {
    const id = randomUUID();
    const treasury = await demoToken(server());
    const branch = await demoToken(server(), demo.branch);
    const first = await initiate(server(), { token: treasury, correlationId: id });
    assertExecuted(first);
    const other = await initiate(server(), { token: branch, correlationId: id });
    assertExecuted(other);
    assert.notEqual(other.body.operationReference, first.body.operationReference);
    assertDuplicateId(await initiate(server(), { token: treasury, correlationId: id }), first.body.operationReference, /Executed/);
    assertDuplicateId(await initiate(server(), { token: branch, correlationId: id }), other.body.operationReference, /Executed/);
  });

  test('concurrent requests with the same id: exactly one executes, every other one gets 409 naming it', async () => {
    const token = await demoToken(server());
    const id = randomUUID();
    const before = await balanceOf(server());
    const responses = await Promise.all(Array.from({ length: 6 }, () => initiate(server(), { token, correlationId: id, body: depositBody(1111) })));
    const executed = responses.filter((response) => response.status === 200);
    assert.equal(executed.length, 1, JSON.stringify(responses.map((response) => [response.status, response.body.message])));
    const reference = String(executed[0]?.body.operationReference);
    for (const response of responses.filter((candidate) => candidate.status !== 200)) assertDuplicateId(response, reference, /Executed|Pending/);
    assert.equal(await balanceOf(server()), before - minor(1111));
    assert.equal(await movementsOf(server(), reference), 1);
  });

  test('ids form one namespace per client across both operations: a term deposit\'s id → 409 on the loan operation, and the reverse', async () => {
    const token = await demoToken(server());
    const tdId = randomUUID();
    const deposit = await initiate(server(), { token, correlationId: tdId });
    assertExecuted(deposit);
    const loanRefused = await executeLoan(server(), token, tdId, 100);
    assert.equal(loanRefused.status, 409, JSON.stringify(loanRefused.body));
    assert.deepEqual(Object.keys(loanRefused.body), ['error'], 'the loan operation wraps its error record');
    assertErrorRecord(loanRefused.body.error, 409, `POST ${loanPath}`, 'ML-409-001');
    assert.ok(loanRefused.body.error.message.includes(deposit.body.operationReference), loanRefused.body.error.message);

    const loanId = randomUUID();
    const loan = await executeLoan(server(), token, loanId, 101);
    assert.equal(loan.status, 200, JSON.stringify(loan.body));
    const depositRefused = await initiate(server(), { token, correlationId: loanId });
    assertDuplicateId(depositRefused, String(loan.body.executionReference), /Executed/);
  });

  // --- duplicate window without the header -------------------------------------------------------

  test('without x-correlation-id: the same body to the same path again → 409 TD-409-002 naming the original; a different body → 200', async () => {
    const token = await demoToken(server());
    const body = depositBody();
    const first = await initiate(server(), { token, body });
    assertExecuted(first);
    const before = await balanceOf(server());
    const repeat = await initiate(server(), { token, body });
    assertRefused(repeat, 409, 'TD-409-002');
    assert.equal(repeat.body.errordetail[0].reason, 'DUPLICATE_REQUEST');
    assert.ok(repeat.body.message.includes(first.body.operationReference), repeat.body.message);
    assert.equal(await balanceOf(server()), before);
    assertExecuted(await initiate(server(), { token, body: depositBody() }));
  });

  test('without x-correlation-id: bodies equal after JSON canonicalization (key order, whitespace, 1000.0) are duplicates', async () => {
    const token = await demoToken(server());
    const amount = freshAmount();
    const body = depositBody(amount);
    assertExecuted(await initiate(server(), { token, body }));
    const reordered = Object.fromEntries(Object.entries(body).reverse());
    const raw = `  ${JSON.stringify(reordered, null, 4).replace(`"amountValue": ${amount}`, `"amountValue": ${amount}.0`)}\n`;
    assert.ok(raw.includes(`${amount}.0`));
    assertRefused(await initiate(server(), { token, raw }), 409, 'TD-409-002');
  });

  test('without x-correlation-id: concurrent identical bodies → exactly one executes, the others get 409 TD-409-002', async () => {
    const token = await demoToken(server());
    const amount = freshAmount();
    const before = await balanceOf(server());
    const responses = await Promise.all(Array.from({ length: 6 }, () => initiate(server(), { token, body: depositBody(amount) })));
    const executed = responses.filter((response) => response.status === 200);
    assert.equal(executed.length, 1, JSON.stringify(responses.map((response) => [response.status, response.body.message])));
    for (const response of responses.filter((candidate) => candidate.status !== 200)) assertRefused(response, 409, 'TD-409-002');
    assert.equal(await balanceOf(server()), before - minor(amount));
  });

  test('without x-correlation-id: another client may send the same body', async () => {
    const body = depositBody();
    assertExecuted(await initiate(server(), { token: await demoToken(server()), body }));
    assertExecuted(await initiate(server(), { token: await demoToken(server(), demo.branch), body }));
  });

  test('without x-correlation-id: a repeat of a refused body (422) within the window → 409 naming the rejection', async () => {
    const token = await demoToken(server());
    const body = depositBody(unaffordable + freshAmount());
    assertRefused(await initiate(server(), { token, body }), 422, 'TD-422-002');
    const repeat = await initiate(server(), { token, body });
    assertRefused(repeat, 409, 'TD-409-002');
    assert.match(repeat.body.message, /Rejected/);
  });

  test('issue 12 item 1: an id a client library generated (x-correlation-id-generated: true) keeps the window: the same body under a new generated id → 409 TD-409-002; the same generated id again → 409 TD-409-001 naming the original', async () => {
    const token = await demoToken(server());
    const body = depositBody();
    const generated = { 'x-correlation-id-generated': 'true' };
    const firstId = randomUUID();
    const first = await initiate(server(), { token, body, correlationId: firstId, headers: generated });
    assertExecuted(first);
    assert.equal(first.headers.get('x-correlation-id'), firstId, 'the generated id is the operation\'s correlation id');
    assertRefused(await initiate(server(), { token, body, correlationId: randomUUID(), headers: generated }), 409, 'TD-409-002');
    assertDuplicateId(await initiate(server(), { token, body, correlationId: firstId, headers: generated }), String(first.body.operationReference), /Executed/);
    assertExecuted(await initiate(server(), { token, body, correlationId: randomUUID() }));
  });
});

describeEachStore(
  'duplicate window disabled (--duplicate-window 0)',
  ({ server }) => {
    test('the same body twice without x-correlation-id → 200 twice, two contracts, two debits', async () => {
      const token = await demoToken(server());
      const body = depositBody(2000);
      const before = await balanceOf(server());
      const first = await initiate(server(), { token, body });
      const second = await initiate(server(), { token, body });
      assertExecuted(first);
      assertExecuted(second);
      assert.notEqual(first.body.operationReference, second.body.operationReference);
      assert.notEqual(first.body.termDepositAccount, second.body.termDepositAccount);
      assert.equal(await balanceOf(server()), before - 2n * minor(2000));
    });

    test('a repeated x-correlation-id is still refused with 409 (the window only concerns requests without the header)', async () => {
      const token = await demoToken(server());
      const id = randomUUID();
      const first = await initiate(server(), { token, correlationId: id });
      assertExecuted(first);
      assertDuplicateId(await initiate(server(), { token, correlationId: id }), first.body.operationReference, /Executed/);
    });
  },
  { flags: { duplicateWindow: '0' } },
);

/** The window is measured on this clock: the test moves it across the window's end instead of sleeping. */
const windowClock = new FakeClock(Date.now());

describeEachStore(
  'duplicate window of 1 second (--duplicate-window 1)',
  ({ server }) => {
    test('the same body without x-correlation-id is a duplicate within the window and accepted again once it has passed', async () => {
      const token = await demoToken(server());
      const body = depositBody();
      const first = await initiate(server(), { token, body });
      assertExecuted(first);
      assertRefused(await initiate(server(), { token, body }), 409, 'TD-409-002');
      windowClock.advance(999);
      assertRefused(await initiate(server(), { token, body }), 409, 'TD-409-002');
      // Past the window's end on the instance's clock: the same body is a new operation.
      windowClock.advance(101);
      const later = await initiate(server(), { token, body });
      assertExecuted(later);
      assert.notEqual(later.body.operationReference, first.body.operationReference);
    });
  },
  { flags: { duplicateWindow: '1' }, clock: windowClock },
);

// =============================================================================================
// 202: Prefer: respond-async, GET /v1/operations/{reference}
// =============================================================================================

describeEachStore('202 respond-async and GET /v1/operations/{reference}', ({ server }) => {
  async function acceptAsync(token: string, body: unknown, correlationId: string = randomUUID()): Promise<string> {
    const response = await initiate(server(), { token, body, correlationId, headers: { prefer: 'respond-async' } });
    assert.equal(response.status, 202, JSON.stringify(response.body));
    assert.equal(response.headers.get('preference-applied'), 'respond-async');
    assert.equal(response.headers.get('x-correlation-id'), correlationId);
    const reference = String(response.body.operationReference);
    assert.match(reference, uuidPattern);
    assert.equal(response.headers.get('location'), `/v1/operations/${reference}`);
    assert.deepEqual(response.body, { operationReference: reference, termDepositStatus: 'Pending' });
    return reference;
  }

  test('Prefer: respond-async → 202 {operationReference, termDepositStatus: Pending} with Preference-Applied and Location; the operation then executes once', async () => {
    const token = await demoToken(server());
    const before = await balanceOf(server());
    const reference = await acceptAsync(token, depositBody(3000));
    const settled = await settledOperation(server(), token, reference);
    assert.deepEqual(Object.keys(settled.body).sort(), ['operation', 'reference', 'result', 'status']);
    assert.equal(settled.body.reference, reference);
    assert.equal(settled.body.operation, 'initiateTermDeposit');
    assert.equal(settled.body.status, 'Executed');
    const result = settled.body.result;
    assert.equal(result.operationReference, reference);
    assert.equal(result.customerReference, 'C0001');
    assert.deepEqual(result.principalAmount, { amountValue: 3000, amountCurrency: { currencycode: 'USD' } });
    assert.equal(result.sourceAccount.accountIdentification, sourceAccount);
    assert.ok(result.termDepositPeriod.numberOfDays >= 90);
    assert.equal(await balanceOf(server()), before - minor(3000));
    assert.equal(await movementsOf(server(), reference), 1);

    // The result is the contract the core holds.
    const retrieved = await send(`${server().url}/v1/term-deposits/${result.termDepositAccount}/retrieve`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(retrieved.status, 200);
    assert.equal(retrieved.body.operationReference, reference);
  });

  test('GET /v1/operations/{reference} of a synchronous (200) operation → Executed with exactly the 200 body as result', async () => {
    const token = await demoToken(server());
    const done = await initiate(server(), { token, correlationId: randomUUID() });
    assertExecuted(done);
    const view = await getOperation(server(), token, done.body.operationReference);
    assert.equal(view.status, 200);
    assert.equal(view.body.status, 'Executed');
    assert.deepEqual(view.body.result, done.body);
  });

  test('Prefer with several preferences (return=representation, respond-async; wait=5) still answers 202', async () => {
    const token = await demoToken(server());
    const response = await initiate(server(), { token, correlationId: randomUUID(), headers: { prefer: 'return=representation, respond-async; wait=5' } });
    assert.equal(response.status, 202, JSON.stringify(response.body));
    assert.match(response.headers.get('preference-applied') ?? '', /respond-async/);
    assert.equal((await settledOperation(server(), token, response.body.operationReference)).body.status, 'Executed');
  });

  test('the id of a 202 is consumed: repeating it → 409 naming the accepted operation\'s reference', async () => {
    const token = await demoToken(server());
    const id = randomUUID();
    const reference = await acceptAsync(token, depositBody(), id);
    const repeat = await initiate(server(), { token, correlationId: id, headers: { prefer: 'respond-async' } });
    assertDuplicateId(repeat, reference, /Pending|Executed/);
    await settledOperation(server(), token, reference);
    assertDuplicateId(await initiate(server(), { token, correlationId: id }), reference, /Executed/);
  });

  test('an async request that breaks a rule (insufficient funds) ends Rejected with error = the error record', async () => {
    const token = await demoToken(server());
    const before = await balanceOf(server());
    const reference = await acceptAsync(token, depositBody(unaffordable));
    const settled = await settledOperation(server(), token, reference);
    assert.deepEqual(Object.keys(settled.body).sort(), ['error', 'operation', 'reference', 'status']);
    assert.equal(settled.body.status, 'Rejected');
    assertErrorRecord(settled.body.error, 422, initiateRecordPath, 'TD-422-002');
    assert.equal(settled.body.error.errordetail[0].reason, 'INSUFFICIENT_FUNDS_SOURCE_ACCOUNT');
    assert.equal(await balanceOf(server()), before);
    assert.equal(await movementsOf(server(), reference), 0);
  });

  test('a 202 request is validated first: a schema failure with Prefer: respond-async → 400, no operation', async () => {
    const token = await demoToken(server());
    const id = randomUUID();
    const response = await initiate(server(), { token, correlationId: id, body: { ...depositBody(), valueDate: '2026-02-30' }, headers: { prefer: 'respond-async' } });
    assert.equal(response.status, 400, JSON.stringify(response.body));
    assert.equal(await storedOperation(server(), id), undefined);
  });

  test('GET /v1/operations/{reference} by another client → 404 NOT_FOUND (as an unknown reference)', async () => {
    const token = await demoToken(server());
    const reference = await acceptAsync(token, depositBody());
    const otherClient = await demoToken(server(), demo.branch);
    const response = await getOperation(server(), otherClient, reference);
    assert.equal(response.status, 404);
    assertErrorRecord(response.body, 404, `GET /v1/operations/${reference}`);
    const unknown = await getOperation(server(), otherClient, randomUUID());
    assert.equal(unknown.status, 404);
    assert.equal(response.body.message.replace(reference, 'X'), unknown.body.message.replace(/[0-9a-f-]{36}/, 'X'), 'another client\'s reference reads as an unknown one');
  });

  test('GET /v1/operations/{reference} with a token of the same client lacking the original operation\'s scope → 403 insufficient_scope', async () => {
    const token = await demoToken(server());
    const reference = await acceptAsync(token, depositBody());
    const narrowed = await demoToken(server(), demo.treasury, { scope: 'termDeposit:retrieve' });
    const response = await getOperation(server(), narrowed, reference);
    assert.equal(response.status, 403, JSON.stringify(response.body));
    assert.equal(response.body.reason, 'FORBIDDEN');
    assert.equal(response.body.path, `GET /v1/operations/${reference}`);
    assert.match(response.headers.get('www-authenticate') ?? '', /error="insufficient_scope"/);
    assert.match(response.headers.get('www-authenticate') ?? '', /scope="termDeposit:initiate"/);
  });

  test('GET /v1/operations/{reference} with an unknown reference → 404 record', async () => {
    const reference = randomUUID();
    const response = await getOperation(server(), await demoToken(server()), reference);
    assert.equal(response.status, 404);
    assertErrorRecord(response.body, 404, `GET /v1/operations/${reference}`);
  });
});

// =============================================================================================
// The core's batch window: 202 without Prefer, executed once the window closes
// =============================================================================================

/** `HH:MM:SS` (UTC) of an epoch second; the window may wrap midnight, which the server accepts. */
const utcClock = (epochSecond: number) => new Date(epochSecond * 1000).toISOString().slice(11, 19);

/**
 * Starts a server on a fake clock whose core batch window opened a second ago and closes four
 * seconds from now: the window closes when the test moves the clock, whatever the start-up took.
 */
async function startInsideBatchWindow(db: string): Promise<{ server: TestServer; clock: FakeClock; windowEndMs: number }> {
  const clock = new FakeClock(Math.floor(Date.now() / 1000) * 1000);
  const nowSecond = clock.now() / 1000;
  const endSecond = nowSecond + 4;
  const server = await startTestServer({ db, clock, flags: { coreBatchWindow: `${utcClock(nowSecond - 1)}-${utcClock(endSecond)}` } });
  return { server, clock, windowEndMs: endSecond * 1000 };
}

describeEachStoreUrl('core batch window (--core-batch-window)', ({ dbUrl }) => {
  test('inside the window a request without Prefer gets 202; after the window closes it is Executed and the balance changes once', async () => {
    const { server, clock, windowEndMs } = await startInsideBatchWindow(dbUrl());
    try {
      assert.equal(server.coregate.runner.inBatchWindow(), true);
      const token = await demoToken(server);
      const before = await balanceOf(server);
      const response = await initiate(server, { token, correlationId: randomUUID(), body: depositBody(4000) });
      assert.equal(response.status, 202, JSON.stringify(response.body));
      assert.equal(response.headers.get('preference-applied'), null, 'no preference was sent, none applied');
      const reference = String(response.body.operationReference);
      assert.deepEqual(response.body, { operationReference: reference, termDepositStatus: 'Pending' });
      assert.equal(response.headers.get('location'), `/v1/operations/${reference}`);

      // Queued while the window is open: nothing debited yet, even by a pass of the worker.
      await runPendingWorkers(server);
      const pending = await getOperation(server, token, reference);
      assert.equal(pending.body.status, 'Pending');
      assert.equal(await balanceOf(server), before);

      clock.set(windowEndMs + 1_000);
      assert.equal(server.coregate.runner.inBatchWindow(), false, 'the window has closed');
      // Moving the clock fired the worker's timers at their due times, inside the window: a pass
      // they started may still be under way (and finds the window open); it is awaited here, then
      // the next pass runs after the window.
      await runPendingWorkers(server);
      const settled = await settledOperation(server, token, reference);
      assert.equal(settled.body.status, 'Executed', 'executed once the window closed');
      assert.equal(settled.body.result.operationReference, reference);
      assert.equal(await balanceOf(server), before - minor(4000));
      assert.equal(await movementsOf(server, reference), 1);
      // Later passes of the worker do not execute it again.
      clock.advance(1_200);
      await runPendingWorkers(server);
      assert.equal(await balanceOf(server), before - minor(4000));
    } finally {
      await server.close();
    }
  });
});

// =============================================================================================
// Core faults: 502 / 504, unknown outcomes reconciled on repeat
// =============================================================================================

const faulty = new FaultyCore();
/**
 * The instances' clock in the fault suites: a core time-out passes when a test moves it, the core's
 * answer held meanwhile (FaultyCore's gated kinds). At the real time: a remote core (another
 * process, on the system's clock) dates what it writes.
 */
const clock = new FakeClock(Date.now());
const coreTimeoutMs = 300;
const repeatCoreTimeoutMs = 1_000;

/** `send` with the core's work done and its answer held until the clock has passed `timeoutMs`: answered 504; the held answer then goes on. */
async function afterTimeOut(core: FaultyCore, timeoutMs: number, send: () => Promise<HttpResult>): Promise<HttpResult> {
  const arrived = core.arrived();
  const request = core.withFault({ kind: 'commit-then-hold' }, send);
  await arrived;
  clock.advance(timeoutMs);
  return request;
}

describeEachStore(
  'core faults: 502 / 504, settled in the background',
  ({ server }) => {
    test('core commits, its answer held past the time-out (commit-then-hold) → 504 CORE_TIMEOUT; executed once; the repeat → 409 naming the original; GET shows Executed', async () => {
      const token = await demoToken(server());
      const id = randomUUID();
      const body = depositBody(6000);
      const before = await balanceOf(server());

      const timedOut = await afterTimeOut(faulty, coreTimeoutMs, () => initiate(server(), { token, correlationId: id, body }));
      assertRefused(timedOut, 504, 'TD-504-001');
      assert.equal(timedOut.body.errordetail[0].reason, 'CORE_TIMEOUT');
      assert.ok(timedOut.body.message.includes(id), 'the message says to repeat with the same correlation id');

      // The core's late answer goes on: the unit of work commits (embedded), or the reconciler
      // settles it by reference (remote). One execution in the ledger.
      faulty.release();
      await lateWorkSettled(server());
      const stored = await reconciled(server(), id);
      assert.equal(stored.status, 'Executed');
      assert.equal(await balanceOf(server()), before - minor(6000));
      assert.equal(await movementsOf(server(), stored.reference), 1);

      const repeat = await initiate(server(), { token, correlationId: id, body });
      assertDuplicateId(repeat, stored.reference, /Executed/);
      assert.equal(referenceInMessage.exec(repeat.body.message)?.[1], stored.reference);
      assert.equal(await balanceOf(server()), before - minor(6000));

      const view = await getOperation(server(), token, stored.reference);
      assert.equal(view.status, 200);
      assert.equal(view.body.status, 'Executed');
      assert.equal(view.body.result.operationReference, stored.reference);
      assert.deepEqual(view.body.result.principalAmount, { amountValue: 6000, amountCurrency: { currencycode: 'USD' } });
    });

    test('a repeat while the timed-out work is still in flight never executes twice (409, then 409 naming the original)', async () => {
      const token = await demoToken(server());
      const id = randomUUID();
      const body = depositBody(6500);
      const before = await balanceOf(server());
      const first = await afterTimeOut(faulty, coreTimeoutMs, () => initiate(server(), { token, correlationId: id, body }));
      assertRefused(first, 504, 'TD-504-001');
      // The repeat while the first one's work is still held: with a remote core it finds the claim
      // in flight at once; with the embedded core it waits for the first one's unit of work (the
      // claim is in it), which commits once the core's answer goes on.
      const repeating = initiate(server(), { token, correlationId: id, body });
      faulty.release();
      const inFlight = await repeating;
      assert.equal(inFlight.status, 409, `${inFlight.status} ${JSON.stringify(inFlight.body)}`);

      await lateWorkSettled(server());
      const stored = await reconciled(server(), id);
      assert.equal(stored.status, 'Executed');
      assertDuplicateId(await initiate(server(), { token, correlationId: id, body }), stored.reference, /Executed/);
      assert.equal(await balanceOf(server()), before - minor(6500));
      assert.equal(await movementsOf(server(), stored.reference), 1);
    });

    test('concurrent repeats of an unknown outcome (after a 502) execute it exactly once; the others get 409', async () => {
      const token = await demoToken(server());
      const id = randomUUID();
      const body = depositBody(8000);
      const before = await balanceOf(server());
      assertRefused(await faulty.withFault({ kind: 'unavailable' }, () => initiate(server(), { token, correlationId: id, body })), 502, 'TD-502-001');
      const unknown = await storedOperation(server(), id);
      assert.equal(unknown?.status, 'Unknown');

      const repeats = await Promise.all(Array.from({ length: 5 }, () => initiate(server(), { token, correlationId: id, body })));
      const seen = JSON.stringify(repeats.map((response) => [response.status, response.body.message]));
      // One repeat executes it (the core time-out is on the fake clock, which stands still: none
      // passes, however loaded the machine); the others wait on its claim and get 409. Never two
      // 200s, never two movements.
      const executed = repeats.filter((response) => response.status === 200);
      assert.equal(executed.length, 1, seen);
      for (const response of executed) assert.equal(response.body.operationReference, unknown?.reference);
      for (const response of repeats.filter((candidate) => candidate.status !== 200)) assertDuplicateId(response, String(unknown?.reference), /Executed|Pending/);
      const settled = await settledOperation(server(), token, String(unknown?.reference));
      assert.equal(settled.body.status, 'Executed');
      assert.equal(await balanceOf(server()), before - minor(8000));
      assert.equal(await movementsOf(server(), String(unknown?.reference)), 1);
    });

    test('nothing acknowledged is lost: a 202 accepted while the core is unavailable stays Pending, then executes once the core is back', async () => {
      const token = await demoToken(server());
      const before = await balanceOf(server());
      const reference = await faulty.withFault({ kind: 'unavailable' }, async () => {
        const accepted = await initiate(server(), { token, correlationId: randomUUID(), body: depositBody(9000), headers: { prefer: 'respond-async' } });
        assert.equal(accepted.status, 202, JSON.stringify(accepted.body));
        const accepted202Reference = String(accepted.body.operationReference);
        // The worker's pass (started by the 202) tried and failed: still pending, nothing debited.
        await runPendingWorkers(server());
        assert.ok(server().logLines.some((line) => line.includes(accepted202Reference) && line.includes('not executed yet')), 'the worker tried and failed');
        const view = await getOperation(server(), token, accepted202Reference);
        assert.equal(view.body.status, 'Pending');
        assert.equal(await balanceOf(server()), before);
        return accepted202Reference;
      });
      // The core is back: the reconciler owes the accepted operation its execution.
      const owed = await findOperation(server().coregate.store.db, reference);
      assert.ok(owed);
      assert.equal((await server().coregate.reconciler.reconcile(owed)).status, 'Executed');
      const settled = await getOperation(server(), token, reference);
      assert.equal(settled.body.status, 'Executed');
      assert.equal(await balanceOf(server()), before - minor(9000));
      assert.equal(await movementsOf(server(), reference), 1);
    });
  },
  // The reconciler idle: the tests run it (on the fake clock no pass would come by itself anyway).
  { wrapCore: faulty.wrap, clock, flags: { coreTimeoutMs: String(coreTimeoutMs), ...reconcilerIdle } },
);

// The client's repeat after a 502/504 executes an operation the core never did (docs/api.md,
// "Correlation ids and duplicates"): the reconciler stays idle so that it cannot fence the
// operation first (helpers/reconciler.ts), and the time-out is one a loaded machine's core calls
// stay within.
const repeatFaulty = new FaultyCore();

describeEachStore(
  "core faults: 502 / 504, the client's repeat reconciles",
  ({ server }) => {
    test('core unavailable → 502 CORE_UNAVAILABLE with Location, nothing written; a repeat during the outage → 502 with the same Location; the repeat after recovery executes now → 200, once', async () => {
      const token = await demoToken(server());
      const id = randomUUID();
      const body = depositBody(5000);
      const before = await balanceOf(server());
      const contractsBefore = await termDepositCount(server());
      const writesBefore = repeatFaulty.writes;

      const failed = await repeatFaulty.withFault({ kind: 'unavailable' }, () => initiate(server(), { token, correlationId: id, body }));
      assertRefused(failed, 502, 'TD-502-001');
      assert.equal(failed.body.errordetail[0].reason, 'CORE_UNAVAILABLE');
      assert.equal(failed.headers.get('x-correlation-id'), id);
      assert.equal(await balanceOf(server()), before);
      assert.equal(await termDepositCount(server()), contractsBefore);
      assert.equal(repeatFaulty.writes, writesBefore, 'the core was never written to');
      const unknown = await storedOperation(server(), id);
      assert.equal(unknown?.status, 'Unknown', 'the outcome is held as unknown');
      // The 502 of an unknown outcome says where to follow it, and so does a repeat the core still
      // cannot settle.
      assert.equal(failed.headers.get('location'), `/v1/operations/${unknown?.reference}`);
      const duringOutage = await repeatFaulty.withFault({ kind: 'unavailable' }, () => initiate(server(), { token, correlationId: id, body }));
      assertRefused(duringOutage, 502, 'TD-502-001');
      assert.equal(duringOutage.headers.get('location'), `/v1/operations/${unknown?.reference}`);
      assert.equal((await storedOperation(server(), id))?.status, 'Unknown');

      const repeat = await initiate(server(), { token, correlationId: id, body });
      assertExecuted(repeat);
      assert.equal(repeat.body.operationReference, unknown?.reference, 'the repeat executes the original operation');
      assert.equal(await balanceOf(server()), before - minor(5000));
      assert.equal(await movementsOf(server(), repeat.body.operationReference), 1);

      assertDuplicateId(await initiate(server(), { token, correlationId: id, body }), repeat.body.operationReference, /Executed/);
      assert.equal(await balanceOf(server()), before - minor(5000));
    });

    test('core fails after the time-out (hold-then-fail) → 504; the repeat executes now → 200; exactly one debit', async () => {
      const token = await demoToken(server());
      const id = randomUUID();
      const body = depositBody(7000);
      const before = await balanceOf(server());
      const contractsBefore = await termDepositCount(server());

      // Held before the core sees it; the time-out passes on the clock (504); let go, it fails: the
      // unit of work rolls back, then the outcome is recorded as unknown.
      const arrived = repeatFaulty.arrived();
      const request = repeatFaulty.withFault({ kind: 'hold-then-fail' }, () => initiate(server(), { token, correlationId: id, body }));
      await arrived;
      clock.advance(repeatCoreTimeoutMs);
      const timedOut = await request;
      repeatFaulty.release();
      await lateWorkSettled(server());
      assertRefused(timedOut, 504, 'TD-504-001');
      assert.equal(await balanceOf(server()), before);
      assert.equal(await termDepositCount(server()), contractsBefore);
      const unknown = await storedOperation(server(), id);
      assert.ok(unknown);

      // Until a repeat reconciles it, the operation reads as pending (not final).
      const pendingView = await getOperation(server(), token, unknown.reference);
      assert.equal(pendingView.status, 200);
      assert.equal(pendingView.body.status, 'Pending');

      const repeat = await initiate(server(), { token, correlationId: id, body });
      assertExecuted(repeat);
      assert.equal(repeat.body.operationReference, unknown.reference);
      assert.equal(await balanceOf(server()), before - minor(7000));
      assert.equal(await termDepositCount(server()), contractsBefore + 1);
      assert.equal(await movementsOf(server(), unknown.reference), 1);

      assertDuplicateId(await initiate(server(), { token, correlationId: id, body }), unknown.reference, /Executed/);
      assert.equal(await balanceOf(server()), before - minor(7000));
      assert.equal((await getOperation(server(), token, unknown.reference)).body.status, 'Executed');
    });

    test('an unknown outcome (502) repeated with Prefer: respond-async → 202 under the original reference, then Executed once', async () => {
      const token = await demoToken(server());
      const id = randomUUID();
      const body = depositBody(8500);
      const before = await balanceOf(server());
      assertRefused(await repeatFaulty.withFault({ kind: 'unavailable' }, () => initiate(server(), { token, correlationId: id, body })), 502, 'TD-502-001');
      const unknown = await storedOperation(server(), id);
      assert.equal(unknown?.status, 'Unknown');

      const accepted = await initiate(server(), { token, correlationId: id, body, headers: { prefer: 'respond-async' } });
      assert.equal(accepted.status, 202, JSON.stringify(accepted.body));
      assert.equal(accepted.body.operationReference, unknown?.reference);
      const settled = await settledOperation(server(), token, String(unknown?.reference));
      assert.equal(settled.body.status, 'Executed');
      assert.equal(await balanceOf(server()), before - minor(8500));
      assert.equal(await movementsOf(server(), String(unknown?.reference)), 1);
    });
  },
  { wrapCore: repeatFaulty.wrap, clock, flags: { coreTimeoutMs: String(repeatCoreTimeoutMs), ...reconcilerIdle } },
);
