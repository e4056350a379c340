/**
 * The engine's state lives on its objects (src/store/engine): a unit of work holds its own
 * statement queue, so a statement issued on it after it ended is refused instead of running on a
 * connection that serves someone else now; the root runs prepared queries straight on the
 * driver; a plain Kysely transaction (no unit of work) runs them through Kysely, deferring nothing.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql, type Kysely } from 'kysely';
import { preparedQuery } from '../../src/store/engine/prepared-query.js';
import { RootQueries } from '../../src/store/engine/root-queries.js';
import { UnitOfWork, deferWrite } from '../../src/store/engine/unit-of-work.js';
import { storeTargets, withStore } from '../helpers/stores.js';

interface Scratch {
  engine_scratch: { name: string };
}

// The scratch table is not in the application's schema: the builders are typed loosely here.
const scratchOf = (db: Kysely<unknown>) => db as unknown as Kysely<Scratch>;
const names = preparedQuery((db) => scratchOf(db).selectFrom('engine_scratch').select('name').orderBy('name'));
const insertName = preparedQuery((db, name: string) => scratchOf(db).insertInto('engine_scratch').values({ name }));

for (const target of storeTargets) {
  test(`a unit of work holds its own statement queue: a statement issued on it after it ended is refused, nothing of it runs [${target.name}]`, { skip: target.skip }, async () => {
    const created = await target.create();
    try {
      await withStore(created.url, async (store) => {
        await sql`create table engine_scratch (name varchar(64) primary key)`.execute(store.db);
        assert.ok(store.db instanceof RootQueries, 'the store\'s root is the engine\'s root query builder');
        let kept: UnitOfWork<unknown> | undefined;
        await store.transaction(async (unit) => {
          assert.ok(unit instanceof UnitOfWork, 'a unit of work is the engine\'s object, not a bare transaction');
          kept = unit as unknown as UnitOfWork<unknown>;
          await insertName.execute(unit, 'inside');
        });
        await assert.rejects(insertName.execute(kept as unknown as Kysely<unknown>, 'late'), /transaction of this statement has ended/);
        assert.deepEqual((await names.execute(store.db)).rows, [{ name: 'inside' }], 'the late statement never ran');
      });
    } finally {
      await created.drop();
    }
  });

  test(`outside a unit of work (a plain Kysely transaction, the root) a deferred write runs at once and prepared queries still answer [${target.name}]`, { skip: target.skip }, async () => {
    const created = await target.create();
    try {
      await withStore(created.url, async (store) => {
        await sql`create table engine_scratch (name varchar(64) primary key)`.execute(store.db);
        await store.db.transaction().execute(async (trx) => {
          let ran = false;
          await deferWrite(trx, async () => {
            await insertName.execute(trx, 'plain');
            ran = true;
          });
          assert.equal(ran, true, 'no unit of work: nothing to defer to');
        });
        await insertName.execute(store.db, 'root');
        assert.deepEqual((await names.execute(store.db)).rows, [{ name: 'plain' }, { name: 'root' }]);
      });
    } finally {
      await created.drop();
    }
  });
}
