/**
 * The application layer on a fake clock (docs/api.md, "Correlation ids and duplicates";
 * docs/deployment.md, "The reconciler"): the runner, both execution strategies, the reconciler and
 * the pending worker, in process over a SQLite store and the reference core. Faults are gates at
 * the port (test/helpers/faulty-core.ts): a core call that commits and then hangs until released,
 * one held and then failing, one that fails at once. A time-out happens when the test moves the
 * clock past the core time-out; the reconciler and the worker run when the test runs them. Nothing
 * here sleeps or depends on how fast the machine is.
 */
// @starts-early: among the slowest files of a quiet run
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { errorCatalogue as E } from '../../src/core/error-catalogue.js';
import type { ErrorRecord } from '../../src/operations/error-record.js';
import { termDepositInitiation as deposit } from '../../src/operations/term-deposit-initiation/operation.js';
import { retryBaseMs } from '../../src/operations/retry-schedule.js';
import { applicationTimings, depositInvocation, startApplication, type Application } from '../helpers/application.js';
import { depositBody } from '../helpers/bodies.js';
import { coreTablesOf } from '../../src/reference-core/storage/core-db.js';

async function withApplication(strategy: 'embedded' | 'remote', work: (app: Application) => Promise<void>, coreTimeoutMs?: number): Promise<void> {
  const app = await startApplication({ strategy, ...(coreTimeoutMs === undefined ? {} : { coreTimeoutMs }) });
  try {
    await work(app);
  } finally {
    await app.close();
  }
}

function reasonOf(error: unknown): string | undefined {
  return (error as ErrorRecord | undefined)?.errordetail?.[0]?.reason;
}

/** The back-off window of attempt `attempts` (retry-schedule.ts): between half the interval and the interval. */
function backOffBounds(attempts: number): { minMs: number; maxMs: number } {
  const intervalMs = Math.min(applicationTimings.backoffMaxMs, retryBaseMs * 2 ** attempts);
  return { minMs: Math.round(intervalMs / 2), maxMs: intervalMs };
}

for (const strategy of ['embedded', 'remote'] as const) {
  describe(`application layer, ${strategy} core`, () => {
    test(`an operation the core executes is answered 200 and recorded Executed, once (${strategy})`, async () => {
      await withApplication(strategy, async (app) => {
        const outcome = await app.runner.run(deposit, depositInvocation(app.clock, depositBody()));
        assert.equal(outcome.kind, 'done', JSON.stringify(outcome));
        assert.ok(outcome.kind === 'done');
        const record = await app.record(outcome.reference);
        assert.equal(record.status, 'Executed');
        assert.equal(record.updatedEpochMs, app.clock.now(), 'stamped by the clock it was given');
        assert.equal(app.gate.writes, 1);
      });
    });

    test(`a core failure (502) leaves the outcome Unknown; the reconciler, once the attempt is due, fences it and records Rejected NOT_EXECUTED (${strategy})`, async () => {
      await withApplication(strategy, async (app) => {
        app.gate.fault = { kind: 'unavailable' };
        const failedAt = app.clock.now();
        const outcome = await app.runner.run(deposit, depositInvocation(app.clock, depositBody()));
        app.gate.fault = { kind: 'none' };
        assert.ok(outcome.kind === 'refused');
        assert.equal(outcome.status, 502);
        const reference = (await app.store.db.selectFrom('operations').select('reference').executeTakeFirstOrThrow()).reference;
        const unknown = await app.record(reference);
        assert.equal(unknown.status, 'Unknown');
        // Embedded, nothing was stored before the failure (attempt 0); remote, the claim was (its call is attempt 1).
        assert.equal(unknown.attempts, strategy === 'embedded' ? 0 : 1);
        const { minMs, maxMs } = backOffBounds(unknown.attempts);
        assert.ok(unknown.nextAttemptEpochMs >= failedAt + minMs && unknown.nextAttemptEpochMs <= failedAt + maxMs, `first attempt due ${unknown.nextAttemptEpochMs - failedAt} ms after the failure`);

        app.clock.set(unknown.nextAttemptEpochMs - 1);
        await app.reconciler.runOnce();
        assert.equal((await app.record(reference)).status, 'Unknown', 'not due yet: left alone');

        app.clock.advance(1);
        await app.reconciler.runOnce();
        const settled = await app.record(reference);
        assert.equal(settled.status, 'Rejected');
        assert.equal(settled.httpStatus, E.notExecuted.status);
        assert.equal(reasonOf(settled.error), 'NOT_EXECUTED');
        assert.equal(app.gate.writes, 0, 'the core never executed it');
      });
    });
  });
}

