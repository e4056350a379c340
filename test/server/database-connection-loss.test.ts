/**
 * Issue 24: the database connection breaks under load. Every session of the test's database is
 * terminated (`pg_terminate_backend`) while clients keep initiating term deposits, several times,
 * on one process and with `--workers 2`. The process lives; a request caught by the cut is
 * answered 503 (never a 500, never a 200 for an operation that did not commit); readiness is back
 * within seconds of the database answering again; every 200 is executed exactly once, and every
 * cut-off request either did nothing or committed completely (a repeat of its correlation id then
 * answers 409 naming it: found again, never executed twice).
 */
// @lane process: starts coregate processes (docs/testing.md, "Lanes")
// @starts-early: among the slowest files of a quiet run
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { answersServed, countByStatus, type Outcome, dataFile, depositClients, initiate, readyStatus, terminateSessions, tokenOf } from '../helpers/database-cuts.js';
import { spawnCoregate } from '../helpers/processes.js';
import { adminQuery, storeTargets, withDb } from '../helpers/stores.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';
import { waitFor } from '../helpers/wait.js';

const postgres = storeTargets.find((target) => target.name === 'postgres');

/** Concurrent clients, each sending one request after another. */
const clientsCount = 12;
/** Times every session of the database is cut during the run. */
const cutsCount = 3;
/**
 * How the connections are cut: every session terminated by the server (`pg_terminate_backend`:
 * an error message, then the socket closes), or every connection reset by a TCP proxy between
 * coregate and PostgreSQL (a network blip, a balancer or pgbouncer restart: no message at all),
 * the proxy then refusing new connections for a moment (the address points nowhere).
 */
type CutBy = 'terminate' | 'proxy';

