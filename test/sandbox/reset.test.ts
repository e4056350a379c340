/**
 * Sandbox reset (docs/sandbox.md): the store emptied and the data file loaded again, through the
 * CLI (a separate process, as an operator runs it) and through the operator route module, beside
 * a running server, on SQLite and PostgreSQL.
 */
// @lane process: starts coregate processes (docs/testing.md, "Lanes")
// @starts-early: among the slowest files of a quiet run
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { after, before, test } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { Vault } from '../../src/auth/vault.js';
import { sandboxRoutes } from '../../src/operator/routes/sandbox.js';
import { sql } from 'kysely';
import { secretHashKeySetting } from '../../src/auth/secret-hash-key.js';
import { findAccount } from '../../src/reference-core/storage/banking.js';
import { getSetting } from '../../src/store/settings.js';
import { openStore, type Store } from '../../src/store/connect.js';
import { depositBody } from '../helpers/bodies.js';
import { runCli } from '../helpers/cli.js';
import { initiatePath, send } from '../helpers/http.js';
import { cliPath, demo, demoDataFile, demoToken, type TestServer } from '../helpers/server.js';
import { readDemoData, writeTempDataFile } from '../helpers/data-files.js';
import { withDb, withStore } from '../helpers/stores.js';
import { describeEachStore } from '../helpers/suite.js';
import { coreTablesOf } from '../../src/reference-core/storage/core-db.js';

const scriptMissing = spawnSync('script', ['--version']).status === 0 ? false : 'util-linux `script` is not installed (it gives the CLI a terminal)';

function shellQuoted(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

function runProgram(program: string, args: string[], input: string): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve) => {
    const child = execFile(program, args, { timeout: 30_000 }, (error, stdout) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout: String(stdout) });
    });
    child.stdin?.end(input);
  });
}

/** Account 1000000001's balance in the demo data file: 250,000.00 USD. */
const demoBalanceMinor = 25_000_000n;
const sourceAccount = '1000000001';

