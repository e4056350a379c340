/**
 * The reconciler (docs/deployment.md, "The reconciler") and `coregate check`'s operation findings.
 * The reconciler is driven directly (`reconcile`) instead of waiting for its timer, so no test
 * sleeps on it.
 */
// @deployments remote-core two-instances
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { findAccount } from '../../src/reference-core/storage/banking.js';
import { findOperationByCorrelation } from '../../src/store/operations.js';
import { depositBody } from '../helpers/bodies.js';
import { runCli } from '../helpers/cli.js';
import { FaultyCore } from '../helpers/faulty-core.js';
import { initiatePath, send, type HttpResult } from '../helpers/http.js';
import { demoToken, type TestServer } from '../helpers/server.js';
import { describeEachStore } from '../helpers/suite.js';
import { runPendingWorkers } from '../helpers/background.js';
import { FakeClock } from '../helpers/fake-clock.js';
import { coreTablesOf } from '../../src/reference-core/storage/core-db.js';
import { embedded } from '../helpers/stores.js';

const faulty = new FaultyCore();
/**
 * The instance's clock: its timers (the loops, the core time-out) fire only when a test moves it.
 * It starts at the real time, so that `coregate check` (another process, on the system's clock)
 * sees the records' times as recent.
 */
const clock = new FakeClock(Date.now());
const coreTimeoutMs = 2_000;
const sourceAccount = '1000000001';

function initiate(server: TestServer, token: string, correlationId: string, amount: number, prefer?: string): Promise<HttpResult> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'x-correlation-id': correlationId };
  if (prefer) headers.prefer = prefer;
  return send(`${server.url}${initiatePath}`, { method: 'POST', headers, body: JSON.stringify(depositBody(amount, sourceAccount)) });
}

async function stored(server: TestServer, correlationId: string) {
  const clients = await server.coregate.store.db.selectFrom('operations').select('client_key').where('correlation_id', '=', correlationId).executeTakeFirst();
  const record = clients && (await findOperationByCorrelation(server.coregate.store.db, clients.client_key, correlationId));
  if (!record) throw new Error(`no operation for ${correlationId}`);
  return record;
}

/** GET /v1/operations/{reference}: what the client is shown of the operation. */
async function operationView(server: TestServer, token: string, reference: string): Promise<Record<string, unknown>> {
  const view = await send(`${server.url}/v1/operations/${reference}`, { headers: { authorization: `Bearer ${token}` } });
  assert.equal(view.status, 200, JSON.stringify(view.body));
  return view.body as Record<string, unknown>;
}

/** With a remote core, `coregate check` proves its ledger through the core (--core-url). */
const coreUrlFlag = (server: TestServer) => (server.coreUrl === undefined ? [] : ['--core-url', server.coreUrl]);
const balance = async (server: TestServer) => (await findAccount(coreTablesOf(server.coregate.store.db), sourceAccount))?.balanceMinor ?? 0n;
const movementsOf = async (server: TestServer, reference: string) =>
  (await embedded(server.coregate.store.db).selectFrom('movements').select('id').where('reference', '=', reference).execute()).length;

