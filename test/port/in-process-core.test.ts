/**
 * An in-process core (docs/core-port.md, "An in-process core"): `startCoregate(config, { core })`
 * runs coregate on a TypeScript implementation of the port — here the in-memory core of
 * examples/in-process-core — without migrating or building the reference core. As with
 * `--core-url` (src/sandbox/core-placement.ts), the API's database holds none of the core's tables
 * and records that its core is elsewhere; the data file's core part goes to the core's load side,
 * or stops the start when it has none; `wrapCore` still wraps the core. On both stores, each
 * starting empty (no template: the template holds the reference core's tables).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { InMemoryCore, type InMemoryBooks } from '../../examples/in-process-core/in-memory-core.js';
import { resolveConfig } from '../../src/config.js';
import type { CoreBankingPort, CoreDataDocument, CoreDataLoad } from '../../src/core/port.js';
import { startCoregate, type Coregate, type StartOptions } from '../../src/main.js';
import { inProcessCore, remoteCoreSetting } from '../../src/sandbox/core-placement.js';
import { getSetting } from '../../src/store/settings.js';
import { tableExists } from '../../src/store/table-exists.js';
import { runCli } from '../helpers/cli.js';
import { postForm, demoDataFile, testAuditSpool } from '../helpers/server.js';
import { runSigningKeys } from '../helpers/signing-keys.js';
import { withStore } from '../helpers/stores.js';
import { describeEachStoreUrl } from '../helpers/suite.js';

const client = { clientId: 'teller-app', secret: 'teller-app-secret-change-me-0123456789abcdef' };
const dir = mkdtempSync(join(tmpdir(), 'coregate-in-process-core-'));
/** The API's part of a data file only: a realm and its client. */
const apiDataFile = join(dir, 'api-data.json');
before(() => {
  writeFileSync(
    apiDataFile,
    JSON.stringify({ realms: [{ name: 'bank', clients: [{ ...client, scopes: ['termDeposit:initiate', 'termDeposit:retrieve'], technicalUser: 'teller', defaultWorkstation: 'WS-01' }] }] }),
  );
});
after(() => rmSync(dir, { recursive: true, force: true }));

const books = (): InMemoryBooks => ({
  businessDate: '2026-03-02',
  holidays: [],
  customers: { C0001: { status: 'Active' } },
  accounts: {
    '1000000001': { customerReference: 'C0001', currency: 'USD', balanceMinor: 25_000_000n },
    '1000000002': { customerReference: 'C0001', currency: 'USD', balanceMinor: 150_000n },
  },
  products: { 'TDFIX/TD30-365': { currencies: ['USD'], dayCount: 'ACT/360', minDays: 30, maxDays: 365 } },
  users: { teller: 'Active' },
  workstations: { 'WS-01': 'Active' },
});

/** The in-memory core with a load side that keeps what it was given. */
class LoadingCore extends InMemoryCore implements CoreDataLoad {
  readonly loaded: CoreDataDocument[] = [];
  async loadData(document: CoreDataDocument) {
    this.loaded.push(document);
    return { accountsAdded: Array.isArray(document.accounts) ? document.accounts.length : 0 };
  }
}

const deposit = {
  customerReference: 'C0001',
  termDepositProduct: { productCode: 'TDFIX', componentCode: 'TD30-365' },
  principalAmount: { amountValue: 10000, amountCurrency: { currencycode: 'USD' }, amountType: 'Principal' },
  interestRate: { rateValue: 5.25, rateType: 'Nominal' },
  termDepositPeriod: { numberOfDays: 90 },
  valueDate: '2026-03-02',
  sourceAccount: { accountIdentification: '1000000001', accountType: 'DebitAccount' },
  interestSettlementAccount: { accountIdentification: '1000000002', accountType: 'CreditAccount' },
};

function start(db: string, options: StartOptions & { data?: string; coreUrl?: string }): Promise<Coregate> {
  const { data, coreUrl, ...startOptions } = options;
  const config = resolveConfig({ port: '0', host: '127.0.0.1', db, auditSpool: testAuditSpool(), logLevel: 'silent', ...(data ? { data } : {}), ...(coreUrl ? { coreUrl } : {}) }, {});
  return startCoregate(config, { signingKeys: runSigningKeys, ...startOptions });
}

