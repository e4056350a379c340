/**
 * The operator's toolkit (issue 12 item 2): `clients create` checks its scopes (with a
 * did-you-mean) and that its technical user and workstation are in the directory (or adds them
 * with --create-missing); users, workstations, customers and accounts are added and listed
 * (`--json`); an account, a deposit and a facility are shown. The real CLI on a SQLite store.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { runCli } from '../helpers/cli.js';
import { demoDataFile } from '../helpers/server.js';

const dir = mkdtempSync(join(tmpdir(), 'coregate-toolkit-'));
const db = ['--db', `sqlite:${join(dir, 'toolkit.db')}`];
const env = { ...process.env, COREGATE_MASTER_KEY: '' };
const cli = (args: string[]) => runCli([...args, ...db], { env });

before(async () => {
  const reset = await cli(['sandbox', 'reset', '--data', demoDataFile, '--yes']);
  assert.equal(reset.code, 0, reset.stderr);
});
after(() => rmSync(dir, { recursive: true, force: true }));

test('issue 12 item 2: clients create refuses a misspelt scope with a did-you-mean, and an unknown one naming the known scopes', async () => {
  const misspelt = await cli(['clients', 'create', '--realm', 'sandbox', '--client-id', 'typo-app', '--scopes', 'termDeposit:initate']);
  assert.equal(misspelt.code, 2);
  assert.match(misspelt.stderr, /Unknown scope "termDeposit:initate": did you mean "termDeposit:initiate"\?/);
  const unknown = await cli(['clients', 'create', '--realm', 'sandbox', '--client-id', 'typo-app', '--scopes', 'payments:everything']);
  assert.match(unknown.stderr, /Unknown scope "payments:everything"\. The known scopes are termDeposit:initiate, termDeposit:retrieve, merchandisingLoan:execute, coregate:operator\./);
  const listed = JSON.parse((await cli(['clients', 'list', '--realm', 'sandbox', '--json'])).stdout) as Array<{ clientId: string }>;
  assert.ok(!listed.some((client) => client.clientId === 'typo-app'), 'nothing was created');
});

test('issue 12 item 2: a technical user or workstation not in the directory is refused with the command that adds it; --create-missing adds them', async () => {
  const refused = await cli(['clients', 'create', '--realm', 'sandbox', '--client-id', 'payroll-app', '--scopes', 'termDeposit:initiate', '--technical-user', 'svc-payroll', '--default-workstation', 'WS-PAY-01']);
  assert.equal(refused.code, 2);
  assert.match(refused.stderr, /--technical-user svc-payroll is not in the directory; --default-workstation WS-PAY-01 is not in the directory: every call of the client would be refused \(403\)\. Add them with `coregate users add svc-payroll` and `coregate workstations add WS-PAY-01`, or pass --create-missing/);
  const created = await runCli(['clients', 'create', '--realm', 'sandbox', '--client-id', 'payroll-app', '--scopes', 'termDeposit:initiate', '--technical-user', 'svc-payroll', '--default-workstation', 'WS-PAY-01', '--create-missing', '--json', ...db], { env: { ...process.env, COREGATE_MASTER_KEY: '' } });
  assert.equal(created.code, 0, created.stderr);
  assert.deepEqual((JSON.parse(created.stdout) as { created: string[] }).created, ['user svc-payroll', 'workstation WS-PAY-01']);
  const users = JSON.parse((await cli(['users', 'list', '--json'])).stdout) as Array<{ login: string; status: string }>;
  assert.deepEqual(users.find((user) => user.login === 'svc-payroll'), { login: 'svc-payroll', status: 'Active' });
  const workstations = JSON.parse((await cli(['workstations', 'list', '--json'])).stdout) as Array<{ id: string }>;
  assert.ok(workstations.some((workstation) => workstation.id === 'WS-PAY-01'));
});

test('issue 12 item 2: users and workstations add (an existing one left as it is), customers and accounts add and list with exact balances', async () => {
  assert.match((await cli(['users', 'add', 'clerk-9', '--status', 'Disabled'])).stdout, /User clerk-9 added \(Disabled\)/);
  assert.match((await cli(['users', 'add', 'clerk-9'])).stdout, /already exists \(Disabled\): left as it is/);
  assert.match((await cli(['workstations', 'add', 'WS-9'])).stdout, /Workstation WS-9 added \(Active\)/);
  assert.equal((await cli(['users', 'add', 'x', '--status', 'Sleeping'])).code, 2);

  assert.equal((await cli(['customers', 'add', '--customer', 'C0009', '--name', 'New Co'])).code, 0);
  const orphan = await cli(['accounts', 'add', '--account', '9000000002', '--customer', 'C9999', '--currency', 'USD']);
  assert.match(orphan.stderr, /Customer "C9999" does not exist: add it first with `coregate customers add --customer C9999`/);
  const opened = await cli(['accounts', 'add', '--account', '9000000001', '--customer', 'C0009', '--currency', 'USD', '--balance', '1500.50', '--json']);
  assert.equal(opened.code, 0, opened.stderr);
  assert.deepEqual((JSON.parse(opened.stdout) as { balance: unknown }).balance, { amount: '1500.50', currency: 'USD' });
  assert.match((await cli(['accounts', 'add', '--account', '9000000001', '--customer', 'C0009', '--currency', 'USD'])).stderr, /already exists/);
  const inexact = await cli(['accounts', 'add', '--account', '9000000003', '--customer', 'C0009', '--currency', 'USD', '--balance', '1.005']);
  assert.notEqual(inexact.code, 0);
  const list = JSON.parse((await cli(['accounts', 'list', '--customer', 'C0009', '--json'])).stdout) as Array<{ accountNumber: string }>;
  assert.deepEqual(list.map((account) => account.accountNumber), ['9000000001']);
  const customers = JSON.parse((await cli(['customers', 'list', '--json'])).stdout) as Array<{ customerReference: string; accounts: number }>;
  assert.equal(customers.find((customer) => customer.customerReference === 'C0009')?.accounts, 1);
  const shown = JSON.parse((await cli(['accounts', 'show', '9000000001', '--json'])).stdout) as { account: { balance: { amount: string } }; postings: unknown[] };
  assert.equal(shown.account.balance.amount, '1500.50');
  assert.equal(shown.postings.length, 1, 'the opening balance');
  const check = await cli(['check']);
  assert.equal(check.code, 0, check.stdout + check.stderr);
});

test('issue 12 item 2: a facility and a deposit are shown; an unknown one is named', async () => {
  const facility = JSON.parse((await cli(['facilities', 'show', '7000000001', '--json'])).stdout) as { merchandisingLoanId: string; installments: unknown[] };
  assert.equal(facility.merchandisingLoanId, '7000000001');
  assert.equal(facility.installments.length, 3);
  assert.match((await cli(['term-deposits', 'show', 'TD000000000000001'])).stderr, /Term deposit "TD000000000000001" does not exist/);
});

test('issue 12 item 2: realms add creates a realm with its signing key; a second add of it is refused', async () => {
  const added = await cli(['realms', 'add', '--realm', 'partners', '--lifespan', '600', '--alg', 'ES256', '--json']);
  assert.equal(added.code, 0, added.stderr);
  assert.deepEqual(JSON.parse(added.stdout), { name: 'partners', audience: 'coregate-api', accessTokenLifespanSeconds: 600, signatureAlgorithm: 'ES256', profile: null, dpopNonce: false });
  const realms = JSON.parse((await cli(['realms', 'list', '--json'])).stdout) as Array<{ name: string }>;
  assert.ok(realms.some((realm) => realm.name === 'partners'));
  const keys = JSON.parse((await cli(['keys', 'list', '--realm', 'partners', '--json'])).stdout) as Array<{ alg: string; status: string }>;
  assert.deepEqual(keys.map((key) => [key.alg, key.status]), [['ES256', 'active']]);
  assert.match((await cli(['realms', 'add', '--realm', 'partners'])).stderr, /Realm "partners" already exists/);
});
