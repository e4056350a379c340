/**
 * Racing real HTTP requests against POST /v1/term-deposits/initiate, on each store: the guarded
 * debit never overdraws an account (one atomic transaction: docs/term-deposits.md), a correlation
 * id is consumed once (docs/api.md, "Correlation ids and duplicates"), and the duplicate window
 * holds under concurrency. Each scenario has a store of its own.
 */
// @deployments remote-core two-instances
// @starts-early: among the slowest files of a quiet run
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkLedger } from '../../src/reference-core/storage/ledger.js';
import { toBigInt } from '../../src/store/bigint.js';
import type { Store } from '../../src/store/connect.js';
import { c0001Account, readDemoData, writeTempDataFile, type SandboxData } from '../helpers/data-files.js';
import { demoToken, testDeployment, type TestServer } from '../helpers/server.js';
import { describeEachStore } from '../helpers/suite.js';
import { runPendingWorkers } from '../helpers/background.js';
import { coreTablesOf } from '../../src/reference-core/storage/core-db.js';
import { embedded } from '../helpers/stores.js';

/** The original's outcome a losing racer's 409 names. */
const settledOrInFlight = testDeployment === 'remote-core' ? '(?:Executed|Pending)' : 'Executed';

const initiatePath = '/v1/term-deposits/initiate';
const raceTimeoutMs = 60_000;

/** The account funded with exactly ten principals, and the principal. */
const raceAccount = '1000000099';
const principal = 1000;
const principalMinor = 100_000n;
const raceFundsMinor = 10n * principalMinor;

function initiationBody(sourceAccount = '1000000001'): Record<string, unknown> {
  return {
    customerReference: 'C0001',
    termDepositProduct: { productCode: 'TDFIX', componentCode: 'TD30-365' },
    principalAmount: { amountValue: principal, amountCurrency: { currencycode: 'USD' }, amountType: 'Principal' },
    interestRate: { rateValue: 5.25, rateType: 'Nominal' },
    termDepositPeriod: { numberOfDays: 90 },
    valueDate: '2026-03-02',
    sourceAccount: { accountIdentification: sourceAccount, accountType: 'DebitAccount' },
    interestSettlementAccount: { accountIdentification: '1000000002', accountType: 'CreditAccount' },
  };
}

/** The demo data plus one account of customer C0001 holding exactly 10 × the principal. */
function writeRaceDataFile(): string {
  const data = readDemoData<SandboxData>();
  data.accounts.push(c0001Account(raceAccount, 10_000.0));
  return writeTempDataFile(data, 'coregate-races-');
}

interface ApiResponse {
  status: number;
  headers: Headers;
  body: any;
}

async function initiate(server: TestServer, token: string, body: unknown, correlationId?: string): Promise<ApiResponse> {
  const headers: Record<string, string> = {
    authorization: `Bearer ${token}`,
    'content-type': 'application/json',
    accept: 'application/json',
  };
  if (correlationId !== undefined) headers['x-correlation-id'] = correlationId;
  const response = await fetch(`${server.url}${initiatePath}`, { method: 'POST', headers, body: JSON.stringify(body) });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text === '' ? undefined : JSON.parse(text) };
}

function countStatuses(responses: ApiResponse[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const response of responses) counts[response.status] = (counts[response.status] ?? 0) + 1;
  return counts;
}

async function balanceMinor(store: Store, accountNumber: string): Promise<bigint> {
  const row = await embedded(store.db).selectFrom('accounts').select('balance_minor').where('account_number', '=', accountNumber).executeTakeFirstOrThrow();
  return toBigInt(row.balance_minor);
}

async function assertLedgerProves(store: Store): Promise<void> {
  const report = await checkLedger(coreTablesOf(store.db));
  assert.deepEqual(report.unbalancedMovements, [], 'every movement balances');
  assert.deepEqual(report.balanceMismatches, [], 'every balance equals its postings');
  assert.deepEqual(report.negativeCustomerAccounts, [], 'no customer account is negative');
}

/** Constitution movements debiting an account, by their references. */
async function debitsOf(store: Store, accountNumber: string): Promise<string[]> {
  const rows = await embedded(store.db)
    .selectFrom('movements')
    .innerJoin('postings', 'postings.movement_id', 'movements.id')
    .select('movements.reference')
    .where('movements.kind', '=', 'term_deposit_constitution')
    .where('postings.account_number', '=', accountNumber)
    .execute();
  return rows.map((row) => row.reference);
}

