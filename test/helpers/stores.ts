/**
 * The stores every store-backed suite runs on: a fresh SQLite file, and a fresh PostgreSQL
 * database with a random name (dropped afterwards). PostgreSQL is required when CI=true; on a
 * machine without it the PostgreSQL suites skip with a message saying so.
 *
 * A store is created migrated: scripts/test.mjs migrates one template of each kind once per run
 * (docs/testing.md) and names them in COREGATE_TEST_PG_TEMPLATE and COREGATE_TEST_SQLITE_TEMPLATE;
 * a suite's store is a copy (CREATE DATABASE ... TEMPLATE, a file copy), on which the server's
 * migrations at start are no-ops. Migrating costs each store about a second; copying, a tenth.
 * A file run on its own (`npx tsx --test`) has no template: its stores start empty and are
 * migrated when opened, as before. `{ empty: true }` asks for an empty store whatever the run.
 */
import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Kysely } from 'kysely';
import pg from 'pg';
import { openStore, type Store } from '../../src/store/connect.js';
import type { Database } from '../../src/store/schema.js';
import type { CoreTables } from '../../src/reference-core/storage/core-schema.js';

export const postgresAdminUrl = process.env.COREGATE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const required = process.env.CI === 'true';

export interface CreateOptions {
  /** An empty store, not a copy of the run's migrated template (tests of the migrations themselves). */
  empty?: boolean;
}

export interface StoreTarget {
  name: 'sqlite' | 'postgres';
  /** A reason to skip, or undefined. */
  skip: string | undefined;
  /** Creates a store (a copy of the run's migrated template when there is one); answers its URL and how to drop it. */
  create(options?: CreateOptions): Promise<{ url: string; drop(): Promise<void> }>;
}

/** The run's migrated templates (set by scripts/test.mjs); absent when a file runs on its own. */
const sqliteTemplate = process.env.COREGATE_TEST_SQLITE_TEMPLATE || undefined;
const postgresTemplate = process.env.COREGATE_TEST_PG_TEMPLATE || undefined;
/**
 * A suite database's name carries the run's id (scripts/test.mjs; the process's start time when a
 * file runs on its own): the script drops the databases of runs over an hour old, which a killed
 * run left behind, and never those of a run still going.
 */
const runId = process.env.COREGATE_TEST_RUN_ID || `${Math.floor(Date.now() / 1000)}`;

/**
 * The connections to the PostgreSQL server's admin database, kept for the file's next statement:
 * a file creates and drops a database per suite, and a new session cost the server ~5 ms of CPU
 * each time (two per database, and one more per file to see the server answer). Idle for a second,
 * a connection is closed; an idle one never keeps the process alive (allowExitOnIdle). Sessions on
 * the admin database are never counted or cut by a test: those are on the suite's own database.
 */
let adminPool: pg.Pool | undefined;
function admin(): pg.Pool {
  if (adminPool === undefined) {
    // A busy machine (CI's, with four test files starting at once) can take seconds to connect.
    adminPool = new pg.Pool({ connectionString: postgresAdminUrl, max: 4, idleTimeoutMillis: 1_000, allowExitOnIdle: true, connectionTimeoutMillis: 15_000 });
    // An idle connection the server ended: the next statement gets a new one.
    adminPool.on('error', () => {});
  }
  return adminPool;
}

/**
 * One statement on the PostgreSQL server's admin database (creating and dropping databases,
 * cutting sessions, altering a database's settings); answers its rows.
 */
export async function adminQuery<Row = Record<string, unknown>>(text: string, values: unknown[] = []): Promise<Row[]> {
  return (await admin().query(text, values)).rows as Row[];
}

async function postgresReachable(): Promise<string | undefined> {
  let failure: Error | undefined;
  // A server that is not there refuses at once; a busy machine (CI's, with four test files
  // starting at once) can take seconds to connect, so the wait is long and tried twice.
  for (let attempt = 0; attempt < 2; attempt += 1) {
    try {
      await adminQuery('select 1');
      return undefined;
    } catch (error) {
      failure = error as Error;
    }
  }
  const reason = `PostgreSQL not reachable at ${postgresAdminUrl} (${failure?.message})`;
  if (required) throw new Error(`${reason}: CI=true requires the PostgreSQL suite`);
  console.warn(`# skipping PostgreSQL suites: ${reason}; set COREGATE_TEST_PG_URL or start PostgreSQL`);
  return reason;
}

