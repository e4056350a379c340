/**
 * Sandbox data files (docs/sandbox.md, "The data file"): loading is idempotent (a restart with the
 * same --data changes nothing, only missing records are added), a malformed file is refused with an
 * error naming the field, the example file is accepted whole, and migrations apply once on both
 * dialects.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { sql } from 'kysely';
import { DataFileError, parseSandboxData, readSandboxFile } from '../../src/sandbox/data-file.js';
import { openStore, type Store } from '../../src/store/connect.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { migrateCoreToLatest } from '../../src/reference-core/storage/migrate-core.js';
import { runCli, runCliProcess } from '../helpers/cli.js';
import { demo, demoDataFile, postForm, startTestServer, type TestServer } from '../helpers/server.js';
import { withStore, embedded } from '../helpers/stores.js';
import { describeEachStoreUrl } from '../helpers/suite.js';

const exampleFile = '/work/shared/sandbox.example.json';
const { treasury, reporting } = demo;
const grant = { grant_type: 'client_credentials' };

/** A fresh, mutable copy of the example data file. */
function exampleData(): any {
  return JSON.parse(readFileSync(exampleFile, 'utf8'));
}

/** Every table of the store (the migrator's own excepted), found by introspection. */
async function storeTables(store: Store): Promise<string[]> {
  const tables = await store.db.introspection.getTables();
  return tables.map((table) => table.name).filter((name) => !name.startsWith('kysely_')).sort();
}

/** Row counts of every table, read through a store of its own. */
async function rowCounts(dbUrl: string): Promise<Record<string, number>> {
  return withStore(dbUrl, async (store) => {
    const counts: Record<string, number> = {};
    for (const table of await storeTables(store)) {
      const result = await sql<{ n: number | string }>`select count(*) as n from ${sql.table(table)}`.execute(store.db);
      counts[table] = Number(result.rows[0]?.n);
    }
    return counts;
  });
}

/** Every row of every table, in a stable order: two equal snapshots mean nothing changed. */
async function storeSnapshot(dbUrl: string): Promise<Record<string, string[]>> {
  return withStore(dbUrl, async (store) => {
    const snapshot: Record<string, string[]> = {};
    for (const table of await storeTables(store)) {
      const result = await sql<Record<string, unknown>>`select * from ${sql.table(table)}`.execute(store.db);
      snapshot[table] = result.rows.map((row) => JSON.stringify(row, (_key, value) => (typeof value === 'bigint' ? String(value) : value))).sort();
    }
    return snapshot;
  });
}

/**
 * Debits 1000.00 from an account directly in the store, as if an operation had moved money;
 * answers the new balance in minor units, or undefined when the store keeps no balances yet.
 */
async function moveMoney(dbUrl: string, accountNumber: string): Promise<string | undefined> {
  const store = await openStore(dbUrl);
  try {
    if (!(await storeTables(store)).includes('accounts')) return undefined;
    await sql`update accounts set balance_minor = balance_minor - 100000 where account_number = ${accountNumber}`.execute(store.db);
  } finally {
    await store.close();
  }
  return accountBalance(dbUrl, accountNumber);
}

async function accountBalance(dbUrl: string, accountNumber: string): Promise<string> {
  return withStore(dbUrl, async (store) => {
    const result = await sql<{ balance: unknown }>`select balance_minor as balance from accounts where account_number = ${accountNumber}`.execute(store.db);
    assert.equal(result.rows.length, 1, `account ${accountNumber} exists`);
    return String(result.rows[0]?.balance);
  });
}

async function clientRow(dbUrl: string, clientId: string) {
  return withStore(dbUrl, async (store) => {
    return store.db.selectFrom('clients').selectAll().where('realm', '=', 'sandbox').where('client_id', '=', clientId).executeTakeFirst();
  });
}

async function tokenStatus(server: TestServer, clientId: string, secret: string): Promise<number> {
  return (await postForm(server.tokenUrl(), { ...grant, client_id: clientId, client_secret: secret })).status;
}

async function publishedKids(server: TestServer): Promise<string[]> {
  const jwks = (await (await fetch(`${server.realmUrl()}/protocol/openid-connect/certs`)).json()) as { keys: Array<{ kid: string }> };
  return jwks.keys.map((key) => key.kid).sort();
}

