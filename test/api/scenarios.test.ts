/**
 * Sandbox scenarios (docs/sandbox.md, "Scenarios"): `Coregate-Scenario` forces an outcome of the
 * core at the port, and everything above it (correlation, the reconciler, the outbox, the audit,
 * the operation resource) does what it does for a real core failing that way. Run on both stores
 * and, through scripts/test.mjs, against a remote core and two instances. The instance's clock is a
 * fake one: a time-out or a delay passes when the test moves it, never by sleeping.
 */
// @deployments remote-core two-instances
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { findOperationByCorrelation, type OperationRecord } from '../../src/store/operations.js';
import { loanExecutionExample } from '../../src/operations/loan-installment-execution/examples.js';
import { scenarioNames, scenarioOutageMs } from '../../src/operations/scenario.js';
import { depositBody } from '../helpers/bodies.js';
import { initiatePath, send, type HttpResult } from '../helpers/http.js';
import { demoToken, startTestServer, type TestServer } from '../helpers/server.js';
import { describeEachStore } from '../helpers/suite.js';
import { runPendingWorkers } from '../helpers/background.js';
import { waitFor } from '../helpers/wait.js';
import { Vault } from '../../src/auth/vault.js';
import { verifyWebhook } from '../../src/sdk/index.js';
import { registerEndpoint } from '../../src/webhooks/endpoints.js';
import { drainWebhooks, loopbackEnv, loopbackTargets, Receiver } from '../webhooks/receiver.js';
import { demo } from '../helpers/server.js';
import { FakeClock } from '../helpers/fake-clock.js';
import { embedded, storeTargets, withCreatedStore } from '../helpers/stores.js';

const clock = new FakeClock(Date.now());
/** Unlike any loop's interval, so that the test can tell the core call's time-out being armed. */
const coreTimeoutMs = 7_777;
const masterKey = 'scenarios-test-master-key-0123456789abcdef';

interface Forced {
  scenario?: string;
  delayMs?: string;
  correlationId?: string;
  prefer?: string;
}

function initiate(server: TestServer, token: string, amount: number, forced: Forced = {}): Promise<HttpResult> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'x-correlation-id': forced.correlationId ?? randomUUID() };
  if (forced.scenario !== undefined) headers['coregate-scenario'] = forced.scenario;
  if (forced.delayMs !== undefined) headers['coregate-scenario-delay-ms'] = forced.delayMs;
  if (forced.prefer !== undefined) headers.prefer = forced.prefer;
  return send(`${server.url}${initiatePath}`, { method: 'POST', headers, body: JSON.stringify(depositBody(amount)) });
}

async function stored(server: TestServer, correlationId: string): Promise<OperationRecord> {
  const client = await server.coregate.store.db.selectFrom('operations').select('client_key').where('correlation_id', '=', correlationId).executeTakeFirst();
  const record = client && (await findOperationByCorrelation(server.coregate.store.db, client.client_key, correlationId));
  if (!record) throw new Error(`no operation for ${correlationId}`);
  return record;
}

const movementsOf = async (server: TestServer, reference: string) =>
  (await embedded(server.coregate.store.db).selectFrom('movements').select('id').where('reference', '=', reference).execute()).length;

const eventsOf = async (server: TestServer, reference: string) =>
  (await server.coregate.store.db.selectFrom('webhook_events').select('type').where('reference', '=', reference).execute()).map((row) => row.type);

async function operationView(server: TestServer, token: string, reference: string): Promise<Record<string, any>> {
  const view = await send(`${server.url}/v1/operations/${reference}`, { headers: { authorization: `Bearer ${token}` } });
  assert.equal(view.status, 200, JSON.stringify(view.body));
  return view.body as Record<string, any>;
}

/** Sends the request, waits until it waits on the fake clock for `delayMs`, and moves the clock past it. */
async function past(delayMs: number, request: () => Promise<HttpResult>): Promise<HttpResult> {
  const waiting = clock.timerSet(delayMs);
  const answer = request();
  await waiting;
  clock.advance(delayMs);
  return answer;
}

/**
 * core-timeout-then-commit: the core commits, its answer never comes; the time-out is moved past
 * once the commit is seen (on the system's clock the commit takes milliseconds of a 5 s time-out).
 */
