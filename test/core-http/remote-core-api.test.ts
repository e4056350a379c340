/**
 * The business API in front of a remote core (docs/deployment.md, "A remote core"): `coregate serve
 * --core-url` against `coregate core serve`, each with a database of its own, on each store, with
 * the fault-injecting proxy (test/helpers/fault-proxy.ts) on the wire between them. The operations
 * work end to end and the money moves in the core's database, not the API's; a core that is down is
 * 502 at once with nothing posted, and the circuit breaker then spares it the calls; an answer that
 * breaks the protocol is 502; a time-out after the core executed is 504, and the repeat or the
 * reconciler settles it with one movement, after which the operation resource shows the result and
 * no error; readiness is 503 while the core is unreachable.
 *
 * Nothing here waits for time to pass: the API runs on a fake clock (its core time-out, the HTTP
 * adapter's own and the breaker's cool-down are on it), a late answer is the core's answer held at
 * the proxy until the test has moved the clock past the time-out (`hold-response`), and the
 * reconciler and the pending worker are run by the test.
 */
// @starts-early: among the slowest files of a quiet run
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { findAccount } from '../../src/reference-core/storage/banking.js';
import { depositBody, initiationResponseFields } from '../helpers/bodies.js';
import { startTestCoreServer, type TestCoreServer } from '../helpers/core-server.js';
import { FaultProxy, isCommand, onRequests } from '../helpers/fault-proxy.js';
import { initiatePath, reasonByStatus, send, uuidPattern, type HttpResult } from '../helpers/http.js';
import { demo, demoToken, startTestServer, type TestServer } from '../helpers/server.js';
import { storeTargets, embedded } from '../helpers/stores.js';
import { reconcilerIdle } from '../helpers/reconciler.js';
import { FakeClock } from '../helpers/fake-clock.js';
import { circuitCoolDownMs } from '../../src/core-http/http-core-adapter.js';
import { runPendingWorkers } from '../helpers/background.js';
import { findOperation, type OperationRecord } from '../../src/store/operations.js';
import { coreTablesOf } from '../../src/reference-core/storage/core-db.js';

const coreTimeoutMs = 1_500;

const source = '1000000001';
const expense = '1000000002';
const loanPath = '/v1/merchandising-loan/7000000001/repayment-schedules/1/execute';

const minor = (amountValue: number) => BigInt(Math.round(amountValue * 100));

function initiate(server: TestServer, token: string, correlationId: string, body: unknown = depositBody()): Promise<HttpResult> {
  return send(`${server.url}${initiatePath}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json', 'x-correlation-id': correlationId },
    body: JSON.stringify(body),
  });
}

function executeLoan(server: TestServer, token: string, correlationId: string, amountValue: number, prefer?: string): Promise<HttpResult> {
  const body = {
    merchandisingLoanFacilityParameterType: 'DocumentaryRemittance',
    merchandisingLoanType: 'CRDE',
    merchandisingLoanFacilityReference: { loanInstallmentSequence: 1, loanAmount: { amountValue, amountCurrency: { currencyCode: 'USD' } } },
    accountReferences: [
      { accountIdentification: { accountIdentificationType: 'PaymentAccount', identifierValue: source } },
      { accountIdentification: { accountIdentificationType: 'ExpenseAccount', identifierValue: expense } },
    ],
  };
  return send(`${server.url}${loanPath}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json', 'x-correlation-id': correlationId, ...(prefer ? { prefer } : {}) },
    body: JSON.stringify(body),
  });
}

function assertErrorCode(response: HttpResult, status: number, code: string, wrapped = false): void {
  assert.equal(response.status, status, JSON.stringify(response.body));
  const record = wrapped ? response.body.error : response.body;
  assert.equal(record.status, status);
  assert.equal(record.reason, reasonByStatus[status]);
  assert.equal(record.errordetail?.[0]?.code, code);
}

/** The API's operation that consumed a correlation id, from the API's own store. */
async function apiOperation(server: TestServer, correlationId: string): Promise<{ reference: string; status: string } | undefined> {
  return server.coregate.store.db.selectFrom('operations').select(['reference', 'status']).where('correlation_id', '=', correlationId).executeTakeFirst();
}