const sqlite: StoreTarget = {
  name: 'sqlite',
  // SQLite serves one instance (README): the two-instances deployment runs on PostgreSQL only.
  skip: process.env.COREGATE_TEST_DEPLOYMENT === 'two-instances' ? 'two instances need PostgreSQL; SQLite serves one instance' : undefined,
  async create(options = {}) {
    const dir = mkdtempSync(join(tmpdir(), 'coregate-test-'));
    const file = join(dir, 'coregate.db');
    if (sqliteTemplate && !options.empty) {
      // The template was closed cleanly (its write-ahead log checkpointed and removed), so the
      // database file is the whole store; a log left beside it is copied too.
      copyFileSync(sqliteTemplate, file);
      if (existsSync(`${sqliteTemplate}-wal`)) copyFileSync(`${sqliteTemplate}-wal`, `${file}-wal`);
    }
    return { url: `sqlite:${file}`, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  },
};

const postgres: StoreTarget = {
  name: 'postgres',
  skip: await postgresReachable(),
  async create(options = {}) {
    const name = `coregate_test_r${runId}_${randomBytes(6).toString('hex')}`;
    await createDatabase(name, options.empty ? undefined : postgresTemplate);
    const url = new URL(postgresAdminUrl);
    url.pathname = `/${name}`;
    suiteDatabases.add(url.toString());
    return {
      url: url.toString(),
      drop: async () => {
        suiteDatabases.delete(url.toString());
        await closeProbeStore(url.toString());
        await adminQuery(`drop database if exists ${name} with (force)`);
      },
    };
  },
};

/**
 * CREATE DATABASE, from `template` when given. PostgreSQL refuses to copy a database another
 * session is connected to (55006, "source database ... is being accessed by other users"): no test
 * connects to the template (it does not allow connections), but an autovacuum worker may be
 * finishing in it, so that refusal is tried again a few times. Copies of one template run
 * concurrently without waiting on each other.
 */
async function createDatabase(name: string, template: string | undefined): Promise<void> {
  const text = template ? `create database ${name} template ${template}` : `create database ${name}`;
  for (let attempt = 1; ; attempt += 1) {
    try {
      await adminQuery(text);
      return;
    } catch (error) {
      if ((error as { code?: string }).code !== '55006' || attempt >= 20) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
    }
  }
}


export const storeTargets: StoreTarget[] = [sqlite, postgres];

/** A new store of `target` for `work` (migrated, unless `empty`), dropped afterwards whatever happens. */
export async function withCreatedStore<T>(target: StoreTarget, work: (url: string) => Promise<T>, options: CreateOptions = {}): Promise<T> {
  const created = await target.create(options);
  try {
    return await work(created.url);
  } finally {
    await created.drop();
  }
}

/**
 * Runs `work` on a suite's store opened on connections of its own (as `coregate check`, an operator
 * or an intruder would, beside the running server). A SQLite store is opened for the call and
 * closed after it. A database `postgres.create()` made is read through a probe store (below),
 * kept open between calls; any other PostgreSQL URL (a test's own server, a failover's standby) is
 * opened for the call, as SQLite's.
 */
export async function withStore<T>(dbUrl: string, work: (store: Store) => Promise<T>): Promise<T> {
  return suiteDatabases.has(dbUrl) ? withProbeStore(dbUrl, work) : withOwnStore(dbUrl, work);
}

/**
 * The probe stores: one open store per PostgreSQL database that tests read and write beside its
 * server (withStore, withDb). Opening one for each call cost a new PostgreSQL session each time
 * (~20 ms of the server's CPU to start, and its catalog caches warmed again on the first
 * statements): a loan suite opened ~300 sessions, most of them for one statement. A probe store is
 * closed a second after its last use ends (so that a file's process ends without waiting for it:
 * an open pool keeps it alive), when its database is dropped (`drop()` above), or by
 * `closeProbeStores` (a test that counts a database's sessions).
 */
interface Probe {
  store: Promise<Store>;
  inUse: boolean;
  idle?: NodeJS.Timeout | undefined;
}
const probeStores = new Map<string, Probe>();
/** The URLs of the databases `postgres.create()` made and has not dropped yet. */
const suiteDatabases = new Set<string>();
const probeIdleMs = 1_000;

async function withProbeStore<T>(dbUrl: string, work: (store: Store) => Promise<T>): Promise<T> {
  let probe = probeStores.get(dbUrl);
  // A call made while the probe store is in use (a test holding two stores, as two instances would)
  // gets a store of its own, as every call did before.
  if (probe?.inUse) return withOwnStore(dbUrl, work);
  if (probe === undefined) {
    const opened = openStore(dbUrl);
    probe = { store: opened, inUse: false };
    probeStores.set(dbUrl, probe);
    opened.catch(() => probeStores.delete(dbUrl));
  }
  clearTimeout(probe.idle);
  probe.inUse = true;
  try {
    return await work(await probe.store);
  } finally {
    probe.inUse = false;
    if (probeStores.get(dbUrl) === probe) probe.idle = setTimeout(() => void closeProbeStore(dbUrl), probeIdleMs);
  }
}

async function withOwnStore<T>(dbUrl: string, work: (store: Store) => Promise<T>): Promise<T> {
  const store = await openStore(dbUrl);
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}

async function closeProbeStore(dbUrl: string): Promise<void> {
  const probe = probeStores.get(dbUrl);
  if (probe === undefined) return;
  probeStores.delete(dbUrl);
  clearTimeout(probe.idle);
  await (await probe.store.catch(() => undefined))?.close();
}

/** Closes every probe store: their sessions no longer count among a database's. */
export async function closeProbeStores(): Promise<void> {
  await Promise.all([...probeStores.keys()].map(closeProbeStore));
}

/**
 * The tables of a database that an embedded core shares with the API: the API's and the core's.
 * The service's own types keep them apart (the API's store sees its tables only, the core its own:
 * src/reference-core/storage/core-db.ts); a test reads both to check what an operation left.
 */
export type EmbeddedTables = Database & CoreTables;

/** A store's handle typed over both sides' tables (the same object: Kysely names tables by string). */
export function embedded(db: Kysely<Database>): Kysely<EmbeddedTables> {
  return db as unknown as Kysely<EmbeddedTables>;
}

/** withStore, for work that needs only the Kysely handle (both sides' tables: a test checks what either wrote). */
export function withDb<T>(dbUrl: string, work: (db: Kysely<EmbeddedTables>) => Promise<T>): Promise<T> {
  return withStore(dbUrl, (store) => work(embedded(store.db)));
}