async function underCuts(workers: number, cutBy: CutBy): Promise<void> {
  const created = await postgres!.create();
  const databaseName = new URL(created.url).pathname.slice(1);
  const target = new URL(created.url);
  const proxy = cutBy === 'proxy' ? await TcpProxy.start(Number(target.port || 5432)) : undefined;
  const dbUrl = new URL(created.url);
  if (proxy) dbUrl.port = String(proxy.port);
  // The core's time-out (5 s by default) is raised: a cut answers at once, and what this proves is
  // that it answers 503. Two whole test runs at once on 2 cores (load ~18) once made a request just
  // after a resume take longer than 5 s and answer 504: the time-out measured the machine.
  const serve = await spawnCoregate(['serve', '--operator-api', '--core-timeout-ms', '30000', '--data', dataFile, '--db', dbUrl.toString(), ...(workers > 1 ? ['--workers', String(workers)] : [])]);
  let notReadySeen = false;
  const consoleLoginStatuses: number[] = [];
  const cutOnce = async (outcomes: Outcome[]): Promise<number> => {
    if (!proxy) return terminateSessions(databaseName);
    proxy.pause('refuse');
    const cut = proxy.cutAll('reset');
    // While nothing is reachable, the instance says it is not ready.
    notReadySeen ||= (await readyStatus(serve)) === 503;
    // A route without an error handler of its own (the console's login reads its token): 503, never a 500 naming the driver's error.
    const login = await fetch(`${serve.url}/console/login?token=not-a-token`, { redirect: 'manual' });
    consoleLoginStatuses.push(login.status);
    // The outage lasts until the clients have felt it (an answer each, on average, while nothing is
    // reachable), instead of a fixed half second: the requests caught by it are what this proves.
    await answersServed(outcomes, clientsCount);
    proxy.resume();
    return cut;
  };
  try {
    const token = await tokenOf(serve);
    const clients = depositClients(serve, token, clientsCount);
    const { outcomes } = clients;
    let cut = 0;
    for (let round = 0; round < cutsCount; round += 1) {
      await answersServed(outcomes, clientsCount * 2);
      cut += await cutOnce(outcomes);
    }
    // Requests keep going after the last cut (answers of the recovery, not only of the outage).
    await answersServed(outcomes, clientsCount);
    await clients.stop();
    assert.ok(cut > 0, 'sessions were cut');
    if (proxy) {
      assert.ok(notReadySeen, 'not ready while the database was unreachable');
      assert.ok(consoleLoginStatuses.length > 0 && consoleLoginStatuses.every((status) => status === 503), `the console's login answers 503 while the database is unreachable: ${JSON.stringify(consoleLoginStatuses)}`);
    }
    assert.equal(serve.child.exitCode, null, `the process lives: ${serve.output().stderr.slice(-3000)}`);
    assert.equal(serve.child.signalCode, null);
    assert.doesNotMatch(serve.output().stdout + serve.output().stderr, /a worker died|Unhandled 'error' event/, 'no worker died');

    // Ready again within seconds of the database answering.
    await waitFor('ready again', async () => ((await fetch(`${serve.url}/health/ready`)).status === 200 ? true : undefined), 15_000);

    const byStatus = countByStatus(outcomes);
    for (const outcome of outcomes) {
      assert.ok([200, 503].includes(outcome.status as number), `a cut request is answered 503, never ${outcome.status}: ${outcome.body.slice(0, 500)} (${JSON.stringify(byStatus)})`);
      if (outcome.status === 503) {
        const record = JSON.parse(outcome.body) as { status: number; reason: string; message: string };
        assert.equal(record.status, 503);
        assert.equal(record.reason, 'SERVICE_UNAVAILABLE');
        assert.doesNotMatch(record.message, /terminat|pg_|ECONN|at \w+ \(/, 'the answer names no driver detail');
      }
    }
    assert.ok((byStatus['200'] ?? 0) > clientsCount, `requests succeeded: ${JSON.stringify(byStatus)}`);
    console.log(`# ${cutBy}, ${workers} worker(s), ${cut} sessions cut over ${cutsCount} cuts; answers by status: ${JSON.stringify(byStatus)}`);

    // A repeat of a cut-off request's correlation id: executed now if nothing committed, else 409
    // naming the operation. Either way exactly one movement per correlation id afterwards.
    const cutOff = outcomes.filter((outcome) => outcome.status === 503);
    for (const outcome of cutOff) {
      const repeat = await initiate(serve, token, outcome.correlationId);
      assert.ok([200, 409].includes(repeat.status as number), `a repeat answers 200 or 409, not ${repeat.status}: ${repeat.body}`);
    }
    await withDb(created.url, async (db) => {
      for (const outcome of outcomes) {
        const operation = await db.selectFrom('operations').select(['reference', 'status']).where('correlation_id', '=', outcome.correlationId).executeTakeFirst();
        assert.equal(operation?.status, 'Executed', `${outcome.status}: the operation is executed (${outcome.correlationId})`);
        const movements = await db.selectFrom('movements').select('id').where('reference', '=', operation!.reference).execute();
        assert.equal(movements.length, 1, 'exactly one movement: never executed twice');
      }
    });
  } finally {
    await serve.stop('SIGTERM');
    await proxy?.close();
    await created.drop();
  }
}

describe('the database connection breaks under load (issue 24)', { skip: postgres?.skip }, () => {
  test('every PostgreSQL session terminated under load, one process: it lives, answers 503, is ready again; nothing lost or doubled', { timeout: 150_000 }, () => underCuts(1, 'terminate'));
  test('every PostgreSQL session terminated under load, --workers 2: both workers live, answer 503, are ready again; nothing lost or doubled', { timeout: 150_000 }, () => underCuts(2, 'terminate'));
  test('every connection reset by the proxy in front of PostgreSQL under load, one process: it lives, answers 503 and is not ready while unreachable, then ready again; nothing lost or doubled', { timeout: 150_000 }, () => underCuts(1, 'proxy'));
  test('every connection reset by the proxy in front of PostgreSQL under load, --workers 2: the same', { timeout: 150_000 }, () => underCuts(2, 'proxy'));
});

describe('a database that stops taking writes (issue 24)', { skip: postgres?.skip }, () => {
  test('read-only sessions (default_transaction_read_only): writes answer 503, not ready; once writable, the read-only connections are replaced and it is ready again', { timeout: 120_000 }, async () => {
    const created = await postgres!.create();
    const databaseName = new URL(created.url).pathname.slice(1);
    const serve = await spawnCoregate(['serve', '--data', dataFile, '--db', created.url]);
    try {
      const token = await tokenOf(serve);
      assert.equal((await initiate(serve, token, randomUUID())).status, 200);
      // Every new session is read-only, and the pool's sessions are cut so that it makes new ones.
      await adminQuery(`alter database ${databaseName} set default_transaction_read_only = on`);
      await terminateSessions(databaseName);
      const refused = await waitFor('a write refused', async () => {
        const answer = await initiate(serve, token, randomUUID());
        return answer.status === 200 ? undefined : answer;
      }, 30_000);
      assert.equal(refused.status, 503, refused.body);
      assert.equal((JSON.parse(refused.body) as { reason: string }).reason, 'SERVICE_UNAVAILABLE');
      const notReady = await fetch(`${serve.url}/health/ready`);
      assert.equal(notReady.status, 503);
      assert.equal(((await notReady.json()) as { check?: string }).check, 'store');

      // Writable again for new sessions; the read-only ones still in the pool must be replaced, not kept.
      await adminQuery(`alter database ${databaseName} reset default_transaction_read_only`);
      await waitFor('ready again', async () => ((await readyStatus(serve)) === 200 ? true : undefined), 30_000);
      const statuses: number[] = [];
      for (let attempt = 0; attempt < 40 && statuses.filter((status) => status === 200).length < 20; attempt += 1) {
        statuses.push((await initiate(serve, token, randomUUID())).status as number);
      }
      assert.ok(statuses.every((status) => status === 200 || status === 503), JSON.stringify(statuses));
      assert.deepEqual(statuses.slice(-20), Array(20).fill(200), `the read-only connections were replaced: ${JSON.stringify(statuses)}`);
      assert.equal(serve.child.exitCode, null);
    } finally {
      await serve.stop('SIGTERM');
      await adminQuery(`alter database ${databaseName} reset default_transaction_read_only`).catch(() => {});
      await created.drop();
    }
  });
});
