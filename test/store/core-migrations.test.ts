/**
 * Issue 25: the reference core owns its storage, with its own migrations. The API's set creates
 * the API's tables only (an API with `--core-url` holds none of the core's); the core's set
 * creates the core's, recorded in its own bookkeeping tables; with the embedded core one database
 * holds both. A database the earlier, shared migrations prepared (core records in it, the
 * business date in the API's `settings`) is adopted by the core's first migration: nothing is
 * lost, and it ends with the schema a new database gets.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Migrator, sql, type Migration } from 'kysely';
import { migrateCoreToLatest } from '../../src/reference-core/storage/migrate-core.js';
import { openStore, type Store } from '../../src/store/connect.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { tableExists } from '../../src/store/table-exists.js';
import * as old0001 from '../fixtures/pre-split-migrations/0001_auth.js';
import * as old0002 from '../fixtures/pre-split-migrations/0002_core.js';
import * as old0003 from '../fixtures/pre-split-migrations/0003_loans.js';
import * as old0004 from '../fixtures/pre-split-migrations/0004_production.js';
import * as old0006 from '../fixtures/pre-split-migrations/0006_end_of_day.js';
import * as m0005 from '../../src/store/migrations/0005_drop_unused_chain_index.js';
import * as m0007 from '../../src/store/migrations/0007_webhooks.js';
import * as m0008 from '../../src/store/migrations/0008_operator_sessions.js';
import * as m0009 from '../../src/store/migrations/0009_fapi2.js';
import * as m0010 from '../../src/store/migrations/0010_sandbox_scenarios.js';
import * as m0011 from '../../src/store/migrations/0011_client_tokens_not_before.js';
import * as m0012 from '../../src/store/migrations/0012_replay_records_unsynced.js';
import * as m0013 from '../../src/store/migrations/0013_replay_generations.js';
import { storeTargets } from '../helpers/stores.js';

const coreTables = ['directory_users', 'workstations', 'customers', 'accounts', 'movements', 'postings', 'term_deposit_products', 'term_deposits', 'loan_facilities', 'loan_installments', 'loan_executions', 'core_operations', 'core_business_days', 'core_events', 'core_settings'];
const apiTables = ['realms', 'clients', 'signing_keys', 'settings', 'operations', 'audit_records', 'webhook_endpoints', 'webhook_events', 'webhook_deliveries', 'operator_login_tokens', 'operator_sessions', 'replay_horizon'];

/** The API's migration list as it was before the split (frozen copies in test/fixtures), up to `last`. */
function preSplitMigrations(last: string): Record<string, Migration> {
  const all: Record<string, Migration> = {
    '0001_auth': old0001,
    '0002_core': old0002,
    '0003_loans': old0003,
    '0004_production': old0004,
    '0005_drop_unused_chain_index': m0005,
    '0006_end_of_day': old0006,
    '0007_webhooks': m0007,
    '0008_operator_sessions': m0008,
    '0009_fapi2': m0009,
    '0010_sandbox_scenarios': m0010,
    '0011_client_tokens_not_before': m0011,
    '0012_replay_records_unsynced': m0012,
    '0013_replay_generations': m0013,
  };
  return Object.fromEntries(Object.entries(all).filter(([name]) => name <= last));
}

async function migratePreSplit(store: Store, last: string): Promise<void> {
  const migrator = new Migrator({ db: store.db, provider: { getMigrations: async () => preSplitMigrations(last) } });
  const { error } = await migrator.migrateToLatest();
  if (error) throw error;
}