async function initiate(server: TestServer, amountValue: number): Promise<{ status: number; contract: string }> {
  const token = await demoToken(server, demo.treasury);
  const response = await send(`${server.url}${initiatePath}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(depositBody(amountValue, sourceAccount)),
  });
  return { status: response.status, contract: String((response.body as { termDepositAccount?: string }).termDepositAccount) };
}

async function retrieveStatus(server: TestServer, contract: string): Promise<number> {
  const token = await demoToken(server, demo.treasury);
  const response = await send(`${server.url}/v1/term-deposits/${contract}/retrieve`, { headers: { authorization: `Bearer ${token}` } });
  return response.status;
}

async function publishedKids(server: TestServer): Promise<string[]> {
  const response = await fetch(`${server.realmUrl()}/protocol/openid-connect/certs`);
  const { keys } = (await response.json()) as { keys: Array<{ kid: string }> };
  return keys.map((key) => key.kid).sort();
}

async function balanceOf(dbUrl: string, accountNumber: string): Promise<bigint> {
  return withStore(dbUrl, async (store) => {
    const account = await findAccount(coreTablesOf(store.db), accountNumber);
    if (!account) throw new Error(`no account ${accountNumber}`);
    return account.balanceMinor;
  });
}

async function rowCount(dbUrl: string, table: 'operations' | 'term_deposits' | 'audit_records' | 'movements'): Promise<number> {
  return withDb(dbUrl, async (db) => {
    const row = await db.selectFrom(table).select((eb) => eb.fn.countAll().as('count')).executeTakeFirstOrThrow();
    return Number(row.count);
  });
}

describeEachStore('sandbox reset through the CLI (coregate sandbox reset)', ({ server, dbUrl }) => {
  test('without --yes and without a terminal it refuses and changes nothing', async () => {
    const made = await initiate(server(), 5000);
    assert.equal(made.status, 200);
    const result = await runCli(['sandbox', 'reset', '--db', dbUrl(), '--data', demoDataFile]);
    assert.equal(result.code, 2, result.stderr);
    assert.match(result.stderr, /add --yes to confirm/);
    assert.equal(await retrieveStatus(server(), made.contract), 200);
    assert.equal(await balanceOf(dbUrl(), sourceAccount), demoBalanceMinor - 500_000n);
  });

  test('on a terminal it asks: an answer other than "reset" cancels, "reset" resets', { skip: scriptMissing }, async () => {
    const command = ['node', cliPath, 'sandbox', 'reset', '--db', dbUrl(), '--data', demoDataFile].map(shellQuoted).join(' ');
    // util-linux `script` runs the command on a pseudo-terminal fed from our standard input.
    const onTerminal = (answer: string) => runProgram('script', ['-qec', command, '/dev/null'], `${answer}\n`);
    const declined = await onTerminal('no');
    assert.equal(declined.code, 2, declined.stdout);
    assert.match(declined.stdout, /Type "reset" to confirm/);
    assert.match(declined.stdout, /cancelled, nothing changed/);
    assert.ok((await rowCount(dbUrl(), 'term_deposits')) > 0);
    const accepted = await onTerminal('reset');
    assert.equal(accepted.code, 0, accepted.stdout);
    assert.match(accepted.stdout, /Sandbox reset: \d+ tables emptied/);
    assert.equal(await rowCount(dbUrl(), 'term_deposits'), 0);
    assert.equal(await balanceOf(dbUrl(), sourceAccount), demoBalanceMinor);
    // The next tests start from the first test's deposit again.
    assert.equal((await initiate(server(), 5000)).status, 200);
  });

  test('a missing data file is refused before anything is deleted', async () => {
    const result = await runCli(['sandbox', 'reset', '--db', dbUrl(), '--data', 'demo/no-such-file.json', '--yes']);
    assert.equal(result.code, 2, result.stderr);
    assert.match(result.stderr, /data file demo\/no-such-file\.json: does not exist/);
    assert.ok((await rowCount(dbUrl(), 'term_deposits')) > 0);
  });

  test('--yes: balances back to the data file, deposits, operations and audit gone, the running server keeps answering', async () => {
    const second = await initiate(server(), 7000);
    assert.equal(second.status, 200);
    assert.equal(await balanceOf(dbUrl(), sourceAccount), demoBalanceMinor - 1_200_000n);

    const result = await runCli(['sandbox', 'reset', '--db', dbUrl(), '--data', demoDataFile, '--yes', '--json']);
    assert.equal(result.code, 0, result.stderr);
    const summary = JSON.parse(result.stdout) as { tablesEmptied: string[]; rowsDeleted: number; realmsKept: string[]; clientsAdded: number; accountsAdded: number };
    const emptied = ['operations', 'term_deposits', 'postings', 'movements', 'audit_records', 'accounts', 'clients'];
    // Issue 11's own tables: closed business days, core events, webhooks.
    emptied.push('core_business_days', 'core_events', 'webhook_endpoints', 'webhook_events', 'webhook_deliveries');
    for (const table of emptied) {
      assert.ok(summary.tablesEmptied.includes(table), `${table} emptied`);
    }
    assert.ok(!summary.tablesEmptied.includes('kysely_migration'));
    assert.ok(!summary.tablesEmptied.includes('operator_sessions'), 'the operator who pressed reset stays logged in');
    assert.deepEqual(summary.realmsKept, ['sandbox']);
    assert.equal(summary.clientsAdded, 3);
    assert.ok(summary.rowsDeleted > 0);

    assert.equal(await balanceOf(dbUrl(), sourceAccount), demoBalanceMinor);
    assert.equal(await rowCount(dbUrl(), 'term_deposits'), 0);
    assert.equal(await rowCount(dbUrl(), 'operations'), 0);
    assert.equal(await rowCount(dbUrl(), 'audit_records'), 0);
    assert.equal(await retrieveStatus(server(), second.contract), 404);

    // The server still answers: a token is issued again and a deposit goes through.
    const after = await initiate(server(), 5000);
    assert.equal(after.status, 200);
    assert.equal(await balanceOf(dbUrl(), sourceAccount), demoBalanceMinor - 500_000n);
    const check = await runCli(['check', '--db', dbUrl()]);
    assert.equal(check.code, 0, check.stdout + check.stderr);
  });
});

describeEachStore('sandbox reset through the operator route module (POST /sandbox/reset)', ({ server, dbUrl }) => {
  let store: Store;
  let sandboxApp: FastifyInstance;
  let productionApp: FastifyInstance;
  before(async () => {
    store = await openStore(dbUrl());
    const vault = new Vault(undefined);
    sandboxApp = Fastify();
    await sandboxApp.register(sandboxRoutes({ store, vault, sandbox: true, dataFile: demoDataFile }));
    productionApp = Fastify();
    await productionApp.register(sandboxRoutes({ store, vault, sandbox: false, dataFile: demoDataFile }));
  });
  after(async () => {
    await sandboxApp.close();
    await productionApp.close();
    await store.close();
  });

  const reset = (app: FastifyInstance, body: unknown) =>
    app.inject({ method: 'POST', url: '/sandbox/reset', headers: { 'content-type': 'application/json' }, payload: JSON.stringify(body) });

  test('outside sandbox mode: 403 and nothing changes', async () => {
    const made = await initiate(server(), 6000);
    assert.equal(made.status, 200);
    const response = await reset(productionApp, { confirm: 'reset' });
    assert.equal(response.statusCode, 403);
    assert.deepEqual({ ...(response.json() as Record<string, unknown>), message: undefined }, { status: 403, reason: 'FORBIDDEN', message: undefined, path: 'POST /sandbox/reset' });
    assert.match(response.json().message, /sandbox mode/);
    assert.equal(await retrieveStatus(server(), made.contract), 200);
  });

  test('without {"confirm": "reset"}: 400 and nothing changes', async () => {
    for (const body of [{}, { confirm: 'yes' }, { confirm: true }, []]) {
      const response = await reset(sandboxApp, body);
      assert.equal(response.statusCode, 400, JSON.stringify(body));
      assert.equal(response.json().reason, 'VALIDATION_ERROR');
      assert.match(response.json().message, /"confirm": "reset"/);
    }
    assert.ok((await rowCount(dbUrl(), 'term_deposits')) > 0);
  });

  test('a data file whose webhook URL targets an internal address: 409 naming webhooks[i], nothing reset (issue 24)', async () => {
    const made = await initiate(server(), 7000);
    assert.equal(made.status, 200);
    const data = readDemoData<Record<string, unknown>>();
    data.webhooks = [{ realm: demo.realm, clientId: demo.treasury.clientId, url: 'http://169.254.169.254/latest/meta-data' }];
    const app = Fastify();
    await app.register(sandboxRoutes({ store, vault: new Vault(undefined), sandbox: true, dataFile: writeTempDataFile(data, 'coregate-reset-ssrf-') }));
    try {
      const response = await reset(app, { confirm: 'reset' });
      assert.equal(response.statusCode, 409, response.body);
      assert.equal(response.json().reason, 'CONFLICT');
      assert.match(response.json().message, /webhooks\[0\].*169\.254\.169\.254.*nothing was reset/);
      assert.equal(await retrieveStatus(server(), made.contract), 200, 'the deposit made before is still there');
    } finally {
      await app.close();
    }
  });

  test('{"confirm": "reset"} in sandbox mode: 200, balances back, deposits and operations gone, tokens issued again', async () => {
    assert.equal((await initiate(server(), 8000)).status, 200);
    assert.ok((await balanceOf(dbUrl(), sourceAccount)) < demoBalanceMinor);
    const response = await reset(sandboxApp, { confirm: 'reset' });
    assert.equal(response.statusCode, 200, response.body);
    assert.ok((response.json().tablesEmptied as string[]).includes('operations'));
    assert.equal(await balanceOf(dbUrl(), sourceAccount), demoBalanceMinor);
    assert.equal(await rowCount(dbUrl(), 'term_deposits'), 0);
    assert.equal(await rowCount(dbUrl(), 'operations'), 0);
    assert.equal((await initiate(server(), 5000)).status, 200);
  });

  test('a reset while deposits are in flight: the reset succeeds, no request fails with a 500, the ledger balances afterwards', async () => {
    const deposits = Array.from({ length: 12 }, (_, index) => initiate(server(), 1000 + index));
    const response = await reset(sandboxApp, { confirm: 'reset' });
    const statuses = (await Promise.all(deposits)).map((made) => made.status);
    assert.equal(response.statusCode, 200, response.body);
    const errors = server().logLines.filter((line) => line.includes('"level":50')).slice(0, 3);
    for (const status of statuses) assert.ok(status < 500, `deposit answered ${status} (${statuses.join(' ')}): ${errors.join('\n')}`);
    // The audit chainer runs after commits: give it its turn, then check the whole store.
    await server().coregate.chainer.idle();
    const check = await runCli(['check', '--db', dbUrl()]);
    assert.equal(check.code, 0, check.stdout + check.stderr);
  });

  test('a table the reset does not know (another migration\'s) is emptied too; the secret-hash key and the realm\'s signing keys survive', async () => {
    await withDb(dbUrl(), async (db) => {
      await sql`create table reset_probe (id varchar(16) primary key)`.execute(db);
      await sql`insert into reset_probe (id) values ('left-over')`.execute(db);
    });
    const hashKeyBefore = await withStore(dbUrl(), (store) => getSetting(store.db, secretHashKeySetting));
    const kidsBefore = await publishedKids(server());
    const response = await reset(sandboxApp, { confirm: 'reset' });
    assert.equal(response.statusCode, 200, response.body);
    assert.ok((response.json().tablesEmptied as string[]).includes('reset_probe'));
    const left = await withDb(dbUrl(), async (db) => (await sql<{ id: string }>`select id from reset_probe`.execute(db)).rows);
    assert.deepEqual(left, []);
    assert.ok(hashKeyBefore !== undefined);
    assert.equal(await withStore(dbUrl(), (store) => getSetting(store.db, secretHashKeySetting)), hashKeyBefore);
    assert.deepEqual(await publishedKids(server()), kidsBefore);
    await withDb(dbUrl(), (db) => sql`drop table reset_probe`.execute(db));
  });

  test('two resets at once run one after the other (the administration lock): both succeed, the data is the file\'s', async () => {
    assert.equal((await initiate(server(), 9000)).status, 200);
    const [first, second] = await Promise.all([reset(sandboxApp, { confirm: 'reset' }), reset(sandboxApp, { confirm: 'reset' })]);
    assert.equal(first.statusCode, 200, first.body);
    assert.equal(second.statusCode, 200, second.body);
    assert.equal(await balanceOf(dbUrl(), sourceAccount), demoBalanceMinor);
    assert.equal(await rowCount(dbUrl(), 'term_deposits'), 0);
  });
});
