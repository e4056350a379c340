/**
 * The sandbox's request log (docs/sandbox.md, "The request log"): what a client sent and was
 * answered, its own only, never a credential, kept 7 days and at most 10,000 per client.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { sql } from 'kysely';
import { depositBody } from '../helpers/bodies.js';
import { initiatePath, send, type HttpResult } from '../helpers/http.js';
import { demo, demoToken, startTestServer, type TestServer } from '../helpers/server.js';
import { describeEachStore, describeEachStoreUrl } from '../helpers/suite.js';
import { storeTargets, withCreatedStore, withStore } from '../helpers/stores.js';
import { FakeClock } from '../helpers/fake-clock.js';
import { RequestLog, requestLogPerClientMax, requestLogRetentionMs } from '../../src/sandbox/request-log.js';
import { createLogger } from '../../src/log.js';
import { sessionCookie } from '../console/helpers.js';

function initiate(server: TestServer, token: string, body: unknown, headers: Record<string, string> = {}): Promise<HttpResult> {
  return send(`${server.url}${initiatePath}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'x-correlation-id': randomUUID(), ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

function requests(server: TestServer, token: string, query = ''): Promise<HttpResult> {
  return send(`${server.url}/v1/sandbox/requests${query}`, { headers: { authorization: `Bearer ${token}` } });
}

describeEachStore(
  'the sandbox request log',
  ({ server }) => {
    test('a client reads its own requests at GET /v1/sandbox/requests, newest first, with statuses, bodies, headers and the operation each names; never another client\'s', async () => {
      const token = await demoToken(server());
      const branch = await demoToken(server(), demo.branch);
      const ok = await initiate(server(), token, depositBody(2101), { 'x-correlation-id': 'log-ok-1' });
      assert.equal(ok.status, 200);
      const bad = await initiate(server(), token, { customerReference: 'C0001' }, { 'x-correlation-id': 'log-bad-1' });
      assert.equal(bad.status, 400);
      const forced = await initiate(server(), token, depositBody(2102), { 'x-correlation-id': 'log-502-1', 'coregate-scenario': 'core-unavailable' });
      assert.equal(forced.status, 502);
      await send(`${server().url}/v1/term-deposits/TD-NOPE/retrieve`, { headers: { authorization: `Bearer ${branch}`, 'x-correlation-id': 'branch-1' } });

      const listed = await requests(server(), token, '?limit=100');
      assert.equal(listed.status, 200, JSON.stringify(listed.body));
      const mine = listed.body.requests as Array<Record<string, any>>;
      assert.ok(mine.every((entry) => entry.correlationId !== 'branch-1'), 'another client\'s request is never shown');
      const ids = mine.map((entry) => entry.correlationId);
      assert.ok(ids.indexOf('log-502-1') < ids.indexOf('log-bad-1') && ids.indexOf('log-bad-1') < ids.indexOf('log-ok-1'), `newest first: ${ids.join(',')}`);

      const okEntry = mine.find((entry) => entry.correlationId === 'log-ok-1')!;
      assert.equal(okEntry.method, 'POST');
      assert.equal(okEntry.path, initiatePath);
      assert.equal(okEntry.status, 200);
      assert.equal(okEntry.operationReference, ok.body.operationReference);
      assert.deepEqual(okEntry.request.body, depositBody(2101));
      assert.equal(okEntry.response.body.termDepositAccount, ok.body.termDepositAccount);
      assert.equal(okEntry.request.headers['x-correlation-id'], 'log-ok-1');
      assert.equal(okEntry.request.headers.authorization, undefined);
      assert.equal(typeof okEntry.durationMs, 'number');

      const badEntry = mine.find((entry) => entry.correlationId === 'log-bad-1')!;
      assert.equal(badEntry.status, 400);
      assert.equal(badEntry.response.body.errordetail[0].reason, bad.body.errordetail[0].reason);

      const forcedEntry = mine.find((entry) => entry.correlationId === 'log-502-1')!;
      assert.equal(forcedEntry.scenario, 'core-unavailable');
      assert.equal(forcedEntry.operationReference, forced.headers.get('location')?.replace('/v1/operations/', ''));

      const branchView = await requests(server(), branch);
      assert.deepEqual(
        (branchView.body.requests as Array<Record<string, any>>).map((entry) => entry.correlationId),
        ['branch-1'],
      );
    });

    test('the filters: correlation id, status (exact or class), path prefix, since; paged with limit and offset', async () => {
      const token = await demoToken(server(), demo.reporting);
      const before = new Date().toISOString();
      for (const amount of [2201, 2202, 2203]) await send(`${server().url}/v1/term-deposits/TD-${amount}/retrieve`, { headers: { authorization: `Bearer ${token}`, 'x-correlation-id': `filter-${amount}` } });
      const byId = await requests(server(), token, '?correlationId=filter-2202');
      assert.deepEqual(byId.body.requests.map((entry: any) => entry.correlationId), ['filter-2202']);
      const byClass = await requests(server(), token, '?status=4xx&limit=100');
      assert.ok(byClass.body.requests.length >= 3 && byClass.body.requests.every((entry: any) => entry.status >= 400 && entry.status < 500));
      const byStatus = await requests(server(), token, '?status=200');
      assert.deepEqual(byStatus.body.requests, []);
      const byPath = await requests(server(), token, '?path=/v1/term-deposits/TD-2203');
      assert.deepEqual(byPath.body.requests.map((entry: any) => entry.correlationId), ['filter-2203']);
      const wildcard = await requests(server(), token, '?path=/v1/term%25');
      assert.deepEqual(wildcard.body.requests, [], 'a % in the path filter is a character, not a pattern');
      const since = await requests(server(), token, `?since=${encodeURIComponent(before)}&limit=100`);
      assert.ok(since.body.requests.length >= 3);
      const future = await requests(server(), token, '?since=2999-01-01');
      assert.deepEqual(future.body.requests, []);
      const first = await requests(server(), token, '?path=/v1/term-deposits/TD-22&limit=1');
      const second = await requests(server(), token, '?path=/v1/term-deposits/TD-22&limit=1&offset=1');
      assert.equal(first.body.more, true);
      assert.deepEqual([first.body.requests[0].correlationId, second.body.requests[0].correlationId], ['filter-2203', 'filter-2202']);
      for (const query of ['?status=600', '?limit=0', '?limit=101', '?since=yesterday', '?offset=10000', '?correlationId=has%20space', '?path=%2Fv1%00']) {
        const refused = await requests(server(), token, query);
        assert.equal(refused.status, 400, query);
        assert.match(refused.body.message, /must be/, JSON.stringify(refused.body));
      }
    });

    test('the operator reads every client\'s requests at GET /operator/v1/requests, filtered by client (realm/clientId) and by operation reference; a bad client is 400', async () => {
      const cookie = await sessionCookie(server());
      const token = await demoToken(server());
      const branch = await demoToken(server(), demo.branch);
      const mine = await initiate(server(), token, depositBody(2501), { 'x-correlation-id': 'operator-1' });
      await send(`${server().url}/v1/term-deposits/TD-OPERATOR/retrieve`, { headers: { authorization: `Bearer ${branch}`, 'x-correlation-id': 'operator-2' } });
      const read = (query: string) => send(`${server().url}/operator/v1/requests${query}`, { headers: { cookie } });
      const every = await read('?limit=100');
      assert.equal(every.status, 200, JSON.stringify(every.body));
      const ids = every.body.requests.map((entry: any) => entry.correlationId);
      assert.ok(ids.includes('operator-1') && ids.includes('operator-2'), ids.join(','));
      const branchOnly = await read('?client=sandbox/branch-portal&limit=100');
      assert.ok(branchOnly.body.requests.length >= 1);
      assert.ok(branchOnly.body.requests.every((entry: any) => entry.client.clientId === 'branch-portal' && entry.client.realm === 'sandbox'));
      const byOperation = await read(`?reference=${mine.body.operationReference}`);
      assert.deepEqual(byOperation.body.requests.map((entry: any) => entry.correlationId), ['operator-1']);
      for (const query of ['?client=branch-portal', '?reference=not%20a%20reference', '?status=9xx']) {
        const refused = await read(query);
        assert.equal(refused.status, 400, query);
        assert.match(refused.body.message, /must be/);
      }
    });

    test('a body with a NUL character (malformed JSON, 400) is kept with the character replaced: PostgreSQL\'s text refuses NUL, and one entry must not lose its batch', async () => {
      const token = await demoToken(server());
      const refused = await initiate(server(), token, '{"customerReference":"C\u0000"}', { 'x-correlation-id': 'nul-body-1' });
      assert.equal(refused.status, 400);
      const listed = await requests(server(), token, '?correlationId=nul-body-1');
      assert.equal(listed.body.requests.length, 1, JSON.stringify(listed.body));
      assert.deepEqual(listed.body.requests[0].request.body, { customerReference: 'C\uFFFD' });
    });

    test('never a token, proof, secret or cookie stored: the whole log table holds none of them; unauthenticated requests and the log\'s own reads are not kept', async () => {
      const token = await demoToken(server());
      const cookie = `session=${randomUUID()}`;
      const secret = `s3cret-${randomUUID()}`;
      const proof = `eyJ.proof-${randomUUID()}`;
      await initiate(server(), token, depositBody(2301), { cookie, 'x-client-secret': secret, dpop: proof, 'x-correlation-id': 'secrets-1' });
      await send(`${server().url}${initiatePath}`, { method: 'POST', headers: { authorization: `Bearer not.a.token`, 'content-type': 'application/json', 'x-correlation-id': 'unauthenticated-1' }, body: '{}' });
      await requests(server(), token, '?correlationId=secrets-1');
      const listed = await requests(server(), token, '?correlationId=secrets-1');
      assert.equal(listed.body.requests.length, 1);
      const rows = await server().coregate.store.db.selectFrom('request_log').selectAll().execute();
      const everything = JSON.stringify(rows);
      for (const [name, value] of Object.entries({ token, cookie, secret, proof, client_secret: demo.treasury.secret })) assert.ok(!everything.includes(value), `${name} is not in the log`);
      assert.ok(!/"authorization"|"cookie"|"dpop"/i.test(everything), 'no credential header name');
      assert.ok(!everything.includes('unauthenticated-1'), 'an unauthenticated request is not kept');
      assert.ok(!rows.some((row) => row.path === '/v1/sandbox/requests'), 'reading the log is not logged');
    });
  },
  { flags: { sandbox: true } },
);

test('outside sandbox mode there is no request log: GET /v1/sandbox/requests is 404 and nothing is kept', async () => {
  await withCreatedStore(storeTargets[0]!, async (url) => {
    const server = await startTestServer({ db: url, deployment: 'embedded' });
    try {
      const token = await demoToken(server);
      assert.equal((await initiate(server, token, depositBody(2401))).status, 200);
      assert.equal((await requests(server, token)).status, 404);
      const count = await sql<{ count: number }>`select count(*) as count from request_log`.execute(server.coregate.store.db);
      assert.equal(Number(count.rows[0]?.count), 0);
    } finally {
      await server.close();
    }
  });
});

describeEachStoreUrl('the request log\'s bounds: 7 days, at most 10,000 per client (fake clock)', ({ dbUrl }) => {
  test('a client\'s entries beyond its newest 10,000 are never shown and are pruned; entries older than 7 days are neither shown nor kept', async () => {
    await withStore(dbUrl(), async (store) => {
      const clock = new FakeClock();
      const log = new RequestLog({ store, clock, logger: createLogger({ level: 'silent' }) });
      const exchange = (clientKey: string, index: number) => ({
        clientKey,
        method: 'POST',
        path: initiatePath,
        status: 200,
        correlationId: `${clientKey}-${index}`,
        startedAtMs: clock.now(),
        operationReference: undefined,
        scenario: undefined,
        requestHeaders: { 'content-type': 'application/json' },
        responseHeaders: {},
        requestBody: '{}',
        responseBody: '{}',
      });
      const total = requestLogPerClientMax + 5;
      for (let index = 0; index < total; index += 1) {
        clock.advance(1);
        log.record(exchange('busy', index));
        if (index % 2_000 === 0) await log.flush();
      }
      log.record(exchange('quiet', 0));
      await log.flush();

      const last = await log.list({ clientKey: 'busy', limit: 100, offset: requestLogPerClientMax - 1 });
      assert.deepEqual(last.items.map((entry) => entry.correlationId), ['busy-5'], 'the 10,000th newest is the last shown');
      assert.equal(last.more, false);
      assert.deepEqual((await log.list({ clientKey: 'busy', limit: 1, offset: 0 })).items.map((entry) => entry.correlationId), [`busy-${total - 1}`]);

      const pruned = await log.prune();
      assert.equal(pruned, 5);
      const counts = await store.db.selectFrom('request_log').select('client_key').select((eb) => eb.fn.countAll<number>().as('count')).groupBy('client_key').orderBy('client_key').execute();
      assert.deepEqual(counts.map((row) => [row.client_key, Number(row.count)]), [['busy', requestLogPerClientMax], ['quiet', 1]]);

      // Seven days after the quiet client's entry it is no longer shown, and the prune deletes it.
      clock.advance(requestLogRetentionMs + 1);
      assert.deepEqual((await log.list({ clientKey: 'quiet', limit: 10, offset: 0 })).items, []);
      await log.prune();
      assert.equal((await store.db.selectFrom('request_log').select('id').where('client_key', '=', 'quiet').execute()).length, 0);
      await log.stop();
    });
  });
});
