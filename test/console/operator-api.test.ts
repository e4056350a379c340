/**
 * The operator API (issue 11): who may call it (console session, coregate:operator bearer), the
 * one-time login, CSRF and JSON rules, and what the read routes answer, on SQLite and PostgreSQL.
 */
// @starts-early: among the slowest files of a quiet run
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { test } from 'node:test';
import { depositBody } from '../helpers/bodies.js';
import { runCli } from '../helpers/cli.js';
import { spawnCoregate } from '../helpers/processes.js';
import { waitFor } from '../helpers/wait.js';
import { demo, demoToken, startTestServer, type TestServer } from '../helpers/server.js';
import { startTestCoreServer } from '../helpers/core-server.js';
import { describeEachStore } from '../helpers/suite.js';
import { storeTargets, embedded } from '../helpers/stores.js';
import { consumeLoginToken, createLoginToken, loginTokenLifeMs, sessionLifeMs } from '../../src/store/operator-sessions.js';
import { FakeClock } from '../helpers/fake-clock.js';
import { dataFileSecrets, loginUrl, operatorClient, operatorDataFile, sessionCookie } from './helpers.js';
import { repoRoot } from '../helpers/repo-root.js';
import { join } from 'node:path';

const dataFile = operatorDataFile();

async function initiate(server: TestServer, body: Record<string, unknown>, correlationId: string) {
  const token = await demoToken(server);
  const response = await fetch(`${server.url}/v1/term-deposits/initiate`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'x-correlation-id': correlationId },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

describeEachStore(
  'operator API',
  ({ server }) => {
    const api = (path: string) => `${server().url}/operator/v1${path}`;
    const get = async (path: string, headers: Record<string, string>) => {
      const response = await fetch(api(path), { headers });
      return { status: response.status, headers: response.headers, body: (await response.json()) as any };
    };

    test('401 without credentials, with the operator API\'s error shape and a message that says what to do', async () => {
      const answer = await get('/accounts', {});
      assert.equal(answer.status, 401);
      assert.equal(answer.body.reason, 'UNAUTHORIZED');
      assert.equal(answer.body.status, 401);
      assert.match(answer.body.message, /coregate console/);
      assert.match(answer.headers.get('www-authenticate') ?? '', /^Bearer/);
    });

    test('the one-time login URL sets an HttpOnly, SameSite=Strict, Path=/ cookie of 8 hours (not Secure over http) and redirects 303 to /console', async () => {
      const { url } = await loginUrl(server());
      const response = await fetch(url, { redirect: 'manual' });
      assert.equal(response.status, 303);
      assert.equal(response.headers.get('location'), '/console');
      const cookie = response.headers.get('set-cookie') ?? '';
      assert.match(cookie, /^coregate_operator=[A-Za-z0-9_-]{43}; /);
      for (const flag of ['HttpOnly', 'SameSite=Strict', 'Path=/', 'Max-Age=28800']) assert.ok(cookie.split('; ').includes(flag), `${flag} in ${cookie}`);
      assert.ok(!cookie.includes('Secure'), 'no Secure flag over plain http');
      const session = await get('/session', { cookie: cookie.split(';')[0] ?? '' });
      assert.equal(session.status, 200);
      assert.equal(session.body.via, 'session');
      assert.equal(session.body.issuedBy, 'cli');
    });

    test('a login token works once: the second use is a 401 HTML page that says to run coregate console again', async () => {
      const { url } = await loginUrl(server());
      assert.equal((await fetch(url, { redirect: 'manual' })).status, 303);
      const again = await fetch(url, { redirect: 'manual' });
      assert.equal(again.status, 401);
      assert.equal(again.headers.get('set-cookie'), null);
      assert.match(again.headers.get('content-type') ?? '', /^text\/html/);
      assert.match(await again.text(), /Run <code>coregate console<\/code>/);
    });

    test('two requests racing with one login token open one session', async () => {
      const { token } = await createLoginToken(server().coregate.store.db, 'cli', Date.now());
      const sessions = await Promise.all([1, 2, 3, 4].map(() => consumeLoginToken(server().coregate.store, token, Date.now())));
      assert.equal(sessions.filter((session) => session !== undefined).length, 1);
    });

    test('an expired or unknown login token opens no session', async () => {
      const { token } = await createLoginToken(server().coregate.store.db, 'cli', Date.now() - 11 * 60_000);
      const expired = await fetch(`${server().url}/console/login?token=${token}`, { redirect: 'manual' });
      assert.equal(expired.status, 401);
      const unknown = await fetch(`${server().url}/console/login?token=not-a-token`, { redirect: 'manual' });
      assert.equal(unknown.status, 401);
      const missing = await fetch(`${server().url}/console/login`, { redirect: 'manual' });
      assert.equal(missing.status, 401);
    });

    test('a bearer token without the scope coregate:operator → 403; with it → 200, via bearer', async () => {
      const plain = await get('/accounts', { authorization: `Bearer ${await demoToken(server())}` });
      assert.equal(plain.status, 403);
      assert.equal(plain.body.reason, 'FORBIDDEN');
      assert.match(plain.headers.get('www-authenticate') ?? '', /insufficient_scope/);
      const operatorToken = await demoToken(server(), operatorClient);
      const session = await get('/session', { authorization: `Bearer ${operatorToken}` });
      assert.equal(session.status, 200);
      assert.deepEqual({ via: session.body.via, clientId: session.body.clientId }, { via: 'bearer', clientId: operatorClient.clientId });
      assert.equal((await get('/accounts', { authorization: `Bearer ${operatorToken}` })).status, 200);
      const forged = await get('/accounts', { authorization: 'Bearer not.a.token' });
      assert.equal(forged.status, 401);
    });

    test('CSRF: a POST with the session cookie from another origin → 403; without JSON → 415; a same-origin logout ends the session', async () => {
      const cookie = await sessionCookie(server());
      const post = (headers: Record<string, string>) => fetch(api('/session/logout'), { method: 'POST', headers: { cookie, ...headers }, body: '{}' });
      const crossOrigin = await post({ 'content-type': 'application/json', origin: 'https://evil.example' });
      assert.equal(crossOrigin.status, 403);
      assert.equal(((await crossOrigin.json()) as any).reason, 'FORBIDDEN');
      const crossSite = await post({ 'content-type': 'application/json', 'sec-fetch-site': 'cross-site' });
      assert.equal(crossSite.status, 403);
      const form = await post({ 'content-type': 'text/plain', origin: server().url });
      assert.equal(form.status, 415);
      assert.equal((await get('/session', { cookie })).status, 200, 'the refused requests did not end the session');
      const logout = await post({ 'content-type': 'application/json', origin: server().url });
      assert.equal(logout.status, 204);
      assert.match(logout.headers.get('set-cookie') ?? '', /Max-Age=0/);
      assert.equal((await get('/session', { cookie })).status, 401);
    });

    test('accounts with exact live balances; a deposit shows as a posting with the running balance, and as a term deposit with its expected interest', async () => {
      const cookie = await sessionCookie(server());
      const before = await get('/accounts?customerReference=C0001', { cookie });
      assert.equal(before.status, 200);
      const source = before.body.accounts.find((account: any) => account.accountNumber === '1000000001');
      assert.equal(source.balance.currency, 'USD');
      const startMinor = BigInt(source.balance.amount.replace('.', ''));
      const deposit = await initiate(server(), depositBody(12345.67), 'operator-api-deposit-1');
      assert.equal(deposit.status, 200, JSON.stringify(deposit.body));
      const account = await get('/accounts/1000000001', { cookie });
      assert.equal(BigInt(account.body.balance.amount.replace('.', '')), startMinor - 1234567n);
      const postings = await get('/accounts/1000000001/postings?limit=2', { cookie });
      assert.equal(postings.status, 200);
      const newest = postings.body.postings[0];
      assert.deepEqual(newest.amount, { amount: '-12345.67', currency: 'USD' });
      assert.equal(newest.reference, deposit.body.operationReference);
      assert.deepEqual(newest.balanceAfter, account.body.balance);
      const second = postings.body.postings[1];
      assert.equal(BigInt(second.balanceAfter.amount.replace('.', '')), startMinor, 'the posting before it left the balance it had');
      const history = await get('/accounts/1000000001/balance-history', { cookie });
      assert.deepEqual(history.body.points.at(-1).balance, account.body.balance);
      const deposits = await get('/term-deposits', { cookie });
      const contract = deposits.body.termDeposits.find((row: any) => row.termDepositAccount === deposit.body.termDepositAccount);
      assert.ok(contract, 'the new deposit is listed');
      // 90 days from 2026-03-02 is Sunday 2026-05-31, rolled to Monday 2026-06-01: 91 days.
      // 12,345.67 × 5.25 % × 91 / 360 = 163.8376... → 163.84 (ACT/360), as the retrieve computes it.
      assert.deepEqual(contract.expectedInterest, { amount: '163.84', currency: 'USD' });
      assert.equal(contract.interestPaid, null, 'an Active deposit has paid no interest yet');
      assert.equal(contract.numberOfDays, 91);
      assert.equal(contract.dayCount, 'ACT/360');
      const retrieve = await fetch(`${server().url}/v1/term-deposits/${contract.termDepositAccount}/retrieve`, { headers: { authorization: `Bearer ${await demoToken(server())}` } });
      const retrieved = (await retrieve.json()) as any;
      assert.equal(retrieved.expectedInterestAmount.amountValue, 163.84);
      assert.equal(contract.status, retrieved.termDepositStatus, 'the status the retrieve answers');
      assert.deepEqual([contract.valueDate, contract.maturityDate], ['2026-03-02', '2026-06-01']);
      assert.deepEqual(contract.principal, { amount: '12345.67', currency: 'USD' });
    });

    test('operations newest first with client, user, workstation and correlation id; a refused one carries its error record; one by reference; 404 for an unknown one', async () => {
      const cookie = await sessionCookie(server());
      const refused = await initiate(server(), depositBody(999999, '1000000002'), 'operator-api-refused-1');
      assert.equal(refused.status, 422);
      const rejected = await get('/operations?status=Rejected', { cookie });
      assert.equal(rejected.status, 200);
      const operation = rejected.body.operations.find((row: any) => row.correlationId === 'operator-api-refused-1');
      assert.ok(operation, 'the refused operation is listed');
      assert.equal(operation.status, 'Rejected');
      assert.deepEqual(operation.client, { realm: demo.realm, clientId: demo.treasury.clientId, issuer: `${server().url}/realms/${demo.realm}` });
      assert.equal(operation.user, 'svc-treasury');
      assert.equal(operation.workstation, 'WS-TREASURY-01');
      assert.equal(operation.error.errordetail[0].code, 'TD-422-002');
      const one = await get(`/operations/${operation.reference}`, { cookie });
      assert.deepEqual(one.body, operation);
      const unknown = await get('/operations/00000000-0000-0000-0000-000000000000', { cookie });
      assert.equal(unknown.status, 404);
      assert.equal(unknown.body.reason, 'NOT_FOUND');
      const all = await get('/operations?limit=50', { cookie });
      const created = all.body.operations.map((row: any) => row.createdAt);
      assert.deepEqual(created, [...created].sort().reverse(), 'newest first');
    });

    test('installments carry the documented statuses (Paid, Due, Overdue), never the core table\'s Pending: an unpaid one not yet overdue is Due', async () => {
      const cookie = await sessionCookie(server());
      const facilities = await get('/loan-facilities', { cookie });
      assert.equal(facilities.status, 200);
      const installments = facilities.body.loanFacilities.flatMap((facility: any) => facility.installments);
      assert.equal(installments.length, 3);
      for (const installment of installments) assert.ok(['Paid', 'Due', 'Overdue'].includes(installment.status), `installment ${installment.sequence}: ${installment.status}`);
      // The demo facility's installments are unpaid and the business date (2026-03-02) is before each due date.
      assert.deepEqual(installments.map((installment: any) => [installment.sequence, installment.status]), [[1, 'Due'], [2, 'Due'], [3, 'Due']]);
    });

    test('every list takes limit (1–500) and offset as docs/console.md says, answers more, and a bad value is a 400 that names the parameter and its bounds', async () => {
      const cookie = await sessionCookie(server());
      await initiate(server(), depositBody(1002), 'operator-api-paging-1');
      const lists: Array<[string, string]> = [
        ['/customers', 'customers'],
        ['/accounts', 'accounts'],
        ['/accounts/1000000001/postings', 'postings'],
        ['/term-deposits', 'termDeposits'],
        ['/loan-facilities', 'loanFacilities'],
        ['/operations', 'operations'],
        ['/audit', 'records'],
        ['/clients', 'clients'],
        ['/webhooks/endpoints', 'endpoints'],
        ['/webhooks/deliveries', 'deliveries'],
      ];
      for (const [path, field] of lists) {
        const one = await get(`${path}?limit=1`, { cookie });
        assert.equal(one.status, 200, `${path}?limit=1: ${JSON.stringify(one.body)}`);
        assert.ok(Array.isArray(one.body[field]) && one.body[field].length <= 1, `${path}?limit=1 answers at most one row`);
        assert.equal(typeof one.body.more, 'boolean', `${path} answers more`);
        for (const bad of ['0', '501', 'ten', '-1', '2.5']) {
          const refused = await get(`${path}?limit=${bad}`, { cookie });
          assert.equal(refused.status, 400, `${path}?limit=${bad}`);
          assert.equal(refused.body.reason, 'VALIDATION_ERROR');
          assert.match(refused.body.message, /^limit must be a whole number from 1 to 500, got "/, `${path}?limit=${bad}`);
        }
        // Deliveries are read from the newest only: no offset there, and saying one is refused.
        const badOffset = await get(`${path}?offset=-1`, { cookie });
        assert.equal(badOffset.status, 400, `${path}?offset=-1`);
        if (path !== '/webhooks/deliveries') assert.match(badOffset.body.message, /^offset must be a whole number from 0 to /, path);
      }
      // The newcomer's call: two accounts, then the next two, with more left after the first page.
      const first = await get('/accounts?limit=2', { cookie });
      assert.equal(first.status, 200);
      assert.equal(first.body.accounts.length, 2);
      assert.equal(first.body.more, true);
      const next = await get('/accounts?limit=2&offset=2', { cookie });
      assert.equal(next.status, 200);
      const numbers = [...first.body.accounts, ...next.body.accounts].map((account: any) => account.accountNumber);
      assert.equal(new Set(numbers).size, numbers.length, 'the second page starts after the first');
      const all = await get('/accounts', { cookie });
      assert.deepEqual(numbers, all.body.accounts.slice(0, numbers.length).map((account: any) => account.accountNumber));
      const operations = await get('/operations?limit=1&offset=0', { cookie });
      assert.equal(operations.body.operations.length, 1);
      assert.equal(operations.body.more, true, 'this suite made more than one operation');
      const clients = await get('/clients?limit=2&offset=1', { cookie });
      const everyClient = await get('/clients', { cookie });
      assert.deepEqual(clients.body.clients, everyClient.body.clients.slice(1, 3));
      assert.equal(everyClient.body.more, false);
    });

    test('400 with a message for a bad filter or page; 404 for an unknown account', async () => {
      const cookie = await sessionCookie(server());
      const status = await get('/operations?status=Lost', { cookie });
      assert.equal(status.status, 400);
      assert.equal(status.body.reason, 'VALIDATION_ERROR');
      const limit = await get('/operations?limit=100000', { cookie });
      assert.equal(limit.status, 400);
      assert.match(limit.body.message, /limit must be a whole number from 1 to 500/);
      const account = await get('/accounts/9999999999', { cookie });
      assert.equal(account.status, 404);
      assert.match(account.body.message, /No account 9999999999/);
    });

    test('audit trail newest first, the chain verified; clients with scopes and never a secret or its hash; operations per minute by outcome', async () => {
      const cookie = await sessionCookie(server());
      await initiate(server(), depositBody(1001), 'operator-api-audit-1');
      await server().coregate.chainer.idle();
      const audit = await get('/audit?limit=5', { cookie });
      assert.equal(audit.status, 200);
      assert.ok(audit.body.records.length > 0);
      const verification = await get('/audit/verification', { cookie });
      assert.equal(verification.body.ok, true);
      const clients = await get('/clients', { cookie });
      const treasury = clients.body.clients.find((client: any) => client.clientId === demo.treasury.clientId);
      assert.deepEqual(treasury.scopes, ['termDeposit:initiate', 'termDeposit:retrieve', 'merchandisingLoan:execute']);
      assert.equal(treasury.technicalUser, 'svc-treasury');
      assert.equal(treasury.defaultWorkstation, 'WS-TREASURY-01');
      const text = JSON.stringify(clients.body);
      assert.ok(!/secret/i.test(text), 'no secret field, no secret hash');
      for (const secret of dataFileSecrets()) assert.ok(!text.includes(secret));
      const perMinute = await get('/metrics/operations-per-minute', { cookie });
      assert.equal(perMinute.body.minutes.length, 60);
      const executed = perMinute.body.series.Executed.reduce((sum: number, count: number) => sum + count, 0);
      assert.ok(executed >= 1, 'the executed deposits of this suite are counted');
    });

    test('the console serves exactly its own files and the named library files, each with the CSP; nothing else under /console', async () => {
      const own = readdirSync(join(repoRoot, 'src/console/static')).filter((name) => name !== 'index.html');
      const paths = ['/console', ...own.map((name) => `/console/${name}`), ...['preact.js', 'hooks.js', 'htm.js', 'uplot.js', 'uplot.css'].map((name) => `/console/vendor/${name}`)];
      for (const path of paths) {
        const response = await fetch(`${server().url}${path}`);
        assert.equal(response.status, 200, path);
        assert.match(response.headers.get('content-security-policy') ?? '', /default-src 'self'; script-src 'self'; style-src 'self'/, path);
        assert.equal(response.headers.get('x-content-type-options'), 'nosniff', path);
        const text = await response.text();
        if (path.endsWith('.js')) assert.doesNotMatch(text, /from\s*["']preact["']/, `${path} imports only paths a browser resolves`);
      }
      for (const path of ['/console/vendor/', '/console/vendor/react.js', '/console/static/app.js', '/console/..%2Fpackage.json', '/console/routes.ts']) {
        assert.equal((await fetch(`${server().url}${path}`)).status, 404, path);
      }
    });

    test('the login token and the session value never appear in a log line', async () => {
      const { url, token } = await loginUrl(server());
      const response = await fetch(url, { redirect: 'manual' });
      const session = (response.headers.get('set-cookie') ?? '').split(';')[0]?.split('=')[1] ?? '';
      await fetch(api('/session'), { headers: { cookie: `coregate_operator=${session}` } });
      const logs = server().logLines.join('\n');
      assert.ok(!logs.includes(token), 'login token logged');
      assert.ok(!logs.includes(session), 'session value logged');
    });
  },
  { data: dataFile, flags: { sandbox: true } },
);

describeEachStore(
  'operator API off',
  ({ server }) => {
    test('without --operator-api (and outside sandbox mode) neither /operator/v1 nor /console is served', async () => {
      assert.equal((await fetch(`${server().url}/operator/v1/session`)).status, 404);
      assert.equal((await fetch(`${server().url}/console`)).status, 404);
    });
  },
  { data: dataFile },
);

/** Console sessions expire on the instance's clock: the test moves it across their ends. */
const sessionClock = new FakeClock(Date.now());

describeEachStore(
  'console sessions on the instance\'s clock',
  ({ server }) => {
    test('issue 25: a login token expires 10 minutes and a session 8 hours after they began, on the instance\'s clock', async () => {
      const { url: lateUrl } = await loginUrl(server(), sessionClock.now());
      const { url } = await loginUrl(server(), sessionClock.now());
      const login = await fetch(url, { redirect: 'manual' });
      assert.equal(login.status, 303);
      const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
      const session = async () => (await fetch(`${server().url}/operator/v1/session`, { headers: { cookie } })).status;
      assert.equal(await session(), 200);
      sessionClock.advance(loginTokenLifeMs + 1);
      assert.equal((await fetch(lateUrl, { redirect: 'manual' })).status, 401, 'the unused login token has expired');
      sessionClock.advance(sessionLifeMs - loginTokenLifeMs - 2);
      assert.equal(await session(), 200, 'a millisecond before its end the session holds');
      sessionClock.advance(1);
      assert.equal(await session(), 401, 'at its end the session is over');
    });
  },
  { data: dataFile, flags: { sandbox: true }, clock: sessionClock },
);

test('with a remote core (--core-url) every bank view answers 200 from the core, with the core\'s real balances after an operation; the API\'s database holds no copy', { skip: storeTargets[0]?.skip }, async () => {
  const target = storeTargets[0];
  assert.ok(target);
  const created = await target.create();
  // The core has a database of its own, as a bank's core does: the API never reads it.
  const coreDb = await target.create();
  const core = await startTestCoreServer({ db: coreDb.url, data: dataFile });
  const server = await startTestServer({ db: created.url, data: dataFile, flags: { sandbox: true, coreUrl: core.url }, deployment: 'remote-core' });
  try {
    const cookie = await sessionCookie(server);
    const get = async (path: string) => {
      const response = await fetch(`${server.url}/operator/v1${path}`, { headers: { cookie } });
      return { status: response.status, body: (await response.json()) as any };
    };
    const before = await get('/accounts/1000000001');
    assert.equal(before.status, 200, JSON.stringify(before.body));
    const deposit = await initiate(server, depositBody(2500.5), 'operator-api-remote-1');
    assert.equal(deposit.status, 200, JSON.stringify(deposit.body));

    const customers = await get('/customers');
    assert.equal(customers.status, 200);
    assert.deepEqual(customers.body.customers.map((customer: any) => customer.customerReference), ['C0001', 'C0002']);
    const accounts = await get('/accounts?customerReference=C0001');
    assert.equal(accounts.status, 200);
    const source = accounts.body.accounts.find((account: any) => account.accountNumber === '1000000001');
    assert.equal(BigInt(source.balance.amount.replace('.', '')), BigInt(before.body.balance.amount.replace('.', '')) - 250_050n, 'the core\'s live balance, after the deposit');
    const postings = await get('/accounts/1000000001/postings?limit=1');
    assert.equal(postings.status, 200);
    assert.equal(postings.body.postings[0].reference, deposit.body.operationReference);
    assert.deepEqual(postings.body.postings[0].balanceAfter, source.balance);
    const history = await get('/accounts/1000000001/balance-history');
    assert.deepEqual(history.body.points.at(-1).balance, source.balance);
    const deposits = await get('/term-deposits');
    assert.equal(deposits.status, 200);
    assert.ok(deposits.body.termDeposits.some((row: any) => row.termDepositAccount === deposit.body.termDepositAccount));
    const facilities = await get('/loan-facilities');
    assert.equal(facilities.status, 200);
    assert.deepEqual(facilities.body.loanFacilities.map((facility: any) => facility.merchandisingLoanId), ['7000000001']);
    assert.deepEqual(facilities.body.loanFacilities[0].installments.map((installment: any) => installment.status), ['Due', 'Due', 'Due'], 'the core\'s read side names them as the port does, never Pending');
    assert.equal((await get('/accounts/9999999999')).status, 404);
    assert.equal((await get('/operations')).status, 200);
    assert.equal((await get('/clients')).status, 200);
    // With a remote core the API's database has no core tables at all (since the split); were one there, it would be empty.
    const apiTables = (await server.coregate.store.db.introspection.getTables()).map((table) => table.name);
    const copies = apiTables.includes('accounts') ? await embedded(server.coregate.store.db).selectFrom('accounts').select('account_number').execute() : [];
    assert.deepEqual(copies, [], 'the data file\'s core part went to the core, not into the API\'s database');
    assert.equal(await core.balanceOf('1000000001'), BigInt(source.balance.amount.replace('.', '')), 'the balance shown is the core\'s own');
  } finally {
    await server.close();
    await core.close();
    await created.drop();
    await coreDb.drop();
  }
});

test('coregate console prints a one-time login URL that opens a session', async () => {
  const target = storeTargets[0];
  assert.ok(target);
  const created = await target.create();
  const server = await startTestServer({ db: created.url, data: dataFile, flags: { operatorApi: true }, deployment: 'embedded' });
  try {
    const result = await runCli(['console', '--db', created.url, '--url', server.url]);
    assert.equal(result.code, 0, result.stderr);
    const url = /(http:\/\/\S+\/console\/login\?token=\S+)/.exec(result.stdout)?.[1];
    assert.ok(url, result.stdout);
    const login = await fetch(url, { redirect: 'manual' });
    assert.equal(login.status, 303);
    const bad = await runCli(['console', '--db', created.url, '--url', 'ftp://nowhere']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--url must be/);
  } finally {
    await server.close();
    await created.drop();
  }
});

test('sandbox mode: the start banner prints a one-time console login URL on standard output, and the log line says so without the token', async () => {
  const target = storeTargets[0];
  assert.ok(target);
  const created = await target.create();
  const serving = await spawnCoregate(['serve', '--sandbox', '--data', dataFile, '--db', created.url]);
  try {
    // The one wait that stays: the banner is a spawned process's output, which reaches this test's
    // pipe when that process writes and the pipe delivers it (after /health/ready may already
    // answer), and no loop of this test can drive it; the poll ends as soon as the line is there.
    const url = await waitFor('the banner\'s login URL', async () => /(http:\/\/\S+\/console\/login\?token=(\S+))/.exec(serving.output().stdout) ?? undefined, 20_000);
    const [, loginUrl, token] = url;
    assert.ok(loginUrl && token);
    const lines = serving.output().stdout.split('\n');
    assert.equal(lines.filter((line) => line.includes(token)).length, 1, 'the token is printed once');
    assert.ok(!lines.some((line) => line.startsWith('{') && line.includes(token)), 'no log line carries the token');
    assert.ok(lines.some((line) => line.startsWith('{') && line.includes('one-time console login URL printed on standard output')));
    assert.equal((await fetch(loginUrl, { redirect: 'manual' })).status, 303);
  } finally {
    await serving.stop();
    await created.drop();
  }
});

test('behind an https public URL the cookie is Secure, and the public URL\'s origin is accepted for a POST with the cookie', async () => {
  const target = storeTargets[0];
  assert.ok(target);
  const created = await target.create();
  const server = await startTestServer({ db: created.url, data: dataFile, flags: { operatorApi: true }, publicUrl: 'https://console.bank.example', deployment: 'embedded' });
  try {
    const { url } = await loginUrl(server);
    const login = await fetch(url, { redirect: 'manual' });
    const cookie = login.headers.get('set-cookie') ?? '';
    assert.ok(cookie.split('; ').includes('Secure'), cookie);
    const logout = await fetch(`${server.url}/operator/v1/session/logout`, {
      method: 'POST',
      headers: { cookie: cookie.split(';')[0] ?? '', 'content-type': 'application/json', origin: 'https://console.bank.example' },
      body: '{}',
    });
    assert.equal(logout.status, 204);
  } finally {
    await server.close();
    await created.drop();
  }
});