/** Every table of this database's own schema with its columns (name:type, sorted), and its indexes' names. */
async function schemaOf(store: Store): Promise<{ tables: Record<string, string[]>; indexes: string[] }> {
  const tables: Record<string, string[]> = {};
  let indexes: string[];
  if (store.dialect === 'postgres') {
    const { rows } = await sql<{ table_name: string; column_name: string; data_type: string; is_nullable: string; column_default: string | null }>`select table_name, column_name, data_type, is_nullable, column_default from information_schema.columns where table_schema = current_schema()`.execute(store.db);
    for (const row of rows) (tables[row.table_name] ??= []).push(`${row.column_name}:${row.data_type}:${row.is_nullable}:${row.column_default ?? ''}`);
    indexes = (await sql<{ indexname: string }>`select indexname from pg_indexes where schemaname = current_schema()`.execute(store.db)).rows.map((row) => row.indexname);
  } else {
    const names = (await sql<{ name: string }>`select name from sqlite_master where type = 'table' and name not like 'sqlite_%'`.execute(store.db)).rows.map((row) => row.name);
    for (const name of names) {
      const { rows } = await sql<{ name: string; type: string; notnull: number; dflt_value: string | null }>`select name, type, "notnull", dflt_value from pragma_table_info(${name})`.execute(store.db);
      tables[name] = rows.map((row) => `${row.name}:${row.type}:${row.notnull}:${row.dflt_value ?? ''}`);
    }
    indexes = (await sql<{ name: string }>`select name from sqlite_master where type = 'index' and name not like 'sqlite_%'`.execute(store.db)).rows.map((row) => row.name);
  }
  for (const columns of Object.values(tables)) columns.sort();
  // The bookkeeping differs by design: the old database's migrator recorded the core's old names in its own table.
  for (const bookkeeping of ['kysely_migration', 'kysely_migration_lock', 'core_migration', 'core_migration_lock']) delete tables[bookkeeping];
  return { tables: Object.fromEntries(Object.entries(tables).sort(([a], [b]) => a.localeCompare(b))), indexes: indexes.filter((name) => !name.includes('migration')).sort() };
}

/** Core records as the pre-split schema held them: a customer, an account with its opening posting, a loan with one paid and one open installment, the business date and calendar in `settings`. */
async function insertPreSplitCoreRecords(store: Store, withInstallmentStatus: boolean): Promise<void> {
  await sql`insert into settings (name, value) values ('core.business_date', '2026-03-02'), ('core.calendar', '{"weekend":["SATURDAY","SUNDAY"],"holidays":[]}'), ('audit.chain_head', 'kept')`.execute(store.db);
  await sql`insert into directory_users (login, status) values ('jdoe', 'Active')`.execute(store.db);
  await sql`insert into customers (customer_reference, name, status) values ('C1', 'Ada', 'Active')`.execute(store.db);
  await sql`insert into accounts (account_number, customer_reference, currency, status, kind, balance_minor, created_at) values ('A1', 'C1', 'MXN', 'Active', 'customer', 125050, '2026-03-01T00:00:00Z'), ('L1', 'C1', 'MXN', 'Active', 'loan', 0, '2026-03-01T00:00:00Z')`.execute(store.db);
  await sql`insert into movements (id, reference, kind, business_date, created_at) values ('m1', 'opening-A1', 'opening_balance', '2026-03-01', '2026-03-01T00:00:00Z')`.execute(store.db);
  await sql`insert into postings (movement_id, line, account_number, amount_minor, currency) values ('m1', 1, 'A1', 125050, 'MXN')`.execute(store.db);
  await sql`insert into loan_facilities (loan_id, customer_reference, loan_type, parameter_type, currency, approved_limit_minor, executed_total_minor, status, final_maturity_date, fixed_fee_minor, commission_rate, minimum_commission_minor, tax_rate) values ('L1', 'C1', 'MERCH', 'FIXED', 'MXN', 1000000, 0, 'Active', '2027-03-01', 0, '0.0015', 0, '0.16')`.execute(store.db);
  if (withInstallmentStatus) {
    await sql`insert into loan_installments (loan_id, sequence, due_date, amount_minor, paid_minor, status) values ('L1', 1, '2026-04-01', 5000, 5000, 'Paid'), ('L1', 2, '2026-05-01', 5000, 0, 'Pending')`.execute(store.db);
  } else {
    await sql`insert into loan_installments (loan_id, sequence, due_date, amount_minor, paid_minor) values ('L1', 1, '2026-04-01', 5000, 5000), ('L1', 2, '2026-05-01', 5000, 0)`.execute(store.db);
  }
}