async function initiateDeposit(coregate: Coregate): Promise<{ status: number; body: any }> {
  const token = await postForm(`${coregate.url}/realms/bank/protocol/openid-connect/token`, { grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.secret });
  assert.equal(token.status, 200, JSON.stringify(token.body));
  const response = await fetch(`${coregate.url}/v1/term-deposits/initiate`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token.body.access_token}`, 'content-type': 'application/json', 'x-correlation-id': randomUUID() },
    body: JSON.stringify(deposit),
  });
  return { status: response.status, body: await response.json() };
}

/** The reference core's own tables (its migrations') and the API's record of where its core is. */
async function placement(db: string) {
  return withStore(db, async (store) => ({
    coreTables: (await Promise.all(['accounts', 'movements', 'core_migration', 'core_settings'].map((table) => tableExists(store, table)))).some(Boolean),
    recorded: await getSetting(store.db, remoteCoreSetting),
  }));
}

describeEachStoreUrl(
  'an in-process core (StartOptions.core)',
  ({ dbUrl }) => {
    test('coregate runs on an in-process core without migrating or building the reference core: the deposit executes in that core, and the API\'s database holds none of the core\'s tables', async () => {
      const core = new InMemoryCore(books());
      const coregate = await start(dbUrl(), { core, data: apiDataFile });
      try {
        const answer = await initiateDeposit(coregate);
        assert.equal(answer.status, 200, JSON.stringify(answer.body));
        assert.equal(answer.body.termDepositPeriod.maturityDate, '2026-06-01');
        assert.equal(core.balanceOf('1000000001'), 25_000_000n - 1_000_000n);
        assert.equal(coregate.core, core, 'the instance\'s core is the one handed in');
        assert.equal(coregate.remoteCore, undefined);
      } finally {
        await coregate.close();
      }
      assert.deepEqual(await placement(dbUrl()), { coreTables: false, recorded: inProcessCore });
    });

    test('a database an API ran on an in-process core is refused to an embedded start and to operator commands, saying where the core\'s records are', async () => {
      await assert.rejects(start(dbUrl(), {}), /in-process core \(startCoregate\(config, \{ core \}\)\): its core tables are not the bank's records/);
      const listed = await runCli(['accounts', 'list', '--db', dbUrl()], { env: {} });
      assert.equal(listed.code, 2, listed.stderr);
      assert.match(listed.stderr, /runs on an in-process core/);
      assert.equal((await placement(dbUrl())).coreTables, false, 'the refusals added no core table');
    });
  },
  { empty: true },
);

describeEachStoreUrl(
  'an in-process core with a load side (CoreDataLoad)',
  ({ dbUrl }) => {
    test('the data file\'s core part goes to the in-process core\'s load side, the API\'s part to the API\'s database', async () => {
      const core = new LoadingCore(books());
      const coregate = await start(dbUrl(), { core, data: demoDataFile });
      await coregate.close();
      assert.equal(core.loaded.length, 1);
      assert.deepEqual(Object.keys(core.loaded[0] ?? {}).sort(), ['accounts', 'businessDate', 'calendar', 'customers', 'merchandisingLoans', 'termDepositProducts', 'users', 'workstations']);
      assert.deepEqual(await placement(dbUrl()), { coreTables: false, recorded: inProcessCore });
    });
  },
  { empty: true },
);

describeEachStoreUrl(
  'an in-process core without a load side',
  ({ dbUrl }) => {
    test('a data file with a core part stops the start, saying where those records belong', async () => {
      await assert.rejects(
        start(dbUrl(), { core: new InMemoryCore(books()), data: demoDataFile }),
        /its core part \(.*accounts.*\) belongs to the in-process core \(StartOptions\.core\), which takes no data .*load it into that core yourself/,
      );
    });
  },
  { empty: true },
);

describeEachStoreUrl(
  'wrapCore with an in-process core',
  ({ dbUrl }) => {
    test('wrapCore keeps working: it wraps the in-process core, and the instance calls the wrapper', async () => {
      const core = new InMemoryCore(books());
      const calls: string[] = [];
      const wrapCore = (inner: CoreBankingPort): CoreBankingPort => {
        assert.equal(inner, core);
        return new Proxy(inner, {
          get(target, property, receiver) {
            const value = Reflect.get(target, property, receiver) as unknown;
            if (typeof value !== 'function') return value;
            return (...args: unknown[]) => {
              calls.push(String(property));
              return (value as (...args: unknown[]) => unknown).apply(target, args);
            };
          },
        });
      };
      const coregate = await start(dbUrl(), { core, wrapCore, data: apiDataFile });
      try {
        assert.equal((await initiateDeposit(coregate)).status, 200);
      } finally {
        await coregate.close();
      }
      assert.ok(calls.includes('constituteTermDeposit'), calls.join(', '));
    });

    test('StartOptions.core with --core-url is refused: the core is named twice', async () => {
      await assert.rejects(start(dbUrl(), { core: new InMemoryCore(books()), coreUrl: 'http://127.0.0.1:9' }), /StartOptions\.core and --core-url/);
    });

    test('a TransactionalCore as StartOptions.core is refused: its within() would write in the API\'s database', async () => {
      const core = new InMemoryCore(books());
      const transactional = Object.assign(Object.create(core) as InMemoryCore, { within: () => core });
      await assert.rejects(start(dbUrl(), { core: transactional }), /StartOptions\.core must keep its own storage/);
    });
  },
  { empty: true },
);
