/**
 * Issue 24: the database connection breaks under load. Every session of the test's database is
 * terminated (`pg_terminate_backend`) while clients keep initiating term deposits, several times,
 * on one process and with `--workers 2`. The process lives; a request caught by the cut is
 * answered 503 (never a 500, never a 200 for an operation that did not commit); readiness is back
 * within seconds of the database answering again; every 200 is executed exactly once, and every
 * cut-off request either did nothing or committed completely (a repeat of its correlation id then
 * answers 409 naming it: found again, never executed twice).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import pg from 'pg';
import { depositBody } from '../helpers/bodies.js';
import { readDemoData, writeTempDataFile, type SandboxData } from '../helpers/data-files.js';
import { initiatePath } from '../helpers/http.js';
import { spawnCoregate, type CoregateProcess } from '../helpers/processes.js';
import { demo, postForm } from '../helpers/server.js';
import { postgresAdminUrl, storeTargets, withDb } from '../helpers/stores.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';
import { sleep, waitFor } from '../helpers/wait.js';

const postgres = storeTargets.find((target) => target.name === 'postgres');

/** Concurrent clients, each sending one request after another. */
const clientsCount = 12;
/** Times every session of the database is cut during the run. */
const cutsCount = 3;
/** A client waits this long after a 503 before its next request (the answer's Retry-After, shortened to keep the load on). */
const pauseAfterUnavailableMs = 100;

/** The demo data with a source account that no run can drain (the demo's covers 250 deposits). */
const dataFile = (() => {
  const data = readDemoData<SandboxData>();
  const source = data.accounts.find((account) => account.accountNumber === '1000000001');
  if (source) source.balance = 100_000_000;
  return writeTempDataFile(data, 'coregate-connection-loss-');
})();

type Outcome = { correlationId: string; status: number | 'network-error'; body: string };

async function terminateSessions(databaseName: string): Promise<number> {
  const admin = new pg.Client({ connectionString: postgresAdminUrl });
  await admin.connect();
  try {
    const { rows } = await admin.query('select count(pg_terminate_backend(pid))::int as cut from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [databaseName]);
    return (rows[0] as { cut: number }).cut;
  } finally {
    await admin.end();
  }
}

const readyStatus = async (serve: CoregateProcess): Promise<number> => (await fetch(`${serve.url}/health/ready`)).status;

async function tokenOf(serve: CoregateProcess): Promise<string> {
  return waitFor('a token', async () => {
    const answer = await postForm(`${serve.url}/realms/sandbox/protocol/openid-connect/token`, {
      grant_type: 'client_credentials',
      client_id: demo.treasury.clientId,
      client_secret: demo.treasury.secret,
    }).catch(() => undefined);
    return answer?.status === 200 ? (answer.body.access_token as string) : undefined;
  }, 30_000);
}

async function initiate(serve: CoregateProcess, token: string, correlationId: string): Promise<Omit<Outcome, 'correlationId'>> {
  try {
    const response = await fetch(`${serve.url}${initiatePath}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'x-correlation-id': correlationId },
      body: JSON.stringify(depositBody(1000, '1000000001')),
    });
    return { status: response.status, body: await response.text() };
  } catch {
    return { status: 'network-error', body: '' };
  }
}

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
  const serve = await spawnCoregate(['serve', '--data', dataFile, '--db', dbUrl.toString(), ...(workers > 1 ? ['--workers', String(workers)] : [])]);
  let notReadySeen = false;
  const cutOnce = async (): Promise<number> => {
    if (!proxy) return terminateSessions(databaseName);
    proxy.pause('refuse');
    const cut = proxy.cutAll('reset');
    // While nothing is reachable, the instance says it is not ready.
    notReadySeen ||= (await readyStatus(serve)) === 503;
    await sleep(500);
    proxy.resume();
    return cut;
  };
  try {
    const token = await tokenOf(serve);
    const outcomes: Outcome[] = [];
    let stopping = false;
    const client = async () => {
      while (!stopping) {
        const correlationId = randomUUID();
        const outcome = { correlationId, ...(await initiate(serve, token, correlationId)) };
        outcomes.push(outcome);
        if (outcome.status !== 200) await sleep(pauseAfterUnavailableMs);
      }
    };
    const clients = Array.from({ length: clientsCount }, client);
    let cut = 0;
    for (let round = 0; round < cutsCount; round += 1) {
      // Under load: some requests answered since the last cut.
      const before = outcomes.length;
      await waitFor('requests served between cuts', async () => (outcomes.length >= before + clientsCount * 2 ? true : undefined), 30_000);
      cut += await cutOnce();
    }
    await sleep(300);
    stopping = true;
    await Promise.all(clients);
    assert.ok(cut > 0, 'sessions were cut');
    if (proxy) assert.ok(notReadySeen, 'not ready while the database was unreachable');
    assert.equal(serve.child.exitCode, null, `the process lives: ${serve.output().stderr.slice(-3000)}`);
    assert.equal(serve.child.signalCode, null);
    assert.doesNotMatch(serve.output().stdout + serve.output().stderr, /a worker died|Unhandled 'error' event/, 'no worker died');

    // Ready again within seconds of the database answering.
    await waitFor('ready again', async () => ((await fetch(`${serve.url}/health/ready`)).status === 200 ? true : undefined), 15_000);

    const byStatus = new Map<string, number>();
    for (const outcome of outcomes) byStatus.set(String(outcome.status), (byStatus.get(String(outcome.status)) ?? 0) + 1);
    for (const outcome of outcomes) {
      assert.ok([200, 503].includes(outcome.status as number), `a cut request is answered 503, never ${outcome.status}: ${outcome.body.slice(0, 500)} (${JSON.stringify([...byStatus])})`);
      if (outcome.status === 503) {
        const record = JSON.parse(outcome.body) as { status: number; reason: string; message: string };
        assert.equal(record.status, 503);
        assert.equal(record.reason, 'SERVICE_UNAVAILABLE');
        assert.doesNotMatch(record.message, /terminat|pg_|ECONN|at \w+ \(/, 'the answer names no driver detail');
      }
    }
    assert.ok((byStatus.get('200') ?? 0) > clientsCount, `requests succeeded: ${JSON.stringify([...byStatus])}`);
    console.log(`# ${cutBy}, ${workers} worker(s), ${cut} sessions cut over ${cutsCount} cuts; answers by status: ${JSON.stringify(Object.fromEntries(byStatus))}`);

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

async function adminQuery(text: string): Promise<void> {
  const admin = new pg.Client({ connectionString: postgresAdminUrl });
  await admin.connect();
  try {
    await admin.query(text);
  } finally {
    await admin.end();
  }
}

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