for (const target of storeTargets) {
  describe(`the reference core's own migrations (issue 25) [${target.name}]`, { skip: target.skip }, () => {
    async function withEmptyStore(work: (store: Store) => Promise<void>): Promise<void> {
      const created = await target.create({ empty: true });
      const store = await openStore(created.url);
      try {
        await work(store);
      } finally {
        await store.close();
        await created.drop();
      }
    }

    test('the API\'s migrations create the API\'s tables and none of the core\'s (an API with --core-url holds no copy of the core\'s records)', async () => {
      await withEmptyStore(async (store) => {
        await migrateToLatest(store);
        for (const table of apiTables) assert.ok(await tableExists(store, table), `${table} is the API's`);
        for (const table of coreTables) assert.equal(await tableExists(store, table), false, `${table} is the core's, not made by the API's migrations`);
        assert.equal(await tableExists(store, 'core_migration'), false);
      });
    });

    test('the core\'s migrations create the core\'s tables alone, recorded in core_migration, and run once', async () => {
      await withEmptyStore(async (store) => {
        assert.deepEqual(await migrateCoreToLatest(store), ['0001_core_tables']);
        assert.deepEqual(await migrateCoreToLatest(store), [], 'a second run applies none');
        for (const table of coreTables) assert.ok(await tableExists(store, table), `${table} is the core's`);
        for (const table of apiTables) assert.equal(await tableExists(store, table), false, `${table} is the API's, not made by the core's migrations`);
        const recorded = await sql<{ name: string }>`select name from core_migration`.execute(store.db);
        assert.deepEqual(recorded.rows.map((row) => row.name), ['0001_core_tables']);
      });
    });

    test('both sets on one database (the embedded core) make the schema the pre-split migrations made', async () => {
      let split: Awaited<ReturnType<typeof schemaOf>> | undefined;
      await withEmptyStore(async (store) => {
        await migrateToLatest(store);
        await migrateCoreToLatest(store);
        split = await schemaOf(store);
      });
      await withEmptyStore(async (store) => {
        await migratePreSplit(store, '0013_replay_generations');
        await migrateCoreToLatest(store);
        assert.deepEqual(await schemaOf(store), split);
      });
    });

    for (const last of ['0008_operator_sessions', '0005_drop_unused_chain_index']) {
      test(`a restart never resets money (docs/sandbox.md, "The data file"): a database the pre-split migrations prepared up to ${last}, with core records, upgrades: nothing lost, the business date moves to core_settings, the schema is a new database's`, async () => {
        let fresh: Awaited<ReturnType<typeof schemaOf>> | undefined;
        await withEmptyStore(async (store) => {
          await migrateToLatest(store);
          await migrateCoreToLatest(store);
          fresh = await schemaOf(store);
        });
        await withEmptyStore(async (store) => {
          await migratePreSplit(store, last);
          await insertPreSplitCoreRecords(store, last >= '0006');
          await migrateToLatest(store);
          assert.deepEqual(await migrateCoreToLatest(store), ['0001_core_tables']);
          assert.deepEqual(await schemaOf(store), fresh, 'the same schema as a new database');
          const accounts = await sql<{ account_number: string; balance_minor: string | number }>`select account_number, balance_minor from accounts order by account_number`.execute(store.db);
          assert.deepEqual(accounts.rows.map((row) => [row.account_number, Number(row.balance_minor)]), [['A1', 125050], ['L1', 0]]);
          const postings = await sql<{ amount_minor: string | number }>`select amount_minor from postings`.execute(store.db);
          assert.deepEqual(postings.rows.map((row) => Number(row.amount_minor)), [125050]);
          const installments = await sql<{ sequence: number; status: string }>`select sequence, status from loan_installments order by sequence`.execute(store.db);
          assert.deepEqual(installments.rows.map((row) => [Number(row.sequence), row.status]), [[1, 'Paid'], [2, 'Pending']], 'installment status (0006\'s) present, paid ones Paid');
          const coreSettings = await sql<{ name: string; value: string }>`select name, value from core_settings order by name`.execute(store.db);
          assert.deepEqual(coreSettings.rows.map((row) => [row.name, row.value]), [['core.business_date', '2026-03-02'], ['core.calendar', '{"weekend":["SATURDAY","SUNDAY"],"holidays":[]}']]);
          const apiSettings = await sql<{ name: string }>`select name from settings order by name`.execute(store.db);
          assert.deepEqual(apiSettings.rows.map((row) => row.name), ['audit.chain_head'], 'the API\'s settings keep theirs, and no longer hold the core\'s');
          const users = await sql<{ login: string }>`select login from directory_users`.execute(store.db);
          assert.deepEqual(users.rows.map((row) => row.login), ['jdoe']);
        });
      });
    }
  });
}