/** The API's full record of an operation (for the reconciler, which takes one). */
async function storedOperation(server: TestServer, correlationId: string): Promise<OperationRecord> {
  const row = await apiOperation(server, correlationId);
  const record = row && (await findOperation(server.coregate.store.db, row.reference));
  if (!record) throw new Error(`no operation for x-correlation-id ${correlationId}`);
  return record;
}

/** What the API's own store holds of an account and a reference: it must never move with a remote core. */
async function apiLedger(server: TestServer, reference: string) {
  const account = await findAccount(coreTablesOf(server.coregate.store.db), source);
  const movements = await embedded(server.coregate.store.db).selectFrom('movements').select('id').where('reference', '=', reference).execute();
  const contracts = await embedded(server.coregate.store.db).selectFrom('term_deposits').select('contract_number').execute();
  return { balanceMinor: account?.balanceMinor, movements: movements.length, contracts: contracts.length };
}

for (const target of storeTargets) {
  describe(`business API with a remote core [${target.name}]`, { skip: target.skip }, () => {
    let core: TestCoreServer | undefined;
    let proxy: FaultProxy | undefined;
    let api: TestServer | undefined;
    const drops: Array<() => Promise<void>> = [];
    // At the real time, so that the core process (on the system's clock) and the API agree on dates.
    const clock = new FakeClock(Date.now());

    before(async () => {
      const coreDb = await target.create();
      drops.push(coreDb.drop);
      const apiDb = await target.create();
      drops.push(apiDb.drop);
      core = await startTestCoreServer({ db: coreDb.url });
      proxy = await FaultProxy.start(core.url);
      // The background reconciler is held back: the tests drive it, so that each shows who settles.
      api = await startTestServer({ db: apiDb.url, clock, flags: { coreUrl: proxy.url, coreTimeoutMs: String(coreTimeoutMs), ...reconcilerIdle } });
    });
    after(async () => {
      await api?.close();
      await proxy?.close();
      await core?.close();
      for (const drop of drops) await drop();
    });

    const server = () => api as TestServer;
    const coreServer = () => core as TestCoreServer;
    const wire = () => proxy as FaultProxy;

    /**
     * `send` with the core's answer to its command held at the proxy: once the core has answered
     * (it executed), the API's clock passes the core time-out, and the API answers 504. The held
     * answer is let go after that, to a caller that gave up on it.
     */
    async function lateAnswer(send: () => Promise<HttpResult>): Promise<HttpResult> {
      try {
        return await wire().withFault(onRequests(isCommand, { kind: 'hold-response' }), async () => {
          const held = wire().answerHeld();
          const answer = send();
          await held;
          clock.advance(coreTimeoutMs);
          return answer;
        });
      } finally {
        wire().release();
      }
    }

    test('the API wires the HTTP adapter for --core-url, not the embedded core; readiness is 200 while the core answers', async () => {
      assert.ok(server().coregate.remoteCore, 'a remote core adapter');
      assert.equal(server().coregate.remoteCore?.circuitState, 'closed');
      const ready = await send(`${server().url}/health/ready`, {});
      assert.equal(ready.status, 200);
    });

    test('a term deposit initiation works end to end (200 with the documented body); the money moves in the core\'s database, not the API\'s', async () => {
      const token = await demoToken(server());
      const coreBefore = await coreServer().balanceOf(source);
      const response = await initiate(server(), token, randomUUID(), depositBody(4321));
      assert.equal(response.status, 200, JSON.stringify(response.body));
      assert.deepEqual(Object.keys(response.body).sort(), initiationResponseFields);
      assert.match(response.body.operationReference, uuidPattern);
      assert.deepEqual(response.body.principalAmount, { amountValue: 4321, amountCurrency: { currencycode: 'USD' } });
      assert.deepEqual(response.body.termDepositPeriod, { numberOfDays: 91, maturityDate: '2026-06-01' });
      const reference = response.body.operationReference as string;

      assert.equal(coreBefore - (await coreServer().balanceOf(source)), minor(4321), 'the core debited the source account');
      assert.equal(await coreServer().movementsOf(reference), 1);
      assert.deepEqual(await apiLedger(server(), reference), { balanceMinor: undefined, movements: 0, contracts: 0 }, 'the API\'s own database holds no copy of the core\'s records, and nothing moved in it');

      const retrieved = await send(`${server().url}/v1/term-deposits/${response.body.termDepositAccount}/retrieve`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(retrieved.status, 200, JSON.stringify(retrieved.body));
      assert.equal(retrieved.body.termDepositAccount, response.body.termDepositAccount);
      assert.equal(retrieved.body.termDepositStatus, 'Active');
      // 4321.00 × 5.25 % × 91 / 360 = 57.3432… → 57.34
      assert.deepEqual(retrieved.body.expectedInterestAmount, { amountValue: 57.34, amountCurrency: { currencycode: 'USD' } });
    });

    test('a loan installment payment works end to end (200 with the documented body); amount and charges move in the core\'s database', async () => {
      const token = await demoToken(server());
      const [paymentBefore, expenseBefore] = [await coreServer().balanceOf(source), await coreServer().balanceOf(expense)];
      const response = await executeLoan(server(), token, randomUUID(), 1000);
      assert.equal(response.status, 200, JSON.stringify(response.body));
      assert.deepEqual(Object.keys(response.body).sort(), ['executionDateTime', 'executionReference', 'merchandisingLoanFacilityStatus', 'merchandisingLoanOperationId']);
      assert.equal(response.body.merchandisingLoanFacilityStatus, 'PartiallyExecuted');
      assert.match(response.body.executionReference, uuidPattern);
      assert.equal(paymentBefore - (await coreServer().balanceOf(source)), minor(1000));
      // Minimum commission 10.00, fee 25.00, tax (10.00 + 25.00) × 0.16 = 5.60.
      assert.equal(expenseBefore - (await coreServer().balanceOf(expense)), minor(40.6));
      assert.deepEqual(await apiLedger(server(), response.body.executionReference), { balanceMinor: undefined, movements: 0, contracts: 0 });
    });

    test('a refusal of the remote core is the API\'s 422 with its catalogue code (TD-422-002); nothing moves', async () => {
      const token = await demoToken(server());
      const coreBefore = await coreServer().balanceOf(source);
      const response = await initiate(server(), token, randomUUID(), depositBody(300_000));
      assertErrorCode(response, 422, 'TD-422-002');
      assert.equal(response.body.errordetail[0].reason, 'INSUFFICIENT_FUNDS_SOURCE_ACCOUNT');
      assert.equal(await coreServer().balanceOf(source), coreBefore);
    });

    test('a core answer that breaks the protocol → 502 CORE_UNAVAILABLE (TD-502-001); the repeat after recovery executes once', async () => {
      const token = await demoToken(server());
      const id = randomUUID();
      const body = depositBody(1111);
      const coreBefore = await coreServer().balanceOf(source);
      const garbage = { kind: 'respond' as const, status: 200, body: JSON.stringify({ status: 'Executed', result: { principalMinor: 111100 } }) };
      const failed = await wire().withFault(onRequests(isCommand, garbage), () => initiate(server(), token, id, body));
      assertErrorCode(failed, 502, 'TD-502-001');
      assert.equal((await apiOperation(server(), id))?.status, 'Unknown', 'the outcome is held as unknown');
      assert.equal(await coreServer().balanceOf(source), coreBefore);

      const repeat = await initiate(server(), token, id, body);
      assert.equal(repeat.status, 200, JSON.stringify(repeat.body));
      assert.equal(repeat.body.operationReference, (await apiOperation(server(), id))?.reference);
      assert.equal(coreBefore - (await coreServer().balanceOf(source)), minor(1111), 'executed once');
    });

    test('a core time-out after the core executed → 504 CORE_TIMEOUT; the repeat with the same x-correlation-id settles it (409 naming the original, Executed) with one ledger movement', async () => {
      const token = await demoToken(server());
      const id = randomUUID();
      const body = depositBody(2222);
      const coreBefore = await coreServer().balanceOf(source);
      const timedOut = await lateAnswer(() => initiate(server(), token, id, body));
      assertErrorCode(timedOut, 504, 'TD-504-001');
      const unknown = await apiOperation(server(), id);
      assert.equal(unknown?.status, 'Unknown');
      const reference = unknown?.reference ?? '';
      assert.equal(await coreServer().movementsOf(reference), 1, 'the core executed the command whose answer came too late');

      const repeat = await initiate(server(), token, id, body);
      assertErrorCode(repeat, 409, 'TD-409-001');
      assert.ok(repeat.body.message.includes(reference), repeat.body.message);
      assert.match(repeat.body.message, /Executed/);
      assert.equal((await apiOperation(server(), id))?.status, 'Executed');
      assert.equal(await coreServer().movementsOf(reference), 1, 'one movement in the core');
      assert.equal(coreBefore - (await coreServer().balanceOf(source)), minor(2222), 'debited once');
      assert.equal((await apiLedger(server(), reference)).movements, 0);
    });

    test('a core time-out after the core executed → 504 (ML-504-001); the reconciler settles it by reference: GET /v1/operations shows Executed, one movement', async () => {
      const token = await demoToken(server());
      const id = randomUUID();
      const paymentBefore = await coreServer().balanceOf(source);
      const timedOut = await lateAnswer(() => executeLoan(server(), token, id, 500));
      assertErrorCode(timedOut, 504, 'ML-504-001', true);
      const unknown = await storedOperation(server(), id);
      assert.equal(unknown.status, 'Unknown');
      const reference = unknown.reference;
      assert.equal(await coreServer().movementsOf(reference), 1, 'the core executed the command whose answer came too late');

      const settled = await server().coregate.reconciler.reconcile(unknown);
      assert.equal(settled.status, 'Executed');
      assert.equal(settled.reference, reference);
      const view = await send(`${server().url}/v1/operations/${reference}`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(view.status, 200, JSON.stringify(view.body));
      assert.equal(view.body.status, 'Executed');
      assert.equal(view.body.result.executionReference, reference);
      assert.equal(view.body.result.merchandisingLoanFacilityStatus, 'PartiallyExecuted');
      assert.equal(await coreServer().movementsOf(reference), 1);
      assert.equal(paymentBefore - (await coreServer().balanceOf(source)), minor(500), 'paid once');
    });

    test('a settled operation shows only its final outcome: a 504 the reconciler found executed in the core → GET /v1/operations/{reference} is Executed with its result and no error', async () => {
      const token = await demoToken(server());
      const id = randomUUID();
      const timedOut = await lateAnswer(() => initiate(server(), token, id, depositBody(2468)));
      assertErrorCode(timedOut, 504, 'TD-504-001');
      const unknown = await storedOperation(server(), id);
      const reference = unknown.reference;
      assert.equal(await coreServer().movementsOf(reference), 1, 'the core executed the command whose answer came too late');

      assert.equal((await server().coregate.reconciler.reconcile(unknown)).status, 'Executed');
      const stored = await server().coregate.store.db.selectFrom('operations').select('error').where('reference', '=', reference).executeTakeFirst();
      assert.equal(stored?.error, null, 'the stored record keeps no error once executed');
      const view = await send(`${server().url}/v1/operations/${reference}`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(view.status, 200, JSON.stringify(view.body));
      assert.equal(view.body.status, 'Executed');
      assert.equal(view.body.result.operationReference, reference);
      assert.deepEqual(view.body.result.principalAmount, { amountValue: 2468, amountCurrency: { currencycode: 'USD' } });
      assert.equal('error' in view.body, false, JSON.stringify(view.body));
    });

    test('a settled operation shows only its final outcome: a loan answered 202 that the core refused, its answer late (504), is settled by the reconciler as Rejected with its final error record (ML-422-005) and the loan\'s Rejected result', async () => {
      const token = await demoToken(server());
      const id = randomUUID();
      // Above the installment's outstanding amount: the core refuses it.
      let accepted: HttpResult | undefined;
      try {
        await wire().withFault(onRequests(isCommand, { kind: 'hold-response' }), async () => {
          const held = wire().answerHeld();
          accepted = await executeLoan(server(), token, id, 9_000_000, 'respond-async');
          assert.equal(accepted.status, 202, JSON.stringify(accepted.body));
          // The pending worker's call reached the core, which refused it; its answer is held until
          // the worker's time-out has passed on the API's clock.
          await held;
          clock.advance(coreTimeoutMs);
          await runPendingWorkers(server());
        });
      } finally {
        wire().release();
      }
      const unknown = await storedOperation(server(), id);
      assert.equal(unknown.status, 'Unknown', 'the worker met the late answer');
      const reference = (accepted as HttpResult).body.executionReference as string;

      assert.equal((await server().coregate.reconciler.reconcile(unknown)).status, 'Rejected');
      const view = await send(`${server().url}/v1/operations/${reference}`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(view.status, 200, JSON.stringify(view.body));
      assert.equal(view.body.status, 'Rejected');
      assert.equal(view.body.error.errordetail?.[0]?.code, 'ML-422-005', JSON.stringify(view.body));
      assert.deepEqual(view.body.result, { executionReference: reference, executionDateTime: (accepted as HttpResult).body.executionDateTime, merchandisingLoanFacilityStatus: 'Rejected' });
    });

    // Last: it leaves the circuit breaker open for its cool-down.
    test('a core that is down → 502 at once, nothing posted; after 5 failures the breaker opens: the next call does not reach the core, readiness is 503 naming the core; once it is back, the repeat executes once', async () => {
      // branch-portal has no technical user: no directory lookup precedes the core call.
      const token = await demoToken(server(), demo.branch);
      const remote = server().coregate.remoteCore;
      assert.ok(remote);
      const coreBefore = await coreServer().balanceOf(source);
      const id = randomUUID();
      const body = depositBody(3333);
      // The webhook relay polls the core's events every 500 ms, through the same breaker: held while
      // the calls are counted, so that the five failures are the initiations' own.
      await server().coregate.webhooks.stop();
      try {
        await wire().withFault({ kind: 'reset' }, async () => {
          // The API's clock never moves in this block: an answer that arrives proves no time-out was waited.
          const frozenAt = clock.now();
          for (let attempt = 0; attempt < 5; attempt += 1) {
            const receivedBefore = wire().received;
            const failed = await initiate(server(), token, attempt === 0 ? id : randomUUID(), body);
            assertErrorCode(failed, 502, 'TD-502-001');
            assert.equal(clock.now(), frozenAt, `502 at once, not after the ${coreTimeoutMs} ms time-out`);
            // A connection closed under a request is tried once more at once (every request is idempotent by reference).
            assert.equal(wire().received, receivedBefore + 2, 'the call reached the wire, and its one repeat for the closed connection');
          }
          assert.equal(remote.circuitState, 'open');
          assert.equal((await apiOperation(server(), id))?.status, 'Unknown');

          const receivedBefore = wire().received;
          assertErrorCode(await initiate(server(), token, randomUUID(), body), 502, 'TD-502-001');
          assert.equal(clock.now(), frozenAt, 'the open breaker answers at once');
          const ready = await send(`${server().url}/health/ready`, {});
          assert.equal(ready.status, 503);
          assert.deepEqual(ready.body, { status: 'unavailable', check: 'core', reason: 'core did not answer' });
          assert.equal(wire().received, receivedBefore, 'no call reached the wire while the breaker is open');
        });
        assert.equal(await coreServer().balanceOf(source), coreBefore, 'nothing was posted');

        // The core is back: after the cool-down (passed on the API's clock) a trial call, the
        // readiness probe's ping, closes the breaker (the relay, still stopped, makes none).
        assert.equal((await send(`${server().url}/health/ready`, {})).status, 503, 'still open before the cool-down has passed');
        clock.advance(circuitCoolDownMs);
        const ready = await send(`${server().url}/health/ready`, {});
        assert.equal(ready.status, 200, JSON.stringify(ready.body));
        assert.equal(remote.circuitState, 'closed');
      } finally {
        server().coregate.webhooks.start();
      }
      const repeat = await initiate(server(), token, id, body);
      assert.equal(repeat.status, 200, JSON.stringify(repeat.body));
      assert.equal(coreBefore - (await coreServer().balanceOf(source)), minor(3333), 'executed once, after recovery');
    });
  });
}