/** The start-up log line that reports what the data file added. */
function assertLoadSummary(server: TestServer, realmsAdded: number, clientsAdded: number): void {
  const line = server.logLines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.msg === 'sandbox data loaded');
  assert.ok(line, 'the data file is reported as loaded');
  assert.equal(line.realmsAdded, realmsAdded);
  assert.equal(line.clientsAdded, clientsAdded);
}

describeEachStoreUrl('sandbox data loading is idempotent', ({ dbUrl }) => {
  let server: TestServer | undefined;
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'coregate-data-'));
  });
  after(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('a restart with the same --data keeps a rotated secret, duplicates nothing and keeps the signing key', async () => {
    server = await startTestServer({ db: dbUrl() });
    assertLoadSummary(server, 1, 3);
    const kidsBefore = await publishedKids(server);
    const subBefore = decodeJwt((await postForm(server.tokenUrl(), { ...grant, client_id: treasury.clientId, client_secret: treasury.secret })).body.access_token).sub;
    const countsBefore = await rowCounts(dbUrl());
    const hashBefore = (await clientRow(dbUrl(), treasury.clientId))?.secret_hash;

    const rotated = await runCli(['clients', 'rotate-secret', '--realm', 'sandbox', '--client-id', treasury.clientId, '--db', dbUrl(), '--json']);
    assert.equal(rotated.code, 0, rotated.stderr);
    const newSecret = (JSON.parse(rotated.stdout) as { clientSecret: string }).clientSecret;
    assert.equal(await tokenStatus(server, treasury.clientId, newSecret), 200, 'the running server sees the rotation at once');
    await server.close();
    server = undefined;
    // Money moved since the file was loaded: the reload must not reset the balance to the file's.
    const movedBalance = await moveMoney(dbUrl(), '1000000001');
    const snapshotBefore = await storeSnapshot(dbUrl());

    server = await startTestServer({ db: dbUrl() });
    assertLoadSummary(server, 0, 0);
    assert.equal(await tokenStatus(server, treasury.clientId, newSecret), 200, 'the rotated secret survives the reload');
    assert.equal(await tokenStatus(server, treasury.clientId, treasury.secret), 401, 'the data file\'s secret no longer works');
    assert.equal(await tokenStatus(server, reporting.clientId, reporting.secret), 200, 'untouched clients keep their file secret');
    assert.deepEqual(await rowCounts(dbUrl()), countsBefore, 'no record duplicated');
    assert.deepEqual(await publishedKids(server), kidsBefore, 'the signing key is unchanged');
    const response = await postForm(server.tokenUrl(), { ...grant, client_id: treasury.clientId, client_secret: newSecret });
    assert.equal(decodeProtectedHeader(response.body.access_token).kid, kidsBefore[0]);
    assert.equal(decodeJwt(response.body.access_token).sub, subBefore, 'the service account id is stable');
    assert.notEqual((await clientRow(dbUrl(), treasury.clientId))?.secret_hash, hashBefore);
    await server.close();
    server = undefined;
    if (movedBalance !== undefined) assert.equal(await accountBalance(dbUrl(), '1000000001'), movedBalance, 'the balance is kept');
    assert.deepEqual(await storeSnapshot(dbUrl()), snapshotBefore, 'reloading the same file changed nothing in the store');
  });

  test('a second file with one more client adds only that client; existing records keep their stored values', async () => {
    const data = exampleData();
    const clients = data.realms[0].clients as any[];
    // Changed fields of existing records must not overwrite what the store holds.
    clients.find((c) => c.clientId === reporting.clientId).scopes = ['termDeposit:retrieve', 'termDeposit:initiate'];
    clients.find((c) => c.clientId === reporting.clientId).secret = 'a-changed-secret-in-the-file-0123456789';
    data.realms[0].accessTokenLifespanSeconds = 60;
    clients.push({ clientId: 'audit-app', secret: 'audit-app-secret-0123456789abcdef0123', scopes: ['termDeposit:retrieve'] });
    data.users.push({ login: 'auditor', status: 'Active' });
    const file = join(dir, 'more.json');
    writeFileSync(file, JSON.stringify(data));
    const countsBefore = await rowCounts(dbUrl());
    const kidsBefore = await (async () => {
      const probe = await startTestServer({ db: dbUrl() });
      try {
        return await publishedKids(probe);
      } finally {
        await probe.close();
      }
    })();

    server = await startTestServer({ db: dbUrl(), data: file });
    assertLoadSummary(server, 0, 1);
    const counts = await rowCounts(dbUrl());
    assert.deepEqual(counts, { ...countsBefore, clients: (countsBefore.clients ?? 0) + 1, directory_users: (countsBefore.directory_users ?? 0) + 1 });
    const added = await postForm(server.tokenUrl(), { ...grant, client_id: 'audit-app', client_secret: 'audit-app-secret-0123456789abcdef0123' });
    assert.equal(added.status, 200);
    assert.equal(added.body.scope, 'termDeposit:retrieve');
    assert.equal(added.body.expires_in, 300, 'the realm keeps its stored lifespan');
    const existing = await postForm(server.tokenUrl(), { ...grant, client_id: reporting.clientId, client_secret: reporting.secret });
    assert.equal(existing.status, 200, 'the stored secret of an existing client is kept');
    assert.equal(existing.body.scope, 'termDeposit:retrieve', 'the stored scopes of an existing client are kept');
    assert.equal(await tokenStatus(server, reporting.clientId, 'a-changed-secret-in-the-file-0123456789'), 401);
    assert.deepEqual(await publishedKids(server), kidsBefore);
    await server.close();
    server = undefined;
  });
});

