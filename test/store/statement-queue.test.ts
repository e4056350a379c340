/**
 * Statements issued together in a transaction travel together (src/store/engine/statement-queue.ts,
 * src/store/engine/postgres-driver.ts): on PostgreSQL in one socket write, one round trip; on both
 * stores they run in the order issued, each caller gets its own answer, and a failure among
 * them rolls the whole transaction back. Outside transactions, on PostgreSQL, statements issued in
 * the same turn leave together too, each its own transaction.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { test } from 'node:test';
import { sql, type Kysely } from 'kysely';
import { preparedInsert, preparedQuery } from '../../src/store/engine/prepared-query.js';
import { deferWrite } from '../../src/store/engine/unit-of-work.js';
import type { Store } from '../../src/store/connect.js';
import type { Queryable } from '../../src/store/queryable.js';
import { storeTargets, withCreatedStore, withStore, type StoreTarget } from '../helpers/stores.js';

interface Item extends Record<string, unknown> {
  name: string;
  qty: number;
}

/** A new store of `target` with an `items` table, for `work`; dropped afterwards. */
function withItems(target: StoreTarget, work: (store: Store) => Promise<void>, urlOf = (url: string) => url): Promise<void> {
  return withCreatedStore(target, (url) =>
    withStore(urlOf(url), async (store) => {
      await sql`create table items (name varchar(16) primary key, qty integer not null)`.execute(store.db);
      await work(store);
    }),
  );
}

const scratch = (db: Queryable) => db as unknown as Kysely<{ items: Item }>;
const insertItem = preparedInsert<Item>(['name', 'qty'], (db, rows) => scratch(db).insertInto('items').values(rows));
const itemByName = preparedQuery((db, name: string) => scratch(db).selectFrom('items').selectAll().where('name', '=', name));
const addQty = preparedQuery((db, qty: number, name: string) => scratch(db).updateTable('items').set((eb) => ({ qty: eb('qty', '+', qty) })).where('name', '=', name));

