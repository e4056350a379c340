/**
 * Group commit on SQLite (src/store/engine/commit-group.ts): units of work that arrive together share
 * one commit; a unit that fails rolls back alone; nobody is answered before the commit that
 * holds their work, which another connection can then read.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import SqliteDatabase from 'better-sqlite3';
import { sql } from 'kysely';
import { CommitGroup } from '../../src/store/engine/commit-group.js';
import { RootQueries } from '../../src/store/engine/root-queries.js';
import type { UnitOfWork } from '../../src/store/engine/unit-of-work.js';
import { openStore } from '../../src/store/connect.js';
import { DurableSqliteDialect } from '../../src/store/engine/sqlite-driver.js';
import { withStatementCache } from '../../src/store/engine/statement-cache.js';

interface Db {
  items: { name: string };
}

const dir = mkdtempSync(join(tmpdir(), 'coregate-commit-group-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function open(name: string) {
  const path = join(dir, `${name}.db`);
  const statements: string[] = [];
  const database = new SqliteDatabase(path, { verbose: (text) => statements.push(String(text)) });
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = FULL');
  database.exec('create table items (name text primary key)');
  // As the store opens it (connect.ts): the writer and a reader beside it.
  const readConnection = new SqliteDatabase(path);
  readConnection.pragma('query_only = 1');
  const dialect = new DurableSqliteDialect({ writer: withStatementCache(database), reader: withStatementCache(readConnection), fileLockWaitMs: 5_000 });
  const db = new RootQueries<Db>(dialect);
  // Another connection, as another process would read the file.
  const reader = new SqliteDatabase(path, { readonly: true });
  const committed = () => (reader.prepare('select name from items order by name').all() as Array<{ name: string }>).map((row) => row.name);
  const commits = () => statements.filter((text) => text === 'commit').length;
  return { db, committed, commits, close: async () => { reader.close(); await db.destroy(); } };
}

test('units of work that arrive together share one commit (not one fsync each)', async () => {
  const store = open('shared');
  const group = new CommitGroup(store.db);
  const before = store.commits();
  await Promise.all(Array.from({ length: 20 }, (_, i) => group.run((trx) => trx.insertInto('items').values({ name: `n${i}` }).execute())));
  assert.equal(store.committed().length, 20);
  assert.ok(store.commits() - before <= 2, `20 units in at most 2 commits, got ${store.commits() - before}`);
  await store.close();
});

test('a unit that fails rolls back alone: the others of its group commit, it is answered with its own error', async () => {
  const store = open('savepoints');
  const group = new CommitGroup(store.db);
  const insert = (name: string) => (trx: UnitOfWork<Db>) => trx.insertInto('items').values({ name }).execute();
  const outcomes = await Promise.allSettled([
    group.run(insert('a')),
    group.run(async (trx) => {
      await insert('b')(trx);
      throw new Error('refused after writing');
    }),
    group.run(insert('a')), // a duplicate key: fails at the statement
    group.run(insert('c')),
  ]);
  assert.deepEqual(outcomes.map((outcome) => outcome.status), ['fulfilled', 'rejected', 'rejected', 'fulfilled']);
  assert.match(String((outcomes[1] as PromiseRejectedResult).reason), /refused after writing/);
  assert.deepEqual(store.committed(), ['a', 'c'], 'nothing of the failed units remains');
  await store.close();
});

test('a unit is answered only after the commit that holds it: another connection reads it at once', async () => {
  const store = open('durable');
  const group = new CommitGroup(store.db);
  const seen = await Promise.all(
    Array.from({ length: 5 }, (_, i) =>
      group
        .run((trx) => trx.insertInto('items').values({ name: `d${i}` }).execute())
        .then(() => store.committed().includes(`d${i}`)),
    ),
  );
  assert.deepEqual(seen, [true, true, true, true, true]);
  await store.close();
});

test('every SQLite transaction begins immediate: it holds the write lock from its first statement', async () => {
  const store = open('immediate');
  await store.db.transaction().execute(async (trx) => {
    const rows = await sql<{ name: string }>`select name from items`.execute(trx);
    assert.equal(rows.rows.length, 0);
  });
  const writer = new SqliteDatabase(join(dir, 'immediate.db'), { timeout: 0 });
  await store.db.transaction().execute(async () => {
    // While coregate's transaction is open, another writer cannot start one: the lock is taken.
    assert.throws(() => writer.prepare('begin immediate').run(), /locked|busy/i);
  });
  writer.close();
  await store.close();
});

test('the embedded store syncs its write-ahead log in every commit: synchronous=FULL in WAL mode, no checkpoint in a commit', async () => {
  const store = await openStore(`sqlite:${join(dir, 'durability.db')}`);
  try {
    const { rows } = await sql<{ synchronous: number }>`pragma synchronous`.execute(store.db);
    assert.equal(rows[0]?.synchronous, 2, 'FULL: SQLite syncs the log before a commit returns, so an acknowledged write survives a power loss');
    const { rows: mode } = await sql<{ journal_mode: string }>`pragma journal_mode`.execute(store.db);
    assert.equal(mode[0]?.journal_mode, 'wal');
  } finally {
    await store.close();
  }
});

/** The writer's safety level inside a unit of work: 2 FULL (its commit syncs the log), 1 NORMAL (it does not). */
async function synchronousIn(trx: UnitOfWork<Db>): Promise<number | undefined> {
  const { rows } = await sql<{ synchronous: number }>`pragma synchronous`.execute(trx);
  return rows[0]?.synchronous;
}

