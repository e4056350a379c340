/**
 * Issue 24 with a remote core: the API's database and the core's database each lose every
 * session under load. The API claims an operation in its database before calling the core and
 * settles it after, so a cut can land between the core's commit and the API's record of it. Both
 * processes live; a request is answered 200 only for an operation the core executed; one caught
 * by the cut is answered 503 (nothing known to be done, repeatable), or 502/504 (outcome unknown);
 * the reconciler then settles every operation left open, and each operation the core executed is
 * recorded Executed, exactly once.
 */
// @lane process: starts coregate processes (docs/testing.md, "Lanes")
// @starts-early: among the slowest files of a quiet run
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { answersServed, countByStatus, dataFile, depositClients, initiate, terminateSessions, tokenOf } from '../helpers/database-cuts.js';
import { spawnCoregate, type CoregateProcess } from '../helpers/processes.js';
import { storeTargets, withDb } from '../helpers/stores.js';
import { sleep, waitFor } from '../helpers/wait.js';

const postgres = storeTargets.find((target) => target.name === 'postgres');

const clientsCount = 10;
/** The API's core time-out: an operation in flight is abandoned after twice this plus 5 s (its lease). */
const coreTimeoutMs = 2_000;

describe('a remote core, and the databases of both lose their connections under load (issue 24)', { skip: postgres?.skip }, () => {
  test('API and core sessions cut in turn: both live; 200 only for what the core executed; the reconciler settles every open operation; nothing doubled', { timeout: 180_000 }, async () => {
    const apiDb = await postgres!.create();
    const coreDb = await postgres!.create();
    const processes: CoregateProcess[] = [];
    try {
      const env = { COREGATE_RECONCILE_BACKOFF_MAX_MS: '2000' };
      const core = await spawnCoregate(['core', 'serve', '--db', coreDb.url, '--data', dataFile], { env });
      processes.push(core);
      const api = await spawnCoregate(
        ['serve', '--db', apiDb.url, '--data', dataFile, '--core-url', core.url, '--core-timeout-ms', String(coreTimeoutMs), '--reconcile-interval-ms', '300'],
        { env },
      );
      processes.push(api);
      const token = await tokenOf(api);
      const clients = depositClients(api, token, clientsCount);
      const { outcomes } = clients;
      const databaseOf = (url: string) => new URL(url).pathname.slice(1);
      let cut = 0;
      for (const databases of [[apiDb.url], [coreDb.url], [apiDb.url, coreDb.url]]) {
        await answersServed(outcomes, clientsCount * 2);
        for (const url of databases) cut += await terminateSessions(databaseOf(url));
      }
      await answersServed(outcomes, clientsCount);
      await clients.stop();
      assert.ok(cut > 0, 'sessions were cut');
      for (const process of processes) assert.equal(process.child.exitCode, null, `${process.url} lives: ${process.output().stderr.slice(-3000)}`);

      const byStatus = countByStatus(outcomes);
      console.log(`# remote core: ${cut} sessions cut; answers by status: ${JSON.stringify(byStatus)}`);
      for (const outcome of outcomes) assert.ok([200, 502, 503, 504].includes(outcome.status as number), `no ${outcome.status}: ${outcome.body.slice(0, 400)} (${JSON.stringify(byStatus)})`);

      // A 503 left nothing known to be done: its repeat executes it now, or answers 409 if it had been.
      for (const outcome of outcomes.filter((candidate) => candidate.status === 503)) {
        const repeat = await waitFor('a repeat answered', async () => {
          const answer = await initiate(api, token, outcome.correlationId);
          return answer.status === 503 ? undefined : answer;
        }, 30_000);
        assert.ok([200, 409, 502, 504].includes(repeat.status as number), `a repeat of a 503 answers ${repeat.status}: ${repeat.body}`);
      }

      // The reconciler settles every operation the cuts left open (unknown, or in flight past its lease).
      await withDb(apiDb.url, (db) =>
        waitFor(
          'every operation settled',
          async () => ((await db.selectFrom('operations').select('reference').where('status', 'in', ['Pending', 'InFlight', 'Unknown']).limit(1).execute()).length === 0 ? true : undefined),
          90_000,
        ),
      );
      const operations = await withDb(apiDb.url, (db) => db.selectFrom('operations').select(['reference', 'correlation_id', 'status']).execute());
      const movements = await withDb(coreDb.url, (db) => db.selectFrom('movements').select('reference').where('kind', '<>', 'opening_balance').execute());
      const executedTimes = new Map<string, number>();
      for (const { reference } of movements) executedTimes.set(reference, (executedTimes.get(reference) ?? 0) + 1);
      const byReference = new Map(operations.map((operation) => [operation.reference, operation]));
      for (const [reference, times] of executedTimes) {
        assert.equal(times, 1, `${reference} executed once`);
        assert.equal(byReference.get(reference)?.status, 'Executed', `the core executed ${reference}: the API records it Executed`);
      }
      const byCorrelation = new Map(operations.map((operation) => [operation.correlation_id, operation]));
      for (const outcome of outcomes) {
        const operation = byCorrelation.get(outcome.correlationId);
        if (outcome.status === 200) {
          assert.equal(operation?.status, 'Executed', `acknowledged ${outcome.correlationId} is executed`);
          assert.equal(executedTimes.get(operation!.reference), 1);
        }
        if (operation?.status === 'Rejected') assert.equal(executedTimes.get(operation.reference) ?? 0, 0, 'a rejected operation moved no money');
      }
    } finally {
      for (const process of processes.reverse()) await process.stop('SIGTERM');
      await apiDb.drop();
      await coreDb.drop();
    }
  });
});