for (const target of storeTargets) {
  test(`statements started together run in the order issued, each answered on its own [${target.name}]`, { skip: target.skip }, async () => {
    await withItems(target, async (store) => {
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
  });

  test(`a statement that fails among others started together rolls the whole transaction back [${target.name}]`, { skip: target.skip }, async () => {
    await withItems(target, async (store) => {
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
  });

  test(`a deferred write lets its caller go on, and its failure fails the unit of work with its own error (one atomic transaction: docs/architecture.md, "One transaction with the embedded core") [${target.name}]`, { skip: target.skip }, async () => {
    await withItems(target, async (store) => {
      await insertItem.execute(store.db, { name: 'taken', qty: 0 });
      // Two units: the statements run twice on a connection, so the second time they are parsed (one-Sync batches).
      for (const round of [1, 2]) {
        let wentOn = false;
        await assert.rejects(
          store.transaction(async (trx) => {
            await deferWrite(trx, async () => {
              await insertItem.execute(trx, { name: `new${round}`, qty: 1 });
              await insertItem.execute(trx, { name: 'taken', qty: 1 });
            });
            wentOn = true;
            // Issued after the failing write: on PostgreSQL it fails too (the transaction is aborted).
            await addQty.execute(trx, 5, 'taken');
            return 'done';
          }),
          (error: { code?: string }) => error.code === '23505' || error.code === 'SQLITE_CONSTRAINT_PRIMARYKEY',
        );
        // On SQLite, where a statement is a call, a deferred write simply runs: its failure is thrown at once.
        assert.equal(wentOn, target.name === 'postgres', 'on PostgreSQL the caller went on past the deferred write');
        assert.equal(await itemByName.first(store.db, `new${round}`), undefined, 'the deferred write\'s first statement was rolled back');
        assert.deepEqual(await itemByName.first(store.db, 'taken'), { name: 'taken', qty: 0 }, 'nothing after it stayed');
      }
      // A deferred write that succeeds commits with its unit, and statements after it see it.
      const seen = await store.transaction(async (trx) => {
        await deferWrite(trx, async () => {
          await insertItem.execute(trx, { name: 'later', qty: 2 });
        });
        return itemByName.first(trx, 'later');
      });
      assert.deepEqual(seen, { name: 'later', qty: 2 });
      assert.deepEqual(await itemByName.first(store.db, 'later'), { name: 'later', qty: 2 });
    });
  });
}

const postgres = storeTargets.find((target) => target.name === 'postgres')!;

test('on PostgreSQL, a statement still waiting to leave when its unit of work fails is never sent', { skip: postgres.skip }, async () => {
  await withItems(postgres, async (store) => {
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
});

test('on PostgreSQL, statements started together leave in one socket write (one round trip)', { skip: postgres.skip }, async () => {
  await withItems(postgres, async (store) => {
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
});

test('on PostgreSQL, statements outside transactions issued in the same turn leave in one socket write, each its own transaction: one that fails fails alone', { skip: postgres.skip }, async () => {
  await withItems(postgres, async (store) => {
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
});

test('on PostgreSQL, BEGIN leaves with a transaction\'s first statements, and if it fails none of them runs (one atomic transaction: docs/architecture.md, "One transaction with the embedded core")', { skip: postgres.skip }, async () => {
  await withItems(postgres, async (store) => {
    // Transactions one after another reuse the pool's last client: the first parses BEGIN and
    // the statements, the next ones hold BEGIN back and send it with their first batch.
    await store.transaction((trx) => insertItem.execute(trx, { name: 'a', qty: 1 }));
    await assert.rejects(
      store.transaction(async (trx) => {
        await Promise.all([insertItem.execute(trx, { name: 'b', qty: 1 }), addQty.execute(trx, 1, 'a')]);
        throw new Error('changed my mind');
      }),
      /changed my mind/,
    );
    assert.equal(await itemByName.first(store.db, 'b'), undefined, 'the statements sent with BEGIN were inside the transaction, rolled back');
    assert.deepEqual(await itemByName.first(store.db, 'a'), { name: 'a', qty: 1 });
    assert.equal(await store.transaction(async () => 'nothing sent'), 'nothing sent', 'a transaction that sends nothing commits nothing');

    // BEGIN made to fail: the server forgets the connection's prepared BEGIN while the client still counts it parsed.
    await store.transaction((trx) => sql`deallocate coregate_begin`.execute(trx));
    await assert.rejects(
      store.transaction((trx) => Promise.all([insertItem.execute(trx, { name: 'c', qty: 1 }), addQty.execute(trx, 100, 'a')])),
      /coregate_begin/,
    );
    assert.equal(await itemByName.first(store.db, 'c'), undefined, 'no statement ran without its BEGIN');
    assert.deepEqual(await itemByName.first(store.db, 'a'), { name: 'a', qty: 1 });
    // The connection whose statements no longer match the server was discarded; the next one works.
    await store.transaction((trx) => insertItem.execute(trx, { name: 'd', qty: 4 }));
    assert.deepEqual(await itemByName.first(store.db, 'd'), { name: 'd', qty: 4 });
  });
});

test('on PostgreSQL, reads outside transactions that leave together answer alone: one that fails does not fail the others', { skip: postgres.skip }, async () => {
  await withItems(postgres, async (store) => {
    await insertItem.execute(store.db, { name: 'a', qty: 12 });
    const ratio = preparedQuery((db, divisor: number) => scratch(db).selectFrom('items').select(sql<number>`qty / ${divisor}`.as('q')).where('name', '=', 'a'));
    // The first turns parse the statements on the lane's client; later turns send the reads with one Sync.
    for (const round of [1, 2, 3]) {
      const answers = await Promise.allSettled([itemByName.first(store.db, 'a'), ratio.first(store.db, 0), itemByName.first(store.db, 'nobody'), ratio.first(store.db, 4), addQty.execute(store.db, 0, 'a')]);
      assert.deepEqual(answers[0], { status: 'fulfilled', value: { name: 'a', qty: 12 } }, `round ${round}`);
      assert.equal(answers[1]!.status, 'rejected');
      assert.equal((answers[1] as PromiseRejectedResult).reason.code, '22012', 'the failing read answers its own error (division by zero)');
      assert.deepEqual(answers[2], { status: 'fulfilled', value: undefined });
      assert.deepEqual(answers[3], { status: 'fulfilled', value: { q: 3 } }, 'a read after the failing one still answers');
      assert.equal(answers[4]!.status, 'fulfilled');
    }
  });
});

test('on PostgreSQL, a statement sent after BEGIN\'s batch but before its answer waits for it: if BEGIN failed, it never runs', { skip: postgres.skip }, async () => {
  await withItems(postgres, async (store) => {
    await store.transaction((trx) => Promise.all([insertItem.execute(trx, { name: 'a', qty: 1 }), addQty.execute(trx, 0, 'a')]));
    await store.transaction((trx) => Promise.all([insertItem.execute(trx, { name: 'b', qty: 1 }), addQty.execute(trx, 0, 'b')]));
    await store.transaction((trx) => sql`deallocate coregate_begin`.execute(trx));
    await assert.rejects(
      store.transaction(async (trx) => {
        await deferWrite(trx, async () => {
          await insertItem.execute(trx, { name: 'c', qty: 1 });
        });
        // Other work: BEGIN's batch has left, its answer is not read yet.
        await new Promise((resolve) => setImmediate(resolve));
        await addQty.execute(trx, 100, 'a');
      }),
      /coregate_begin/,
    );
    assert.deepEqual(await itemByName.first(store.db, 'a'), { name: 'a', qty: 1 }, 'the statement after the failed BEGIN did not run on its own');
    assert.equal(await itemByName.first(store.db, 'c'), undefined);
  });
});

test('on PostgreSQL, with query_timeout set, one-Sync batches end as pg queries do: the connection outlives the timeout', { skip: postgres.skip }, async () => {
  const withQueryTimeout = (url: string) => {
    const withTimeout = new URL(url);
    withTimeout.searchParams.set('query_timeout', '300');
    return withTimeout.toString();
  };
  await withItems(
    postgres,
    async (store) => {
      for (const name of ['a', 'b', 'c']) await store.transaction((trx) => Promise.all([insertItem.execute(trx, { name, qty: 1 }), addQty.execute(trx, 1, name)]));
      // Longer than the timeout: a batch's timer left running would end this connection meanwhile.
      const value = await store.transaction(async (trx) => {
        await Promise.all([addQty.execute(trx, 1, 'a'), addQty.execute(trx, 1, 'b')]);
        await new Promise((resolve) => setTimeout(resolve, 500));
        return itemByName.first(trx, 'a');
      });
      assert.deepEqual(value, { name: 'a', qty: 3 });
    },
    withQueryTimeout,
  );
});

test('on PostgreSQL, a COMMIT that the server answers with ROLLBACK fails the unit of work (nothing of it is acknowledged)', { skip: postgres.skip }, async () => {
  await withItems(postgres, async (store) => {
    await insertItem.execute(store.db, { name: 'taken', qty: 0 });
    // A failure the body swallows: the transaction is aborted, and the COMMIT must not pass for one.
    await assert.rejects(
      store.transaction(async (trx) => {
        await insertItem.execute(trx, { name: 'new', qty: 1 });
        await insertItem.execute(trx, { name: 'taken', qty: 1 }).catch(() => undefined);
        return 'looked fine';
      }),
      /ROLLBACK to COMMIT/,
    );
    assert.equal(await itemByName.first(store.db, 'new'), undefined);
  });
});