async function committedThenTimedOut(server: TestServer, request: () => Promise<HttpResult>, correlationId: string): Promise<HttpResult> {
  const waiting = clock.timerSet(coreTimeoutMs);
  const answer = request();
  await waiting;
  await waitFor('the core\'s commit', async () => {
    const record = await stored(server, correlationId).catch(() => undefined);
    return record && (await movementsOf(server, record.reference)) === 1 ? true : undefined;
  });
  clock.advance(coreTimeoutMs);
  return answer;
}

describeEachStore(
  'sandbox scenarios: Coregate-Scenario forces the core\'s outcome at the port',
  ({ server }) => {
    let receiver: Receiver;
    let secret: string;
    before(async () => {
      receiver = await Receiver.start();
      const endpoint = await registerEndpoint(server().coregate.store.db, new Vault(masterKey), { realm: demo.realm, clientId: demo.treasury.clientId, url: receiver.url }, loopbackTargets, clock.now());
      secret = endpoint.secret;
    });
    after(() => receiver.close());

    test('core-unavailable: 502 CORE_UNAVAILABLE with Location to the operation, nothing executed; a repeat (header and all) executes it once', async () => {
      const token = await demoToken(server());
      const id = randomUUID();
      const failed = await initiate(server(), token, 1201, { scenario: 'core-unavailable', correlationId: id });
      assert.equal(failed.status, 502, JSON.stringify(failed.body));
      assert.equal(failed.body.errordetail[0].reason, 'CORE_UNAVAILABLE');
      const record = await stored(server(), id);
      assert.equal(record.status, 'Unknown');
      assert.deepEqual(record.scenario, { name: 'core-unavailable', delayMs: 2000 });
      assert.equal(failed.headers.get('location'), `/v1/operations/${record.reference}`);
      assert.equal(await movementsOf(server(), record.reference), 0, 'the core was not called');

      // The repeat carries the header again, as a client library's retry would: it meets the real core.
      const repeat = await initiate(server(), token, 1201, { scenario: 'core-unavailable', correlationId: id });
      assert.equal(repeat.status, 200, JSON.stringify(repeat.body));
      assert.equal(await movementsOf(server(), record.reference), 1);
      const again = await initiate(server(), token, 1201, { correlationId: id });
      assert.equal(again.status, 409);
      assert.equal(await movementsOf(server(), record.reference), 1, 'executed once');
    });

    test('core-unavailable, then a repeat with Prefer: respond-async: 202, and the pending worker meets the real core (the scenario forced the first execution only)', async () => {
      const token = await demoToken(server());
      const id = randomUUID();
      assert.equal((await initiate(server(), token, 1210, { scenario: 'core-unavailable', correlationId: id })).status, 502);
      const accepted = await initiate(server(), token, 1210, { scenario: 'core-unavailable', correlationId: id, prefer: 'respond-async' });
      assert.equal(accepted.status, 202, JSON.stringify(accepted.body));
      await runPendingWorkers(server());
      const view = await operationView(server(), token, accepted.body.operationReference as string);
      assert.equal(view.status, 'Executed', JSON.stringify(view));
      assert.equal(await movementsOf(server(), accepted.body.operationReference as string), 1);
    });

    test('core-unavailable nobody repeats: the reconciler leaves it alone for the outage it simulates (60 s: a repeat made by hand still executes), then settles it Rejected NOT_EXECUTED', async () => {
      const token = await demoToken(server());
      const id = randomUUID();
      assert.equal((await initiate(server(), token, 1211, { scenario: 'core-unavailable', correlationId: id })).status, 502);
      const reconcilePasses = async () => {
        for (const instance of server().instances) await instance.background.reconciler.runOnce();
      };
      clock.advance(scenarioOutageMs - 1_000);
      await reconcilePasses();
      assert.equal((await stored(server(), id)).status, 'Unknown', 'left alone during the simulated outage');
      clock.advance(2_000);
      await reconcilePasses();
      const settled = await stored(server(), id);
      assert.equal(settled.status, 'Rejected');
      assert.equal((settled.error as any).errordetail[0].reason, 'NOT_EXECUTED');
    });

    test('slow with Prefer: respond-async: 202, executed once its delay passed, without the pending worker waiting it out', async () => {
      const token = await demoToken(server());
      const accepted = await initiate(server(), token, 1212, { scenario: 'slow', delayMs: '1500', prefer: 'respond-async' });
      assert.equal(accepted.status, 202, JSON.stringify(accepted.body));
      const reference = accepted.body.operationReference as string;
      await runPendingWorkers(server());
      assert.equal((await operationView(server(), token, reference)).status, 'Pending', 'not before its delay');
      clock.advance(1_500);
      // A pass the clock's move started may have read the time before the delay ended: the next one finds it due.
      await runPendingWorkers(server());
      await runPendingWorkers(server());
      assert.equal((await operationView(server(), token, reference)).status, 'Executed');
    });

    test('core-timeout: 504 CORE_TIMEOUT after the core time-out, with Location; the core never executes it, and the reconciler settles it Rejected NOT_EXECUTED', async () => {
      const token = await demoToken(server());
      const id = randomUUID();
      const timedOut = await past(coreTimeoutMs, () => initiate(server(), token, 1202, { scenario: 'core-timeout', correlationId: id }));
      assert.equal(timedOut.status, 504, JSON.stringify(timedOut.body));
      assert.equal(timedOut.body.errordetail[0].reason, 'CORE_TIMEOUT');
      const record = await stored(server(), id);
      assert.equal(timedOut.headers.get('location'), `/v1/operations/${record.reference}`);
      assert.equal(record.status, 'Unknown');

      const settled = await server().coregate.reconciler.reconcile(record);
      assert.equal(settled.status, 'Rejected');
      assert.equal((settled.error as any).errordetail[0].reason, 'NOT_EXECUTED');
      assert.equal(await movementsOf(server(), record.reference), 0);
      const view = await operationView(server(), token, record.reference);
      assert.equal(view.status, 'Rejected');
      assert.equal(view.error.errordetail[0].reason, 'NOT_EXECUTED');
      assert.deepEqual(await eventsOf(server(), record.reference), ['operation.rejected']);
    });

    test('core-timeout-then-commit: 504, yet the core executed it: the repeat answers 409 naming the operation, which shows Executed with its result; one movement', async () => {
      const token = await demoToken(server());
      const id = randomUUID();
      const timedOut = await committedThenTimedOut(server(), () => initiate(server(), token, 1203, { scenario: 'core-timeout-then-commit', correlationId: id }), id);
      assert.equal(timedOut.status, 504, JSON.stringify(timedOut.body));
      const record = await stored(server(), id);
      assert.equal(timedOut.headers.get('location'), `/v1/operations/${record.reference}`);
      assert.equal(await movementsOf(server(), record.reference), 1, 'the core committed');

      const repeat = await initiate(server(), token, 1203, { scenario: 'core-timeout-then-commit', correlationId: id });
      assert.equal(repeat.status, 409, JSON.stringify(repeat.body));
      assert.match(repeat.body.message, new RegExp(`${record.reference} \\(Executed\\)`));
      assert.equal(repeat.headers.get('location'), `/v1/operations/${record.reference}`);
      const view = await operationView(server(), token, record.reference);
      assert.equal(view.status, 'Executed');
      assert.equal(view.result.operationReference, record.reference);
      assert.equal(await movementsOf(server(), record.reference), 1, 'one movement');
      assert.deepEqual(await eventsOf(server(), record.reference), ['operation.executed']);
    });

    test('core-timeout-then-commit nobody repeats: GET /v1/operations/{reference} (the 504\'s Location) asks the core and shows it Executed', async () => {
      const token = await demoToken(server());
      const id = randomUUID();
      const timedOut = await committedThenTimedOut(server(), () => initiate(server(), token, 1204, { scenario: 'core-timeout-then-commit', correlationId: id }), id);
      assert.equal(timedOut.status, 504);
      const location = timedOut.headers.get('location') ?? '';
      const view = await send(`${server().url}${location}`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(view.body.status, 'Executed', JSON.stringify(view.body));
      assert.equal(typeof view.body.result.termDepositAccount, 'string');
    });

    test('async-executed: 202 Pending with Location; executed after Coregate-Scenario-Delay-Ms, with its operation.executed event', async () => {
      const token = await demoToken(server());
      const id = randomUUID();
      const accepted = await initiate(server(), token, 1205, { scenario: 'async-executed', delayMs: '3000', correlationId: id });
      assert.equal(accepted.status, 202, JSON.stringify(accepted.body));
      assert.equal(accepted.body.termDepositStatus, 'Pending');
      assert.equal(accepted.headers.get('preference-applied'), null, 'no Prefer was sent');
      const reference = accepted.body.operationReference as string;
      assert.equal(accepted.headers.get('location'), `/v1/operations/${reference}`);

      // Not before the delay: a worker pass now finds nothing due.
      clock.advance(2_999);
      await runPendingWorkers(server());
      assert.equal((await operationView(server(), token, reference)).status, 'Pending');
      clock.advance(1);
      await runPendingWorkers(server());
      await runPendingWorkers(server());
      const view = await operationView(server(), token, reference);
      assert.equal(view.status, 'Executed', JSON.stringify(view));
      assert.equal(view.result.operationReference, reference);
      assert.equal(await movementsOf(server(), reference), 1);
      assert.deepEqual(await eventsOf(server(), reference), ['operation.executed']);
      // Its signed webhook reaches the client's endpoint.
      await drainWebhooks(server());
      const [delivered] = receiver.arrived(id);
      const event = verifyWebhook(delivered!.body, delivered!.headers as Record<string, string>, secret) as { type: string; data: Record<string, unknown> };
      assert.equal(event.type, 'operation.executed');
      assert.equal(event.data.reference ?? event.data.operationReference, reference);
    });

    test('async-rejected: 202 Pending, then Rejected with its error record (REJECTED_BY_CORE) and its operation.rejected event; nothing posted, the reference closed in the core', async () => {
      const token = await demoToken(server());
      const accepted = await initiate(server(), token, 1206, { scenario: 'async-rejected', delayMs: '0' });
      assert.equal(accepted.status, 202, JSON.stringify(accepted.body));
      const reference = accepted.body.operationReference as string;
      await runPendingWorkers(server());
      const view = await operationView(server(), token, reference);
      assert.equal(view.status, 'Rejected', JSON.stringify(view));
      assert.equal(view.error.errordetail[0].reason, 'REJECTED_BY_CORE');
      assert.equal(view.error.errordetail[0].code, 'TD-422-090');
      assert.equal(await movementsOf(server(), reference), 0);
      assert.deepEqual(await eventsOf(server(), reference), ['operation.rejected']);
      assert.equal((await server().coregate.core.findTermDepositConstitution(reference)).status, 'Rejected', 'fenced in the core');
    });

    test('async-rejected on a loan installment: 202 Pending, then Rejected with ML-422-090', async () => {
      const token = await demoToken(server());
      const response = await send(`${server().url}/v1/merchandising-loan/7000000001/repayment-schedules/1/execute`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'x-correlation-id': randomUUID(), 'coregate-scenario': 'async-rejected', 'coregate-scenario-delay-ms': '0' },
        body: JSON.stringify(loanExecutionExample),
      });
      assert.equal(response.status, 202, JSON.stringify(response.body));
      assert.equal(response.body.merchandisingLoanFacilityStatus, 'Pending');
      await runPendingWorkers(server());
      const view = await operationView(server(), token, response.body.executionReference as string);
      assert.equal(view.status, 'Rejected', JSON.stringify(view));
      assert.equal(view.error.errordetail[0].code, 'ML-422-090');
    });

    test('slow: the normal 200, after Coregate-Scenario-Delay-Ms', async () => {
      const token = await demoToken(server());
      let answered = false;
      const waiting = clock.timerSet(1_500);
      const request = initiate(server(), token, 1207, { scenario: 'slow', delayMs: '1500' }).finally(() => (answered = true));
      await waiting;
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal(answered, false, 'not before the delay');
      clock.advance(1_500);
      const response = await request;
      assert.equal(response.status, 200, JSON.stringify(response.body));
      assert.equal(typeof response.body.termDepositAccount, 'string');
    });

    test('every scenario is in the OpenAPI document: both operations that execute take Coregate-Scenario with every name, and Coregate-Scenario-Delay-Ms', async () => {
      const document = (await send(`${server().url}/openapi.json`, {})).body as any;
      for (const [path, method] of [['/v1/term-deposits/initiate', 'post'], ['/v1/merchandising-loan/{merchandisingLoanId}/repayment-schedules/{installmentSequence}/execute', 'post']] as const) {
        const parameters = document.paths[path][method].parameters as Array<{ in: string; name: string; schema: { enum?: string[] } }>;
        const scenario = parameters.find((parameter) => parameter.in === 'header' && parameter.name === 'coregate-scenario');
        assert.deepEqual(scenario?.schema.enum, [...scenarioNames], path);
        assert.ok(parameters.some((parameter) => parameter.in === 'header' && parameter.name === 'coregate-scenario-delay-ms'), path);
      }
    });

    test('an unknown scenario is 400 INVALID_SCENARIO listing the known ones; nothing consumed (the id then executes)', async () => {
      const token = await demoToken(server());
      const id = randomUUID();
      const refused = await initiate(server(), token, 1208, { scenario: 'core-on-fire', correlationId: id });
      assert.equal(refused.status, 400);
      assert.equal(refused.body.errordetail[0].reason, 'INVALID_SCENARIO');
      for (const name of scenarioNames) assert.ok(refused.body.message.includes(name), `${name} listed: ${refused.body.message}`);
      for (const delayMs of ['60001', '-1', 'soon', '1.5']) {
        const badDelay = await initiate(server(), token, 1208, { scenario: 'slow', delayMs, correlationId: id });
        assert.equal(badDelay.status, 400, delayMs);
        assert.equal(badDelay.body.errordetail[0].reason, 'INVALID_SCENARIO');
        assert.match(badDelay.body.message, /Coregate-Scenario-Delay-Ms/);
      }
      assert.equal((await initiate(server(), token, 1208, { correlationId: id })).status, 200);
    });

    test('a scenario on a request that executes nothing (a retrieve) is 400 INVALID_SCENARIO', async () => {
      const token = await demoToken(server());
      const response = await send(`${server().url}/v1/term-deposits/TD0000000001/retrieve`, { headers: { authorization: `Bearer ${token}`, 'coregate-scenario': 'slow' } });
      assert.equal(response.status, 400);
      assert.equal(response.body.errordetail[0].reason, 'INVALID_SCENARIO');
    });

    test('an unauthenticated request with a scenario is 401: the header is read only after authentication', async () => {
      const response = await send(`${server().url}${initiatePath}`, { method: 'POST', headers: { 'content-type': 'application/json', 'coregate-scenario': 'core-on-fire' }, body: JSON.stringify(depositBody(1)) });
      assert.equal(response.status, 401);
    });
  },
  { clock, flags: { sandbox: true, coreTimeoutMs: String(coreTimeoutMs) }, env: { COREGATE_MASTER_KEY: masterKey, ...loopbackEnv } },
);

test('outside sandbox mode Coregate-Scenario is refused with 400 SCENARIO_NOT_ALLOWED, never ignored: nothing executed', async () => {
  await withCreatedStore(storeTargets[0]!, async (url) => {
  const server = await startTestServer({ db: url, deployment: 'embedded' });
  try {
    const token = await demoToken(server);
    for (const headers of [{ scenario: 'core-unavailable' }, { scenario: 'not-a-scenario' }, { delayMs: '100' }] as Forced[]) {
      const id = randomUUID();
      const refused = await initiate(server, token, 1209, { ...headers, correlationId: id });
      assert.equal(refused.status, 400, JSON.stringify(refused.body));
      assert.equal(refused.body.errordetail[0].reason, 'SCENARIO_NOT_ALLOWED');
      assert.match(refused.body.message, /sandbox mode/);
      const count = await server.coregate.store.db.selectFrom('operations').select('reference').where('correlation_id', '=', id).execute();
      assert.equal(count.length, 0, 'the correlation id was not consumed');
    }
  } finally {
    await server.close();
  }
  });
});
