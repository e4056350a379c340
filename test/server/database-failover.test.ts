/**
 * Issue 24: coregate on a PostgreSQL primary with a synchronous hot standby, reached through one
 * address that moves at failover (a TCP proxy of the test's own, as a VIP, HAProxy or pgbouncer
 * would be). The clusters are made by the test (initdb, pg_basebackup) and removed after it.
 */
// @lane process: starts coregate processes (docs/testing.md, "Lanes")
// @starts-early: among the slowest files of a quiet run
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { answersServed, countByStatus, dataFile, depositClients, initiate, readyStatus, tokenOf, type Outcome } from '../helpers/database-cuts.js';
import { PgCluster, pgClusterSkip } from '../helpers/pg-cluster.js';
import { spawnCoregate, type CoregateProcess } from '../helpers/processes.js';
import { withDb } from '../helpers/stores.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';
import { sleep, waitFor } from '../helpers/wait.js';

const skip = pgClusterSkip();
const clientsCount = 10;
const databaseName = 'coregate';

/** Every 200 executed once; every 503 repeated: executed now, or 409 if it had committed; exactly one movement each. */
async function assertNothingLostOrDoubled(serve: CoregateProcess, token: string, dbUrl: string, outcomes: Outcome[]): Promise<void> {
  const byStatus = countByStatus(outcomes);
  for (const outcome of outcomes) assert.ok([200, 503].includes(outcome.status as number), `answered 200 or 503, not ${outcome.status}: ${outcome.body.slice(0, 400)} (${JSON.stringify(byStatus)})`);
  for (const outcome of outcomes.filter((candidate) => candidate.status === 503)) {
    const repeat = await initiate(serve, token, outcome.correlationId);
    assert.ok([200, 409].includes(repeat.status as number), `a repeat answers 200 or 409, not ${repeat.status}: ${repeat.body}`);
  }
  await withDb(dbUrl, async (db) => {
    for (const outcome of outcomes) {
      const operation = await db.selectFrom('operations').select(['reference', 'status']).where('correlation_id', '=', outcome.correlationId).executeTakeFirst();
      assert.equal(operation?.status, 'Executed', `${outcome.status} ${outcome.correlationId}: executed on the new primary`);
      const movements = await db.selectFrom('movements').select('id').where('reference', '=', operation!.reference).execute();
      assert.equal(movements.length, 1, 'exactly one movement: never executed twice');
    }
  });
}

describe('PostgreSQL failover behind an address that moves (issue 24)', { skip }, () => {
  let cluster: PgCluster;
  before(async () => {
    cluster = await PgCluster.start();
    await cluster.createDatabase(databaseName);
  });
  after(() => cluster?.stop());

  test('the address points at the hot standby: writes answer 503 and it is not ready; pointed back at the primary, it recovers by itself', { timeout: 120_000 }, async () => {
    const proxy = await TcpProxy.start(cluster.primary.port);
    const serve = await spawnCoregate(['serve', '--data', dataFile, '--db', cluster.url(proxy.port, databaseName)]);
    try {
      const token = await tokenOf(serve);
      // The precondition, a write accepted on the primary: retried while it answers 503, because on
      // a machine loaded by two whole test runs a first connection through the proxy took longer
      // than the 5-s connect time-out once, and the service rightly said so (503, try again).
      const first = await waitFor('a first write answered otherwise than 503', async () => {
        const answer = await initiate(serve, token, randomUUID());
        return answer.status === 503 ? undefined : answer;
      }, 60_000);
      assert.equal(first.status, 200, first.body);
      proxy.retarget(cluster.standby!.port);
      proxy.cutAll();
      const refused = await waitFor('a write refused by the standby', async () => {
        const answer = await initiate(serve, token, randomUUID());
        return answer.status === 200 ? undefined : answer;
      }, 30_000);
      assert.equal(refused.status, 503, refused.body);
      await waitFor('not ready on a standby', async () => ((await readyStatus(serve)) === 503 ? true : undefined), 15_000);
      proxy.retarget(cluster.primary.port);
      await waitFor('ready again on the primary', async () => ((await readyStatus(serve)) === 200 ? true : undefined), 30_000);
      const after = await waitFor('a write accepted again', async () => {
        const answer = await initiate(serve, token, randomUUID());
        return answer.status === 200 ? answer : undefined;
      }, 30_000);
      assert.equal(after.status, 200);
      assert.equal(serve.child.exitCode, null, 'the process lives');
    } finally {
      await serve.stop('SIGTERM');
      await proxy.close();
    }
  });

  test('the primary killed under load, the synchronous standby promoted while the address still points at the dead primary (503, not ready), then the address moves: ready again without a restart; every acknowledged operation on the new primary, none doubled', { timeout: 180_000 }, async () => {
    const proxy = await TcpProxy.start(cluster.primary.port);
    const serve = await spawnCoregate(['serve', '--data', dataFile, '--db', cluster.url(proxy.port, databaseName)]);
    try {
      const token = await tokenOf(serve);
      const clients = depositClients(serve, token, clientsCount);
      const { outcomes } = clients;
      await answersServed(outcomes, clientsCount * 3);
      // Mid-transaction: ten clients have deposits in flight at every moment.
      await cluster.killPrimary('sigkill');
      const promoted = await cluster.promoteStandby();
      await cluster.waitUntilWritable(promoted);
      // The address still points at the dead primary: nothing writable is reachable.
      await waitFor('not ready while the address points at the dead primary', async () => ((await readyStatus(serve)) === 503 ? true : undefined), 15_000);
      const during = outcomes.length;
      await sleep(500);
      assert.ok(outcomes.slice(during).every((outcome) => outcome.status === 503), `503 while no writable database is reachable: ${JSON.stringify(countByStatus(outcomes.slice(during)))}`);
      proxy.retarget(promoted.port);
      await waitFor('ready again on the new primary', async () => ((await readyStatus(serve)) === 200 ? true : undefined), 30_000);
      const afterMove = outcomes.length;
      await answersServed(outcomes, clientsCount * 2);
      await clients.stop();
      assert.ok(outcomes.slice(afterMove).some((outcome) => outcome.status === 200), 'deposits succeed on the new primary');
      assert.equal(serve.child.exitCode, null, `the process lives: ${serve.output().stderr.slice(-2000)}`);
      console.log(`# failover: answers by status ${JSON.stringify(countByStatus(outcomes))}`);
      await assertNothingLostOrDoubled(serve, token, cluster.url(promoted.port, databaseName), outcomes);
    } finally {
      await serve.stop('SIGTERM');
      await proxy.close();
    }
  });
});
