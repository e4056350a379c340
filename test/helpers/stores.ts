/**
 * The stores every store-backed suite runs on: a fresh SQLite file, and a fresh PostgreSQL
 * database with a random name (dropped afterwards). PostgreSQL is required when CI=true; on a
 * machine without it the PostgreSQL suites skip with a message saying so.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Kysely } from 'kysely';
import pg from 'pg';
import { openStore, type Store } from '../../src/store/connect.js';
import type { Database } from '../../src/store/schema.js';

export const postgresAdminUrl = process.env.COREGATE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const required = process.env.CI === 'true';

export interface StoreTarget {
  name: 'sqlite' | 'postgres';
  /** A reason to skip, or undefined. */
  skip: string | undefined;
  /** Creates an empty store; answers its URL and how to drop it. */
  create(): Promise<{ url: string; drop(): Promise<void> }>;
}

async function postgresReachable(): Promise<string | undefined> {
  let failure: Error | undefined;
  // A server that is not there refuses at once; a busy machine (CI's, with four test files
  // starting at once) can take seconds to connect, so the wait is long and tried twice.
  for (let attempt = 0; attempt < 2; attempt += 1) {
    const client = new pg.Client({ connectionString: postgresAdminUrl, connectionTimeoutMillis: 15_000 });
    try {
      await client.connect();
      await client.query('select 1');
      return undefined;
    } catch (error) {
      failure = error as Error;
    } finally {
      await client.end().catch(() => {});
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
  async create() {
    const dir = mkdtempSync(join(tmpdir(), 'coregate-test-'));
    return { url: `sqlite:${join(dir, 'coregate.db')}`, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  },
};

const postgres: StoreTarget = {
  name: 'postgres',
  skip: await postgresReachable(),
  async create() {
    const name = `coregate_test_${randomBytes(6).toString('hex')}`;
    await adminQuery(`create database ${name}`);
    const url = new URL(postgresAdminUrl);
    url.pathname = `/${name}`;
    return {
      url: url.toString(),
      drop: async () => {
        await adminQuery(`drop database if exists ${name} with (force)`);
      },
    };
  },
};

/**
 * One statement on a connection of its own to the PostgreSQL server's admin database (creating and
 * dropping databases, cutting sessions, altering a database's settings); answers its rows.
 */
export async function adminQuery<Row = Record<string, unknown>>(text: string, values: unknown[] = []): Promise<Row[]> {
  const client = new pg.Client({ connectionString: postgresAdminUrl });
  await client.connect();
  try {
    return (await client.query(text, values)).rows as Row[];
  } finally {
    await client.end();
  }
}

export const storeTargets: StoreTarget[] = [sqlite, postgres];

/** A new empty store of `target` for `work`, dropped afterwards whatever happens. */
export async function withCreatedStore<T>(target: StoreTarget, work: (url: string) => Promise<T>): Promise<T> {
  const created = await target.create();
  try {
    return await work(created.url);
  } finally {
    await created.drop();
  }
}

/**
 * Opens a suite's store on a connection of its own (as `coregate check`, an operator or an
 * intruder would, beside the running server), runs `work`, and always closes it.
 */
export async function withStore<T>(dbUrl: string, work: (store: Store) => Promise<T>): Promise<T> {
  const store = openStore(dbUrl);
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}

/** withStore, for work that needs only the Kysely handle. */
export function withDb<T>(dbUrl: string, work: (db: Kysely<Database>) => Promise<T>): Promise<T> {
  return withStore(dbUrl, (store) => work(store.db));
}