function assertConflict(response: ApiResponse, code: string): void {
  assert.equal(response.status, 409, JSON.stringify(response.body));
  assert.equal(response.body.status, 409);
  assert.equal(response.body.reason, 'CONFLICT');
  assert.equal(response.body.path, `POST ${initiatePath}`);
  assert.equal(response.body.errordetail?.[0]?.code, code);
}

describeEachStore(
  'concurrent initiations on one account that covers exactly ten',
  ({ server }) => {
    test('50 racing initiations: exactly 10 succeed, 40 get 422 TD-422-002, the balance ends at exactly 0, the ledger proves', { timeout: raceTimeoutMs }, async () => {
      const store = server().coregate.store;
      assert.equal(await balanceMinor(store, raceAccount), raceFundsMinor, 'the account starts with exactly 10 principals');
      const token = await demoToken(server());
      const correlationIds = Array.from({ length: 50 }, (_, index) => `race-funds-${index}`);
      const responses = await Promise.all(correlationIds.map((id) => initiate(server(), token, initiationBody(raceAccount), id)));

      assert.deepEqual(countStatuses(responses), { 200: 10, 422: 40 });
      responses.forEach((response, index) => assert.equal(response.headers.get('x-correlation-id'), correlationIds[index], 'each correlation id is echoed'));
      const succeeded = responses.filter((response) => response.status === 200);
      for (const response of succeeded) {
        assert.equal(response.body.sourceAccount.accountIdentification, raceAccount);
        assert.equal(response.body.principalAmount.amountValue, principal);
      }
      assert.equal(new Set(succeeded.map((response) => response.body.termDepositAccount)).size, 10, 'ten distinct contracts');
      assert.equal(new Set(succeeded.map((response) => response.body.operationReference)).size, 10, 'ten distinct operation references');
      for (const response of responses.filter((r) => r.status === 422)) {
        assert.equal(response.body.reason, 'BUSINESS_RULE_VIOLATION');
        assert.equal(response.body.path, `POST ${initiatePath}`);
        assert.equal(response.body.errordetail?.[0]?.code, 'TD-422-002');
        assert.equal(response.body.errordetail?.[0]?.reason, 'INSUFFICIENT_FUNDS_SOURCE_ACCOUNT');
      }

      assert.equal(await balanceMinor(store, raceAccount), 0n, 'the final balance is exactly 0');
      const contracts = await embedded(store.db).selectFrom('term_deposits').selectAll().where('source_account', '=', raceAccount).execute();
      assert.equal(contracts.length, 10, 'ten contracts exist');
      assert.deepEqual(
        contracts.map((contract) => contract.operation_reference).sort(),
        succeeded.map((response) => response.body.operationReference as string).sort(),
        'the contracts are exactly the acknowledged ones',
      );
      for (const contract of contracts) assert.equal(toBigInt(contract.principal_minor), principalMinor);
      assert.deepEqual((await debitsOf(store, raceAccount)).sort(), contracts.map((contract) => contract.operation_reference).sort(), 'one debit per contract');
      await assertLedgerProves(store);

      const operations = await store.db.selectFrom('operations').select(['status', 'http_status']).where('correlation_id', 'in', correlationIds).execute();
      assert.equal(operations.filter((op) => op.status === 'Executed').length, 10);
      assert.equal(operations.filter((op) => op.status === 'Rejected' && Number(op.http_status) === 422).length, 40);
    });
  },
  // The 50 transactions queue on one account row; the core time-out is not what this test is about.
  { data: writeRaceDataFile(), flags: { coreTimeoutMs: '30000' } },
);

describeEachStore('concurrent requests with one correlation id', ({ server }) => {
  test('20 racing requests with one x-correlation-id: exactly one 200, 19 × 409 CONFLICT naming it, one debit', { timeout: raceTimeoutMs }, async () => {
    const store = server().coregate.store;
    const source = '1000000001';
    const before = await balanceMinor(store, source);
    const token = await demoToken(server());
    const correlationId = 'race-one-correlation-id';
    const responses = await Promise.all(Array.from({ length: 20 }, () => initiate(server(), token, initiationBody(source), correlationId)));

    assert.deepEqual(countStatuses(responses), { 200: 1, 409: 19 });
    const winner = responses.find((response) => response.status === 200);
    assert.ok(winner);
    const reference = winner.body.operationReference as string;
    for (const response of responses) assert.equal(response.headers.get('x-correlation-id'), correlationId);
    for (const response of responses.filter((r) => r.status === 409)) {
      assertConflict(response, 'TD-409-001');
      // With a remote core the original is claimed (committed) before the core answers: a loser may see it Pending.
      assert.match(response.body.message, new RegExp(`${reference}.*${settledOrInFlight}`), 'the 409 names the original operation and its outcome');
    }

    assert.deepEqual(await debitsOf(store, source), [reference], 'exactly one debit');
    assert.equal(await balanceMinor(store, source), before - principalMinor);
    const contracts = await embedded(store.db).selectFrom('term_deposits').select('operation_reference').execute();
    assert.deepEqual(contracts.map((contract) => contract.operation_reference), [reference], 'exactly one contract');
    const operations = await store.db.selectFrom('operations').select('reference').where('correlation_id', '=', correlationId).execute();
    assert.deepEqual(operations.map((op) => op.reference), [reference], 'the correlation id is consumed once');
    await assertLedgerProves(store);
  });
});

