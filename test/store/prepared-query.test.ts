/**
 * Prepared queries (src/store/engine/prepared-query.ts): built and compiled once per dialect, run with
 * new values each time, with the same results as the query builder; a builder that does more
 * with an argument than place it is refused when it is first compiled.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { preparedInsert, preparedQuery } from '../../src/store/engine/prepared-query.js';
import type { Queryable } from '../../src/store/queryable.js';
import { storeTargets, withStore } from '../helpers/stores.js';

interface Row extends Record<string, unknown> {
  name: string;
  status: string;
  note: string | null;
}

// The scratch table is not in the application's schema: the builders are typed loosely here.
const anyDb = (db: Queryable) => db as unknown as import('kysely').Kysely<{ scratch: Row }>;
const byName = preparedQuery((db, name: string) => anyDb(db).selectFrom('scratch').selectAll().where('name', '=', name));
const byStatusAndName = preparedQuery((db, name: string, status: string) =>
  anyDb(db).selectFrom('scratch').select('name').where('status', '=', status).where('name', '=', name).where('status', '<>', 'Gone'),
);
const rename = preparedQuery((db, from: string, to: string) => anyDb(db).updateTable('scratch').set({ name: to }).where('name', '=', from));
const insertRows = preparedInsert<Row>(['name', 'status', 'note'], (db, rows) => anyDb(db).insertInto('scratch').values(rows));

for (const target of storeTargets) {
  test(`prepared queries answer as the query builder does, with new values on every run [${target.name}]`, { skip: target.skip }, async () => {
    const created = await target.create();
    try {
      await withStore(created.url, async (store) => {
        await sql`create table scratch (name varchar(64) primary key, status varchar(16) not null, note varchar(64))`.execute(store.db);
        await insertRows.execute(store.db, { name: 'a', status: 'Active', note: null });
        await insertRows.executeRows(store.db, [
          { name: 'b', status: 'Blocked', note: 'x' },
          { name: 'c', status: 'Active', note: undefined as unknown as null },
        ]);
        assert.deepEqual(await byName.first(store.db, 'a'), { name: 'a', status: 'Active', note: null });
        assert.deepEqual(await byName.first(store.db, 'b'), { name: 'b', status: 'Blocked', note: 'x' });
        assert.deepEqual(await byName.first(store.db, 'c'), { name: 'c', status: 'Active', note: null }, 'a column left undefined is NULL');
        assert.equal(await byName.first(store.db, 'nobody'), undefined);
        assert.deepEqual(await byStatusAndName.first(store.db, 'b', 'Blocked'), { name: 'b' }, 'arguments bind in their order, constants stay');
        assert.equal(await byStatusAndName.first(store.db, 'b', 'Active'), undefined);
        // Inside a transaction: the same prepared query, the transaction's connection.
        await store.transaction(async (trx) => {
          const result = await rename.execute(trx, 'a', 'a2');
          assert.equal(result.numAffectedRows, 1n);
          assert.deepEqual(await byName.first(trx, 'a2'), { name: 'a2', status: 'Active', note: null });
        });
        assert.equal(await byName.first(store.db, 'a'), undefined);
        const builder = await anyDb(store.db).selectFrom('scratch').selectAll().orderBy('name').execute();
        assert.deepEqual(builder.map((row) => row.name), ['a2', 'b', 'c']);
      });
    } finally {
      await created.drop();
    }
  });
}

test('a builder that transforms an argument instead of placing it is refused at its first run', async () => {
  const target = storeTargets[0]!;
  const created = await target.create();
  try {
    await withStore(created.url, async (store) => {
      const transformed = preparedQuery((db, name: string) => anyDb(db).selectFrom('scratch').selectAll().where('name', '=', `${name}-suffix`));
      await assert.rejects(async () => transformed.first(store.db, 'a'), /transformed, not placed/);
      const dropped = preparedQuery((db, _name: string) => anyDb(db).selectFrom('scratch').selectAll());
      await assert.rejects(async () => dropped.first(store.db, 'a'), /1 of its 1 arguments are not parameters/);
      await assert.rejects(async () => insertRows.executeRows(store.db, []), /1 to 64 rows/);
    });
  } finally {
    await created.drop();
  }
});