describe('application layer, remote core: time-outs and the reconciler', () => {
  test('the core commits, then its answer is late: 504 once the clock passes the time-out; the reconciler finds it Executed (once)', async () => {
    await withApplication('remote', async (app) => {
      app.gate.fault = { kind: 'commit-then-hold' };
      const arrived = app.gate.arrived();
      const running = app.runner.run(deposit, depositInvocation(app.clock, depositBody()));
      await arrived;
      app.clock.advance(applicationTimings.coreTimeoutMs - 1);
      const [before] = await app.store.db.selectFrom('operations').selectAll().execute();
      assert.equal(before?.status, 'InFlight', 'within the time-out the call is still waited for');
      app.clock.advance(1);
      const outcome = await running;
      assert.ok(outcome.kind === 'refused');
      assert.equal(outcome.status, 504);
      app.gate.fault = { kind: 'none' };
      app.gate.release();

      const reference = before?.reference ?? '';
      const unknown = await app.record(reference);
      assert.equal(unknown.status, 'Unknown');
      app.clock.set(unknown.nextAttemptEpochMs);
      await app.reconciler.runOnce();
      const settled = await app.record(reference);
      assert.equal(settled.status, 'Executed', 'the fence came after the execution: the core answers Executed');
      assert.equal(settled.httpStatus, 200);
      assert.equal(app.gate.writes, 1, 'executed once');
    });
  });

  test('failed reconciliation attempts back off exponentially (2 s, 4 s, 8 s, 16 s ... with jitter), each due only when the clock reaches it', async () => {
    await withApplication('remote', async (app) => {
      app.gate.fault = { kind: 'unavailable' };
      await app.runner.run(deposit, depositInvocation(app.clock, depositBody()));
      const reference = (await app.store.db.selectFrom('operations').select('reference').executeTakeFirstOrThrow()).reference;
      // The reconciler's calls (fence, lookup) fail too, until the core is back.
      app.gate.faultSettling = true;
      const first = (await app.record(reference)).attempts;
      for (let attempts = first + 1; attempts <= first + 5; attempts += 1) {
        const before = await app.record(reference);
        assert.equal(before.attempts, attempts - 1);
        app.clock.set(before.nextAttemptEpochMs - 1);
        await app.reconciler.runOnce();
        assert.equal((await app.record(reference)).attempts, attempts - 1, `attempt ${attempts} is not due a millisecond early`);
        app.clock.advance(1);
        const triedAt = app.clock.now();
        await app.reconciler.runOnce();
        const after = await app.record(reference);
        assert.equal(after.status, 'Unknown');
        assert.equal(after.attempts, attempts);
        const { minMs, maxMs } = backOffBounds(attempts);
        const delayMs = after.nextAttemptEpochMs - triedAt;
        assert.ok(delayMs >= minMs && delayMs <= maxMs, `after attempt ${attempts} the next is due in ${delayMs} ms, expected ${minMs}-${maxMs}`);
      }
      app.gate.faultSettling = false;
      app.gate.fault = { kind: 'none' };
      app.clock.set((await app.record(reference)).nextAttemptEpochMs);
      await app.reconciler.drain();
      const settled = await app.record(reference);
      assert.equal(settled.status, 'Rejected');
      assert.equal(reasonOf(settled.error), 'NOT_EXECUTED');
    });
  });

  test('an operation InFlight past its lease (its instance died mid-call) is taken by the reconciler, fenced and closed NOT_EXECUTED; the late call changes nothing', async () => {
    // This instance's own time-out is longer than the lease: it stands for an instance that hangs.
    await withApplication(
      'remote',
      async (app) => {
        app.gate.fault = { kind: 'hold-then-fail' };
        const arrived = app.gate.arrived();
        const running = app.runner.run(deposit, depositInvocation(app.clock, depositBody()));
        await arrived;
        const reference = (await app.store.db.selectFrom('operations').select('reference').executeTakeFirstOrThrow()).reference;
        assert.equal((await app.record(reference)).status, 'InFlight');

        app.clock.advance(applicationTimings.leaseMs);
        await app.reconciler.runOnce();
        assert.equal((await app.record(reference)).status, 'InFlight', 'within its lease the operation is left to its instance');

        app.clock.advance(1);
        await app.reconciler.runOnce();
        const fenced = await app.record(reference);
        assert.equal(fenced.status, 'Rejected');
        assert.equal(reasonOf(fenced.error), 'NOT_EXECUTED');

        app.gate.release();
        await running;
        const after = await app.record(reference);
        assert.equal(after.status, 'Rejected', 'the late failure does not move a settled operation');
        assert.equal(app.gate.writes, 0);
      },
      applicationTimings.leaseMs * 10,
    );
  });
});

