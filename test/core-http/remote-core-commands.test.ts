/**
 * A remote core deployment as a new user builds it from docs/deployment.md: the core's service
 * with a database of its own, and `coregate serve --core-url ... --data demo/sandbox.json`. The
 * API's database then holds no copy of the core's records, and every operator command that reads
 * or changes them goes to the core (`--core-url`) or refuses naming it: the scenario — an
 * advance "run" on a stale copy, opening balances shown after real deposits, `coregate check`
 * failing with executedWithoutPostings and no hint — cannot happen. `coregate check --core-url`
 * proves the ledger through the core, and fails naming the finding when it is broken.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { depositBody } from '../helpers/bodies.js';
import { runCli } from '../helpers/cli.js';
import { startTestCoreServer, type TestCoreServer } from '../helpers/core-server.js';
import { demoDataFile, demoToken, startTestServer, type TestServer } from '../helpers/server.js';
import { storeTargets, embedded } from '../helpers/stores.js';
import { tableExists } from '../../src/store/table-exists.js';

for (const target of storeTargets) {
  describe(`operator commands with a remote core [${target.name}]`, { skip: target.skip }, () => {
    let core: TestCoreServer | undefined;
    let api: TestServer | undefined;
    const drops: Array<() => Promise<void>> = [];
    let apiDb = '';
    const coreUrl = () => core?.url ?? '';
    // The environment of a shell where COREGATE_CORE_URL is not set: the refusals are the point.
    const env = { ...process.env, COREGATE_CORE_URL: undefined } as NodeJS.ProcessEnv;
    const cli = (args: string[]) => runCli(args, { env });

    before(async () => {
      const coreDb = await target.create();
      drops.push(coreDb.drop);
      // A new database, as a new user's: not the run's template, which holds the embedded core's tables too.
      const apiStore = await target.create({ empty: true });
      drops.push(apiStore.drop);
      apiDb = apiStore.url;
      core = await startTestCoreServer({ db: coreDb.url, data: demoDataFile });
      api = await startTestServer({ db: apiDb, data: demoDataFile, flags: { coreUrl: core.url }, deployment: 'embedded' });
      const token = await demoToken(api);
      const response = await fetch(`${api.url}/v1/term-deposits/initiate`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(depositBody(1000)),
      });
      assert.equal(response.status, 200, await response.text());
    });

    after(async () => {
      await api?.close();
      await core?.close();
      for (const drop of drops) await drop();
    });

    test('the data file\'s core part went to the core: the API\'s database holds none of the core\'s tables (issue 25: the core\'s migrations never ran there)', async () => {
      const store = api?.coregate.store;
      assert.ok(store);
      for (const table of ['accounts', 'customers', 'movements', 'postings', 'directory_users', 'workstations', 'core_settings', 'core_migration']) {
        assert.equal(await tableExists(store, table), false, `${table} is the core's`);
      }
      assert.ok(await tableExists(store, 'operations'), 'the API\'s own tables are there');
      assert.equal(await core?.balanceOf('1000000001'), 25_000_000n - 100_000n, 'the deposit moved the core\'s money');
    });

    test('on the API\'s database without --core-url, core advance, accounts list and check refuse, naming --core-url and the core: nothing answers from a copy', async () => {
      for (const args of [
        ['core', 'advance', '--to', '2026-03-04'],
        ['core', 'date'],
        ['accounts', 'list'],
        ['customers', 'list'],
        ['users', 'list'],
        ['workstations', 'list'],
        ['accounts', 'show', '1000000001'],
        ['check'],
      ]) {
        const result = await cli([...args, '--db', apiDb]);
        assert.notEqual(result.code, 0, `${args.join(' ')} must refuse: ${result.stdout}`);
        assert.match(result.stderr, /--core-url/, `${args.join(' ')}: ${result.stderr}`);
        assert.ok(result.stderr.includes(coreUrl()), `${args.join(' ')} names the core: ${result.stderr}`);
        assert.doesNotMatch(result.stdout, /End of day ran|executedWithoutPostings|250000\.00/);
      }
      assert.equal((await cli(['core', 'date', '--core-url', coreUrl()])).stdout.trim(), '2026-03-02', 'the core\'s date did not move');
    });

    test('with --core-url they go to the core: balances after the deposit, the advance moves the core\'s date, check proves the core\'s ledger', async () => {
      const accounts = await cli(['accounts', 'list', '--db', apiDb, '--core-url', coreUrl(), '--json']);
      assert.equal(accounts.code, 0, accounts.stderr);
      const source = (JSON.parse(accounts.stdout) as Array<{ accountNumber: string; balance: { amount: string } }>).find((row) => row.accountNumber === '1000000001');
      assert.equal(source?.balance.amount, '249000.00', 'the core\'s live balance, not the file\'s opening one');
      // The directory's lists come through the port's read side too (issue 25: every command that
      // reads the core's data goes to the core).
      const users = await cli(['users', 'list', '--db', apiDb, '--core-url', coreUrl(), '--json']);
      assert.equal(users.code, 0, users.stderr);
      assert.deepEqual(JSON.parse(users.stdout), [
        { login: 'former-clerk', status: 'Disabled' },
        { login: 'jdoe', status: 'Active' },
        { login: 'svc-treasury', status: 'Active' },
      ]);
      const workstations = await cli(['workstations', 'list', '--db', apiDb, '--core-url', coreUrl(), '--json']);
      assert.equal(workstations.code, 0, workstations.stderr);
      assert.deepEqual(JSON.parse(workstations.stdout), [
        { id: 'WS-BRANCH-07', status: 'Active' },
        { id: 'WS-RETIRED-02', status: 'Disabled' },
        { id: 'WS-TREASURY-01', status: 'Active' },
      ]);

      const advance = await cli(['core', 'advance', '--to', '2026-03-04', '--db', apiDb, '--core-url', coreUrl()]);
      assert.equal(advance.code, 0, advance.stderr);
      assert.match(advance.stdout, /End of day ran for 2 business days/);
      assert.equal((await cli(['core', 'date', '--core-url', coreUrl()])).stdout.trim(), '2026-03-04');

      const check = await cli(['check', '--db', apiDb, '--core-url', coreUrl()]);
      assert.equal(check.code, 0, check.stdout + check.stderr);
      assert.match(check.stdout, /^Ledger OK: /m);
      assert.match(check.stdout, /^Operations OK: 1 executed operations have their postings/m);
    });

    test('coregate check --core-url fails on a deliberately broken ledger, naming the finding and the account', async () => {
      // Tampering in the core's own database: a balance that no longer equals its postings.
      await embedded(core!.service.store.db).updateTable('accounts').set({ balance_minor: 123n }).where('account_number', '=', '1000000003').execute();
      const check = await cli(['check', '--db', apiDb, '--core-url', coreUrl(), '--json']);
      assert.equal(check.code, 1, check.stderr);
      const report = JSON.parse(check.stdout) as { ok: boolean; ledger: { ok: boolean; balanceMismatches: Array<{ accountNumber: string; storedMinor: string; postedMinor: string }> }; operations: { ok: boolean } };
      assert.equal(report.ledger.ok, false);
      assert.deepEqual(report.ledger.balanceMismatches, [{ accountNumber: '1000000003', storedMinor: '123', postedMinor: '9000000' }]);
      assert.equal(report.operations.ok, true, 'the operations still have their postings in the core');
    });

    test('clients create checks the technical user in the core\'s directory: refused without --core-url (naming it), added to the core with --core-url --create-missing', async () => {
      const create = (clientId: string, extra: string[]) => cli(['clients', 'create', '--realm', 'sandbox', '--client-id', clientId, '--scopes', 'termDeposit:retrieve', '--technical-user', 'new-clerk', '--db', apiDb, ...extra, '--json']);
      const refused = await create('directory-app-1', []);
      assert.notEqual(refused.code, 0, refused.stdout);
      assert.match(refused.stderr, /--core-url/);
      const missing = await create('directory-app-2', ['--core-url', coreUrl()]);
      assert.notEqual(missing.code, 0, missing.stdout);
      assert.match(missing.stderr, /--technical-user new-clerk is not in the directory/);
      const created = await create('directory-app-3', ['--core-url', coreUrl(), '--create-missing']);
      assert.equal(created.code, 0, created.stderr);
      assert.deepEqual((JSON.parse(created.stdout) as { created: string[] }).created, ['user new-clerk']);
      const users = JSON.parse((await cli(['users', 'list', '--core-url', coreUrl(), '--json'])).stdout) as Array<{ login: string }>;
      assert.ok(users.some((user) => user.login === 'new-clerk'), 'the user is in the core\'s directory');
    });

    test('an embedded start on the API\'s database of a remote core is refused, naming --core-url', async () => {
      await assert.rejects(startTestServer({ db: apiDb, data: null, deployment: 'embedded' }), (error: unknown) => {
        assert.match(String(error), /--core-url/);
        assert.ok(String(error).includes(coreUrl()));
        return true;
      });
    });
  });
}
