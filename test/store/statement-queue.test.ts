/**
 * Statements issued together in a transaction travel together (src/store/statement-queue.ts,
 * src/store/postgres-driver.ts): on PostgreSQL in one socket write, one round trip; on both
 * stores they run in the order issued, each caller gets its own answer, and a failure among
 * them rolls the whole transaction back. Outside transactions, on PostgreSQL, statements issued in
 * the same turn leave together too, each its own transaction.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { test } from 'node:test';
import { sql, type Kysely } from 'kysely';
import { preparedInsert, preparedQuery } from '../../src/store/prepared-query.js';
import type { Queryable } from '../../src/store/realms.js';
import { storeTargets, withStore } from '../helpers/stores.js';

interface Item extends Record<string, unknown> {
  name: string;
  qty: number;
}

const scratch = (db: Queryable) => db as unknown as Kysely<{ items: Item }>;
const insertItem = preparedInsert<Item>(['name', 'qty'], (db, rows) => scratch(db).insertInto('items').values(rows));
const itemByName = preparedQuery((db, name: string) => scratch(db).selectFrom('items').selectAll().where('name', '=', name));
const addQty = preparedQuery((db, qty: number, name: string) => scratch(db).updateTable('items').set((eb) => ({ qty: eb('qty', '+', qty) })).where('name', '=', name));

for (const target of storeTargets) {
  test(`statements started together run in the order issued, each answered on its own [${target.name}]`, { skip: target.skip }, async () => {
    const created = await target.create();
    try {
      await withStore(created.url, async (store) => {
        await sql`create table items (name varchar(16) primary key, qty integer not null)`.execute(store.db);
        const answers = await store.transaction(async (trx) =>
          Promise.all([
            insertItem.execute(trx, { name: 'a', qty: 1 }),
            addQty.execute(trx, 10, 'a'),
            itemByName.first(trx, 'a'),
            addQty.execute(trx, 100, 'nobody'),
            itemByName.first(trx, 'nobody'),
          ]),
        );
        assert.equal(answers[1].numAffectedRows, 1n, 'the update ran after the insert it depends on');
        assert.deepEqual(answers[2], { name: 'a', qty: 11 }, 'the read ran after both writes');
        assert.equal(answers[3].numAffectedRows, 0n);
        assert.equal(answers[4], undefined);
        assert.deepEqual(await itemByName.first(store.db, 'a'), { name: 'a', qty: 11 });
      });
    } finally {
      await created.drop();
    }
  });

  test(`a statement that fails among others started together rolls the whole transaction back [${target.name}]`, { skip: target.skip }, async () => {
    const created = await target.create();
    try {
      await withStore(created.url, async (store) => {
        await sql`create table items (name varchar(16) primary key, qty integer not null)`.execute(store.db);
        await insertItem.execute(store.db, { name: 'taken', qty: 0 });
        await assert.rejects(
          store.transaction(async (trx) =>
            Promise.all([insertItem.execute(trx, { name: 'b', qty: 1 }), insertItem.execute(trx, { name: 'taken', qty: 1 }), addQty.execute(trx, 5, 'taken')]),
          ),
          (error: { code?: string }) => error.code === '23505' || error.code === 'SQLITE_CONSTRAINT_PRIMARYKEY',
        );
        assert.equal(await itemByName.first(store.db, 'b'), undefined, 'the statement before the failure was rolled back');
        assert.deepEqual(await itemByName.first(store.db, 'taken'), { name: 'taken', qty: 0 }, 'the statement after it changed nothing');
      });
    } finally {
      await created.drop();
    }
  });
}

const postgres = storeTargets.find((target) => target.name === 'postgres')!;

test('on PostgreSQL, a statement still waiting to leave when its unit of work fails is never sent', { skip: postgres.skip }, async () => {
  const created = await postgres.create();
  try {
    await withStore(created.url, async (store) => {
      await sql`create table items (name varchar(16) primary key, qty integer not null)`.execute(store.db);
      let orphan: Promise<unknown> | undefined;
      await assert.rejects(
        store.transaction(async (trx) => {
          orphan = insertItem.execute(trx, { name: 'orphan', qty: 1 });
          orphan.catch(() => undefined);
          throw new Error('the unit of work fails in the same turn');
        }),
        /fails in the same turn/,
      );
      const [outcome] = await Promise.allSettled([orphan]);
      assert.equal(outcome?.status, 'rejected');
      assert.match(String((outcome as PromiseRejectedResult).reason), /ended before it was sent/);
      // The connection went back to the pool clean: the statement ran neither in nor after the transaction.
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.equal(await itemByName.first(store.db, 'orphan'), undefined);
    });
  } finally {
    await created.drop();
  }
});

test('on PostgreSQL, statements started together leave in one socket write (one round trip)', { skip: postgres.skip }, async () => {
  const created = await postgres.create();
  try {
    await withStore(created.url, async (store) => {
      await sql`create table items (name varchar(16) primary key, qty integer not null)`.execute(store.db);
      await store.transaction(async (trx) => {
        const stream = await trx.getExecutor().provideConnection(async (connection) => (connection as unknown as { client: { connection: { stream: NodeJS.WritableStream & { _writev?: unknown } } } }).client.connection.stream);
        let writes = 0;
        const count = <A extends unknown[], R>(method: (...args: A) => R) =>
          function (this: unknown, ...args: A): R {
            writes += 1;
            return method.apply(this, args);
          };
        const socket = stream as unknown as { _write: (...args: unknown[]) => unknown; _writev: (...args: unknown[]) => unknown };
        const [write, writev] = [socket._write, socket._writev];
        socket._write = count(write);
        socket._writev = count(writev);
        try {
          const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => insertItem.execute(trx, { name: `n${i}`, qty: i })));
          assert.equal(answers.length, 6);
        } finally {
          socket._write = write;
          socket._writev = writev;
        }
        assert.equal(writes, 1, `six statements in ${writes} socket writes`);
      });
      const { rows } = await sql<{ n: string }>`select count(*) as n from items`.execute(store.db);
      assert.equal(Number(rows[0]?.n), 6);
    });
  } finally {
    await created.drop();
  }
});

test('on PostgreSQL, statements outside transactions issued in the same turn leave in one socket write, each its own transaction: one that fails fails alone', { skip: postgres.skip }, async () => {
  const created = await postgres.create();
  try {
    await withStore(created.url, async (store) => {
      await sql`create table items (name varchar(16) primary key, qty integer not null)`.execute(store.db);
      await insertItem.execute(store.db, { name: 'taken', qty: 7 });
      // Counted on every socket: only this store's connections write while the statements run.
      const socket = net.Socket.prototype as unknown as { _write: (...args: unknown[]) => unknown; _writev: (...args: unknown[]) => unknown };
      const [write, writev] = [socket._write, socket._writev];
      let writes = 0;
      socket._write = function (this: unknown, ...args: unknown[]) {
        writes += 1;
        return write.apply(this, args);
      };
      socket._writev = function (this: unknown, ...args: unknown[]) {
        writes += 1;
        return writev.apply(this, args);
      };
      let answers: PromiseSettledResult<unknown>[];
      try {
        answers = await Promise.allSettled([
          itemByName.first(store.db, 'taken'),
          insertItem.execute(store.db, { name: 'new', qty: 1 }),
          insertItem.execute(store.db, { name: 'taken', qty: 2 }),
          addQty.execute(store.db, 10, 'taken'),
          itemByName.first(store.db, 'nobody'),
        ]);
      } finally {
        socket._write = write;
        socket._writev = writev;
      }
      assert.equal(writes, 1, `five statements in ${writes} socket writes`);
      assert.deepEqual(answers[0], { status: 'fulfilled', value: { name: 'taken', qty: 7 } });
      assert.equal(answers[1]?.status, 'fulfilled');
      assert.equal(answers[2]?.status, 'rejected');
      assert.equal(((answers[2] as PromiseRejectedResult).reason as { code?: string }).code, '23505');
      assert.equal(answers[3]?.status, 'fulfilled', 'the statement after the failed one ran');
      assert.deepEqual(answers[4], { status: 'fulfilled', value: undefined });
      // Each committed on its own: the insert and the update stand beside the failure.
      assert.deepEqual(await itemByName.first(store.db, 'new'), { name: 'new', qty: 1 });
      assert.deepEqual(await itemByName.first(store.db, 'taken'), { name: 'taken', qty: 17 });
    });
  } finally {
    await created.drop();
  }
});