test('issue 42: a group whose every unit asks for no sync commits without one (synchronous=NORMAL for that transaction alone); one synced unit syncs the group', async () => {
  const store = open('unsynced');
  const group = new CommitGroup(store.db);
  const unsynced = await Promise.all(Array.from({ length: 3 }, (_, i) => group.run(async (trx) => (await trx.insertInto('items').values({ name: `u${i}` }).execute(), synchronousIn(trx)), { synced: false })));
  assert.deepEqual(unsynced, [1, 1, 1]);
  const mixed = await Promise.all([
    group.run(async (trx) => (await trx.insertInto('items').values({ name: 'm1' }).execute(), synchronousIn(trx)), { synced: false }),
    group.run(async (trx) => (await trx.insertInto('items').values({ name: 'm2' }).execute(), synchronousIn(trx))),
  ]);
  assert.deepEqual(mixed, [2, 2], 'a synced unit keeps its sync, and the unsynced one shares it');
  assert.equal(await group.run(synchronousIn), 2, 'the next transaction is synced again');
  const { rows } = await sql<{ synchronous: number }>`pragma synchronous`.execute(store.db);
  assert.equal(rows[0]?.synchronous, 2, 'and so is a statement outside any transaction');
  assert.deepEqual(store.committed(), ['m1', 'm2', 'u0', 'u1', 'u2']);
  await store.close();
});

test('issue 42: an unsynced transaction that fails, or that cannot begin, leaves the writer synced for the next one', async () => {
  const store = open('unsynced-failures');
  const group = new CommitGroup(store.db);
  await assert.rejects(
    group.run(async (trx) => {
      await trx.insertInto('items').values({ name: 'x' }).execute();
      throw new Error('refused after writing');
    }, { synced: false }),
    /refused after writing/,
  );
  assert.equal(await group.run(synchronousIn), 2);
  // Another connection holds the file's write lock past the wait: BEGIN fails.
  const path = join(dir, 'unsynced-failures.db');
  const impatient = new RootQueries<Db>(new DurableSqliteDialect({ writer: withStatementCache(new SqliteDatabase(path)), fileLockWaitMs: 0 }));
  const other = new SqliteDatabase(path);
  other.prepare('begin immediate').run();
  await assert.rejects(impatient.inUnitOfWork(async () => undefined, { synced: false }), /locked|busy/i);
  other.prepare('rollback').run();
  other.close();
  assert.equal(await impatient.inUnitOfWork(synchronousIn), 2);
  await impatient.destroy();
  assert.deepEqual(store.committed(), []);
  await store.close();
});