describeEachStore(
  'reconciler: unknown outcomes are settled by reference',
  ({ server, dbUrl }) => {
    test('an unknown outcome (502) nobody repeats is fenced: Rejected NOT_EXECUTED (TD-502-002), nothing posted, and a late repeat gets 409 naming it', async () => {
      const token = await demoToken(server());
      const id = randomUUID();
      const before = await balance(server());
      const failed = await faulty.withFault({ kind: 'unavailable' }, () => initiate(server(), token, id, 1234));
      assert.equal(failed.status, 502);
      const unknown = await stored(server(), id);
      assert.equal(unknown.status, 'Unknown');

      const settled = await server().coregate.reconciler.reconcile(unknown);
      assert.equal(settled.status, 'Rejected');
      const error = settled.error as { errordetail?: Array<{ code: string }> };
      assert.equal(error.errordetail?.[0]?.code, 'TD-502-002');
      assert.equal(await balance(server()), before, 'nothing posted');
      assert.equal(await movementsOf(server(), unknown.reference), 0);

      const repeat = await initiate(server(), token, id, 1234);
      assert.equal(repeat.status, 409, JSON.stringify(repeat.body));
      assert.match(repeat.body.message, new RegExp(`${unknown.reference} \\(Rejected with 502 TD-502-002\\)`));
      // The fence holds in the core: the reference can never execute late.
      const lookup = await server().coregate.core.findTermDepositConstitution(unknown.reference);
      assert.equal(lookup.status, 'Rejected');
    });

    test('a core time-out after the core executed (504): the reconciler finds it executed and records it once; one ledger movement', async () => {
      const token = await demoToken(server());
      const id = randomUUID();
      const before = await balance(server());
      // The core writes, then its answer is held; the time-out passes on the instance's clock: 504.
      const arrived = faulty.arrived();
      const request = faulty.withFault({ kind: 'commit-then-hold' }, () => initiate(server(), token, id, 2345));
      await arrived;
      clock.advance(coreTimeoutMs);
      const timedOut = await request;
      assert.equal(timedOut.status, 504, JSON.stringify(timedOut.body));
      // The unit of work commits after the time-out, once the core answers.
      faulty.release();
      await server().coregate.background.execution.idle();
      const record = await stored(server(), id);
      const settled = record.status === 'Unknown' ? await server().coregate.reconciler.reconcile(record) : record;
      assert.equal(settled.status, 'Executed');
      assert.equal(await movementsOf(server(), record.reference), 1);
      assert.equal(await balance(server()), before - 234_500n);
    });

    test('a 202 whose execution met a core failure is owed an execution: the reconciler executes it once the core is back', async () => {
      const token = await demoToken(server());
      const id = randomUUID();
      const before = await balance(server());
      const accepted = await faulty.withFault({ kind: 'unavailable' }, async () => {
        const response = await initiate(server(), token, id, 3456, 'respond-async');
        assert.equal(response.status, 202);
        // The worker meets the unavailable core: the operation is held as unknown, not lost. Its pass
        // (started by the 202) is awaited, or, if it has ended, another one finds nothing pending.
        await runPendingWorkers(server());
        return response;
      });
      const unknown = await stored(server(), id);
      assert.equal(unknown.status, 'Unknown');
      assert.equal(unknown.accepted, true);
      const settled = await server().coregate.reconciler.reconcile(unknown);
      assert.equal(settled.status, 'Executed');
      assert.equal(settled.reference, accepted.body.operationReference);
      assert.equal(await movementsOf(server(), unknown.reference), 1);
      assert.equal(await balance(server()), before - 345_600n);
    });

    test('a settled operation shows only its final outcome: a 202 met a 502, the reconciler executed it; GET /v1/operations/{reference} is Executed with its result and no error, and the stored record holds no error', async () => {
      const token = await demoToken(server());
      const id = randomUUID();
      await faulty.withFault({ kind: 'unavailable' }, async () => {
        assert.equal((await initiate(server(), token, id, 1357, 'respond-async')).status, 202);
        await runPendingWorkers(server());
      });
      const unknown = await stored(server(), id);
      assert.equal(unknown.status, 'Unknown');
      assert.ok(unknown.error, 'the unknown outcome holds its 502 error record');

      const settled = await server().coregate.reconciler.reconcile(unknown);
      assert.equal(settled.status, 'Executed');
      assert.equal(settled.error, undefined, 'the stored record keeps no error once executed');
      const view = await operationView(server(), token, unknown.reference);
      assert.equal(view.status, 'Executed');
      assert.equal((view.result as { operationReference?: string } | undefined)?.operationReference, unknown.reference);
      assert.equal('error' in view, false, JSON.stringify(view));
    });

    test('a settled operation shows only its final outcome: a 502, then a repeat with the same x-correlation-id executed it (200); GET /v1/operations/{reference} is Executed with its result and no error', async () => {
      const token = await demoToken(server());
      const id = randomUUID();
      assert.equal((await faulty.withFault({ kind: 'unavailable' }, () => initiate(server(), token, id, 1468))).status, 502);
      const unknown = await stored(server(), id);
      assert.equal(unknown.status, 'Unknown');

      const repeat = await initiate(server(), token, id, 1468);
      assert.equal(repeat.status, 200, JSON.stringify(repeat.body));
      assert.equal((await stored(server(), id)).error, undefined, 'the stored record keeps no error once executed');
      const view = await operationView(server(), token, unknown.reference);
      assert.equal(view.status, 'Executed');
      assert.deepEqual(view.result, repeat.body);
      assert.equal('error' in view, false, JSON.stringify(view));
    });

    test('a settled operation shows only its final outcome: a 502 the reconciler fenced is Rejected with its final error record (TD-502-002, not the 502\'s TD-502-001) and no result', async () => {
      const token = await demoToken(server());
      const id = randomUUID();
      assert.equal((await faulty.withFault({ kind: 'unavailable' }, () => initiate(server(), token, id, 1579))).status, 502);
      const unknown = await stored(server(), id);
      await server().coregate.reconciler.reconcile(unknown);
      const view = await operationView(server(), token, unknown.reference);
      assert.equal(view.status, 'Rejected');
      assert.equal((view.error as { errordetail?: Array<{ code: string }> } | undefined)?.errordetail?.[0]?.code, 'TD-502-002');
      assert.equal('result' in view, false, JSON.stringify(view));
    });

    test('a settled operation shows only its final outcome, also from a record stored before the rule: an Executed row that kept its 502 error shows no error', async () => {
      const token = await demoToken(server());
      const id = randomUUID();
      assert.equal((await faulty.withFault({ kind: 'unavailable' }, () => initiate(server(), token, id, 1680))).status, 502);
      const unknown = await stored(server(), id);
      assert.equal((await initiate(server(), token, id, 1680)).status, 200);
      // What a version without the rule left in the store: the executed row with the unknown outcome's error.
      await server().coregate.store.db.updateTable('operations').set({ error: JSON.stringify(unknown.error) }).where('reference', '=', unknown.reference).execute();
      const view = await operationView(server(), token, unknown.reference);
      assert.equal(view.status, 'Executed');
      assert.ok(view.result, 'the result is shown');
      assert.equal('error' in view, false, JSON.stringify(view));
    });

    test('coregate check reports an operation unknown past the age limit and exits non-zero; after reconciliation it passes', async () => {
      const token = await demoToken(server());
      const id = randomUUID();
      assert.equal((await faulty.withFault({ kind: 'unavailable' }, () => initiate(server(), token, id, 4567))).status, 502);
      // Aged past the 1 s limit in the store itself: `coregate check` reads the system's clock, not the instance's.
      await server().coregate.store.db.updateTable('operations').set({ created_epoch_ms: BigInt(Date.now() - 60_000) }).where('correlation_id', '=', id).execute();
      const failing = await runCli(['check', '--db', dbUrl(), ...coreUrlFlag(server()), '--unknown-age-limit', '1', '--json']);
      assert.notEqual(failing.code, 0, failing.stdout + failing.stderr);
      const report = JSON.parse(failing.stdout) as { ok: boolean; operations: { unsettledPastAgeLimit: Array<{ reference: string }> } };
      const unknown = await stored(server(), id);
      assert.ok(report.operations.unsettledPastAgeLimit.some((entry) => entry.reference === unknown.reference));

      await server().coregate.reconciler.reconcile(unknown);
      await server().coregate.chainer.idle();
      const passing = await runCli(['check', '--db', dbUrl(), ...coreUrlFlag(server()), '--unknown-age-limit', '1']);
      assert.equal(passing.code, 0, passing.stdout + passing.stderr);
      assert.match(passing.stdout, /^Operations OK: /m);
    });

    test('coregate check reports an executed operation without postings or audit record', async () => {
      const token = await demoToken(server());
      const id = randomUUID();
      const refused = await initiate(server(), token, id, 300_000);
      assert.equal(refused.status, 422);
      const record = await stored(server(), id);
      // Tampering: a refused operation claimed as executed has neither postings nor a 200 audit record.
      await server().coregate.store.db.updateTable('operations').set({ status: 'Executed' }).where('reference', '=', record.reference).execute();
      const result = await runCli(['check', '--db', dbUrl(), ...coreUrlFlag(server()), '--json']);
      assert.notEqual(result.code, 0);
      const report = JSON.parse(result.stdout) as { operations: { executedWithoutPostings: string[]; executedWithoutAudit: string[] } };
      assert.deepEqual(report.operations.executedWithoutPostings, [record.reference]);
      assert.deepEqual(report.operations.executedWithoutAudit, [record.reference]);
      await server().coregate.store.db.updateTable('operations').set({ status: 'Rejected' }).where('reference', '=', record.reference).execute();
    });
  },
  // On the fake clock no timer fires on its own: these tests drive the reconciler and the worker
  // themselves, and a time-out happens when a test moves the clock past it.
  { wrapCore: faulty.wrap, clock, flags: { coreTimeoutMs: String(coreTimeoutMs) } },
);