describe('application layer: the reference core on the clock it is given', () => {
  test('issue 25: the core\'s records carry its clock\'s time (the data file\'s load, then an execution), never the machine\'s', async () => {
    await withApplication('embedded', async (app) => {
      const loadedAt = new Date(app.clock.now()).toISOString();
      app.clock.advance(90_000);
      const executedAt = new Date(app.clock.now()).toISOString();
      const outcome = await app.runner.run(deposit, depositInvocation(app.clock, depositBody()));
      assert.ok(outcome.kind === 'done', JSON.stringify(outcome));
      const core = coreTablesOf(app.store.db);
      const movements = await core.selectFrom('movements').select(['kind', 'created_at']).execute();
      const opening = movements.filter((movement) => movement.kind === 'opening_balance');
      const executed = movements.filter((movement) => movement.kind !== 'opening_balance');
      assert.ok(opening.length > 0 && executed.length > 0, JSON.stringify(movements));
      assert.deepEqual([...new Set(opening.map((movement) => movement.created_at))], [loadedAt], 'the data file\'s opening balances: the load\'s time');
      assert.deepEqual([...new Set(executed.map((movement) => movement.created_at))], [executedAt], 'the deposit\'s movement: the execution\'s time');
      const accounts = await core.selectFrom('accounts').select('created_at').execute();
      assert.deepEqual([...new Set(accounts.map((account) => account.created_at))].sort(), [loadedAt, executedAt], 'the file\'s accounts, then the deposit\'s own');
      const deposits = await core.selectFrom('term_deposits').select('created_at').execute();
      assert.deepEqual(deposits.map((row) => row.created_at), [executedAt]);
      const references = await core.selectFrom('core_operations').select('recorded_at').execute();
      assert.deepEqual(references.map((row) => row.recorded_at), [executedAt]);
    });
  });
});

describe('application layer: the pending worker', () => {
  for (const strategy of ['embedded', 'remote'] as const) {
    test(`respond-async answers 202 and leaves the operation Pending; one pass of the worker executes it (${strategy})`, async () => {
      await withApplication(strategy, async (app) => {
        const outcome = await app.runner.run(deposit, depositInvocation(app.clock, depositBody(), { respondAsync: true }));
        assert.ok(outcome.kind === 'accepted', JSON.stringify(outcome));
        assert.equal((await app.record(outcome.reference)).status, 'Pending');
        assert.equal(app.gate.writes, 0, 'nothing reaches the core before the worker runs');
        await app.worker.runOnce();
        const executed = await app.record(outcome.reference);
        assert.equal(executed.status, 'Executed');
        assert.equal(app.gate.writes, 1);
      });
    });
  }

  test('a pending operation whose execution fails is left Unknown; the reconciler owes it and executes it (answered 202: no fence)', async () => {
    await withApplication('remote', async (app) => {
      const outcome = await app.runner.run(deposit, depositInvocation(app.clock, depositBody(), { respondAsync: true }));
      assert.ok(outcome.kind === 'accepted');
      app.gate.fault = { kind: 'unavailable' };
      await app.worker.runOnce();
      app.gate.fault = { kind: 'none' };
      const unknown = await app.record(outcome.reference);
      assert.equal(unknown.status, 'Unknown');
      assert.equal(unknown.attempts, 1);
      app.clock.set(unknown.nextAttemptEpochMs);
      await app.reconciler.runOnce();
      const executed = await app.record(outcome.reference);
      assert.equal(executed.status, 'Executed');
      assert.equal(app.gate.writes, 1);
    });
  });
});