describe('malformed data files are refused with an error naming the field', () => {
  function refusal(mutate: (data: any) => void): DataFileError {
    const data = exampleData();
    mutate(data);
    try {
      parseSandboxData(data, 'bad.json');
    } catch (error) {
      assert.ok(error instanceof DataFileError, `not a DataFileError: ${String(error)}`);
      return error;
    }
    assert.fail('the data was accepted');
  }

  test('realms[0].clients[1].scopes not an array', () => {
    const error = refusal((d) => (d.realms[0].clients[1].scopes = 'termDeposit:retrieve'));
    assert.equal(error.field, 'realms[0].clients[1].scopes');
    assert.match(error.message, /^bad\.json: realms\[0\]\.clients\[1\]\.scopes: /);
  });

  test('accounts[2].currency not a 3-letter code', () => {
    const error = refusal((d) => (d.accounts[2].currency = 'EURO'));
    assert.equal(error.field, 'accounts[2].currency');
    assert.match(error.message, /accounts\[2\]\.currency/);
  });

  test('accounts[0].currency in lower case', () => {
    assert.equal(refusal((d) => (d.accounts[0].currency = 'usd')).field, 'accounts[0].currency');
  });

  test('businessDate "2026-02-30" is no calendar date', () => {
    const error = refusal((d) => (d.businessDate = '2026-02-30'));
    assert.equal(error.field, 'businessDate');
    assert.match(error.message, /2026-02-30/);
  });

  test('businessDate in another format', () => {
    assert.equal(refusal((d) => (d.businessDate = '02/03/2026')).field, 'businessDate');
  });

  test('a holiday that is no calendar date names its index', () => {
    assert.equal(refusal((d) => (d.calendar.holidays[1] = '2026-13-01')).field, 'calendar.holidays[1]');
  });

  test('an installment due date that is no calendar date', () => {
    assert.equal(refusal((d) => (d.merchandisingLoans[0].installments[2].dueDate = '2026-09-31')).field, 'merchandisingLoans[0].installments[2].dueDate');
  });

  test('duplicate clientId in a realm names the duplicate', () => {
    const error = refusal((d) => (d.realms[0].clients[2].clientId = d.realms[0].clients[0].clientId));
    assert.equal(error.field, 'realms[0].clients[2].clientId');
    assert.match(error.message, /duplicate/);
    assert.match(error.message, /treasury-app/);
  });

  test('the same clientId in two realms is allowed', () => {
    const data = exampleData();
    data.realms.push({ name: 'other', clients: [{ ...data.realms[0].clients[0] }] });
    assert.equal(parseSandboxData(data).realms?.length, 2);
  });

  test('duplicate account number', () => {
    assert.equal(refusal((d) => (d.accounts[4].accountNumber = d.accounts[0].accountNumber)).field, 'accounts[4].accountNumber');
  });

  test('duplicate realm name', () => {
    assert.equal(refusal((d) => d.realms.push({ name: 'sandbox' })).field, 'realms[1].name');
  });

  test('a client secret shorter than 16 characters', () => {
    assert.equal(refusal((d) => (d.realms[0].clients[0].secret = 'short')).field, 'realms[0].clients[0].secret');
  });

  test('a client without scopes', () => {
    assert.equal(refusal((d) => delete d.realms[0].clients[2].scopes).field, 'realms[0].clients[2].scopes');
  });

  test('an unknown account status', () => {
    assert.equal(refusal((d) => (d.accounts[1].status = 'Frozen')).field, 'accounts[1].status');
  });

  test('a negative balance', () => {
    assert.equal(refusal((d) => (d.accounts[3].balance = -1)).field, 'accounts[3].balance');
  });

  test('an unsupported signature algorithm', () => {
    assert.equal(refusal((d) => (d.realms[0].signatureAlgorithm = 'HS256')).field, 'realms[0].signatureAlgorithm');
  });

  test('invalid JSON: readSandboxFile says so and names the file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'coregate-data-'));
    try {
      const file = join(dir, 'broken.json');
      writeFileSync(file, '{"realms": [ }');
      assert.throws(() => readSandboxFile(file), (error: unknown) => {
        assert.ok(error instanceof DataFileError);
        assert.equal(error.field, '');
        assert.equal(error.file, file);
        assert.match(error.message, /not valid JSON/);
        assert.ok(error.message.startsWith(`data file ${file}: `));
        return true;
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('missing file (issue 12 item 9): readSandboxFile names the file, where it looked and the fix', () => {
    const file = join(tmpdir(), `coregate-no-such-file-${process.pid}.json`);
    assert.throws(() => readSandboxFile(file), (error: unknown) => {
      assert.ok(error instanceof DataFileError);
      assert.equal(error.field, '');
      assert.equal(error.message, `data file ${file}: does not exist (looked for ${file}): check --data / COREGATE_DATA; the demo data is demo/sandbox.json`);
      assert.doesNotMatch(error.message, /the file:/);
      return true;
    });
  });

  test('missing file: the core service\'s and `sandbox reset`\'s messages name their own flag and variable', () => {
    const file = join(tmpdir(), `coregate-no-such-file-${process.pid}.json`);
    assert.throws(() => readSandboxFile(file, '--data / COREGATE_CORE_DATA'), /does not exist \(looked for .*\): check --data \/ COREGATE_CORE_DATA; the demo data is demo\/sandbox\.json$/);
    assert.throws(() => readSandboxFile(file, '--data'), /: check --data; the demo data/);
  });

  test('a JSON array instead of an object', () => {
    assert.throws(() => parseSandboxData([], 'array.json'), (error: unknown) => error instanceof DataFileError && /^data file array\.json: /.test(error.message));
  });

  test('coregate serve --data bad.json exits non-zero and prints the field name', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'coregate-data-'));
    try {
      const data = exampleData();
      data.realms[0].clients[1].scopes = 'termDeposit:retrieve';
      const file = join(dir, 'bad.json');
      writeFileSync(file, JSON.stringify(data));
      const result = await runCliProcess(['serve', '--data', file, '--port', '0', '--host', '127.0.0.1', '--db', `sqlite:${join(dir, 'coregate.db')}`]);
      assert.notEqual(result.code, 0);
      assert.match(result.stderr, /realms\[0\]\.clients\[1\]\.scopes/);
      assert.ok(result.stderr.includes(file), result.stderr);
      assert.doesNotMatch(result.stderr, /\n\s+at /, 'a clear message, not a stack trace');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the example data file (sandbox.example.json) is accepted whole', () => {
  test('every section parses, including the core\'s: customers, accounts, products, loans, calendar', () => {
    const data = readSandboxFile(exampleFile);
    assert.equal(data.businessDate, '2026-03-02');
    assert.deepEqual(data.calendar?.weekend, ['SATURDAY', 'SUNDAY']);
    assert.equal(data.calendar?.holidays?.length, 3);
    assert.equal(data.realms?.[0]?.clients?.length, 3);
    assert.equal(data.users?.length, 3);
    assert.equal(data.workstations?.length, 3);
    assert.equal(data.customers?.length, 2);
    assert.equal(data.accounts?.length, 5);
    assert.equal(data.termDepositProducts?.length, 2);
    assert.equal(data.merchandisingLoans?.[0]?.installments.length, 3);
    assert.equal(data.merchandisingLoans?.[0]?.charges.taxRate, 0.16);
  });

  test('the bundled demo file is accepted too', () => {
    assert.equal(readSandboxFile(demoDataFile).realms?.[0]?.name, 'sandbox');
  });

  test('fields the project may add later are accepted (the format only grows)', () => {
    const data = exampleData();
    data.schemaVersion = 2;
    data.realms[0].clients[0].description = 'treasury back office';
    data.accounts[0].iban = 'XX00TEST';
    assert.doesNotThrow(() => parseSandboxData(data));
  });
});

describeEachStoreUrl('the example data file loads into the store', ({ dbUrl }) => {
  let server: TestServer | undefined;
  after(async () => {
    await server?.close();
  });

  test('a server started with the example file issues tokens to its clients', async () => {
    server = await startTestServer({ db: dbUrl(), data: exampleFile });
    assert.equal(await tokenStatus(server, treasury.clientId, treasury.secret), 200);
    assert.equal(await tokenStatus(server, reporting.clientId, reporting.secret), 200);
    const counts = await rowCounts(dbUrl());
    assert.equal(counts.realms, 1);
    assert.equal(counts.clients, 3);
    assert.equal(counts.directory_users, 3);
    assert.equal(counts.workstations, 3);
    await server.close();
    server = undefined;
  });
});

describeEachStoreUrl('migrations', ({ dbUrl }) => {
  let server: TestServer | undefined;
  after(async () => {
    await server?.close();
  });

  test('migrateToLatest (the API\'s) and migrateCoreToLatest (the core\'s) apply every migration on an empty store, then none', async () => {
    const store = await openStore(dbUrl());
    try {
      const first = await migrateToLatest(store);
      assert.equal(first[0], '0001_auth');
      assert.deepEqual(first, [...first].sort(), 'applied in order');
      assert.deepEqual(await migrateToLatest(store), [], 'a second run applies none');
      assert.deepEqual(await migrateCoreToLatest(store), ['0001_core_tables']);
      assert.deepEqual(await migrateCoreToLatest(store), [], 'a second run of the core\'s applies none');
      for (const table of ['realms', 'clients', 'signing_keys', 'settings', 'directory_users', 'workstations', 'core_settings'] as const) {
        const row = await embedded(store.db).selectFrom(table).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
        assert.equal(Number(row.n), 0, `${table} exists and is empty`);
      }
      const applied = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(store.db);
      assert.deepEqual(applied.rows.map((r) => r.name), first, 'every applied migration is recorded');
    } finally {
      await store.close();
    }
  });

  test('a server start on a migrated store applies none (and logs none)', async () => {
    server = await startTestServer({ db: dbUrl() });
    assert.equal(server.logLines.some((line) => line.includes('"msg":"migrations applied"')), false);
    assert.equal(await tokenStatus(server, treasury.clientId, treasury.secret), 200);
    await server.close();
    server = undefined;
    server = await startTestServer({ db: dbUrl() });
    assert.equal(server.logLines.some((line) => line.includes('"msg":"migrations applied"')), false);
    await server.close();
    server = undefined;
  });
}, { empty: true });

describeEachStoreUrl('migrations at a server\'s first start', ({ dbUrl }) => {
  let server: TestServer | undefined;
  after(async () => {
    await server?.close();
  });

  test('the first start applies the migrations and logs them; the second applies none', async () => {
    server = await startTestServer({ db: dbUrl() });
    const first = server.logLines.map((l) => JSON.parse(l) as { msg: string; migrations?: string[] }).find((l) => l.msg === 'migrations applied');
    assert.ok(first?.migrations && first.migrations.length >= 1, 'the first start reports the migrations it applied');
    assert.equal(first.migrations[0], '0001_auth');
    await server.close();
    server = undefined;
    server = await startTestServer({ db: dbUrl() });
    assert.equal(server.logLines.some((line) => line.includes('"msg":"migrations applied"')), false);
    await server.close();
    server = undefined;
  });
}, { empty: true });