describeEachStore('concurrent identical requests without a correlation id', ({ server }) => {
  test('20 racing identical bodies without x-correlation-id: exactly one 200, 19 × 409 (duplicate window), one debit', { timeout: raceTimeoutMs }, async () => {
    const store = server().coregate.store;
    const source = '1000000001';
    const before = await balanceMinor(store, source);
    const token = await demoToken(server());
    const responses = await Promise.all(Array.from({ length: 20 }, () => initiate(server(), token, initiationBody(source))));

    assert.deepEqual(countStatuses(responses), { 200: 1, 409: 19 });
    const winner = responses.find((response) => response.status === 200);
    assert.ok(winner);
    const reference = winner.body.operationReference as string;
    const generated = responses.map((response) => response.headers.get('x-correlation-id'));
    assert.equal(new Set(generated).size, 20, 'each request got its own generated correlation id');
    for (const response of responses.filter((r) => r.status === 409)) {
      assertConflict(response, 'TD-409-002');
      assert.match(response.body.message, new RegExp(reference), 'the 409 names the original operation');
    }

    assert.deepEqual(await debitsOf(store, source), [reference], 'exactly one debit');
    assert.equal(await balanceMinor(store, source), before - principalMinor);
    const contracts = await embedded(store.db).selectFrom('term_deposits').select('operation_reference').execute();
    assert.deepEqual(contracts.map((contract) => contract.operation_reference), [reference], 'exactly one contract');
    await assertLedgerProves(store);
  });
});

describeEachStore('concurrent respond-async requests with one correlation id', ({ server }) => {
  test('20 racing Prefer: respond-async requests with one x-correlation-id: exactly one 202, 19 × 409, and the accepted one is executed once', { timeout: raceTimeoutMs }, async () => {
    const store = server().coregate.store;
    const source = '1000000001';
    const before = await balanceMinor(store, source);
    const token = await demoToken(server());
    const correlationId = 'race-async-correlation-id';
    const responses = await Promise.all(
      Array.from({ length: 20 }, async () => {
        const response = await fetch(`${server().url}${initiatePath}`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${token}`,
            'content-type': 'application/json',
            accept: 'application/json',
            'x-correlation-id': correlationId,
            prefer: 'respond-async',
          },
          body: JSON.stringify(initiationBody(source)),
        });
        return { status: response.status, headers: response.headers, body: await response.json() } as ApiResponse;
      }),
    );

    assert.deepEqual(countStatuses(responses), { 202: 1, 409: 19 });
    const accepted = responses.find((response) => response.status === 202);
    assert.ok(accepted);
    const reference = accepted.body.operationReference as string;
    assert.equal(accepted.headers.get('location'), `/v1/operations/${reference}`);
    for (const response of responses.filter((r) => r.status === 409)) {
      assertConflict(response, 'TD-409-001');
      assert.match(response.body.message, new RegExp(reference));
    }

    // The worker executes the accepted operation: its pass (started by the 202) is awaited on every
    // instance, or another pass is run, instead of polling until it has happened.
    await runPendingWorkers(server());
    const view = await fetch(`${server().url}/v1/operations/${reference}`, { headers: { authorization: `Bearer ${token}`, accept: 'application/json' } });
    assert.equal(view.status, 200);
    const { status } = (await view.json()) as { status: string };
    assert.equal(status, 'Executed', 'the accepted operation is executed');
    assert.deepEqual(await debitsOf(store, source), [reference], 'exactly one debit');
    assert.equal(await balanceMinor(store, source), before - principalMinor);
    const operations = await store.db.selectFrom('operations').select('reference').where('correlation_id', '=', correlationId).execute();
    assert.deepEqual(operations.map((op) => op.reference), [reference], 'the correlation id is consumed once');
    await assertLedgerProves(store);
  });
});
