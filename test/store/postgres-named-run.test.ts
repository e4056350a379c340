/**
 * A named statement's rows on PostgreSQL are made by its cached row shape
 * (src/store/engine/postgres-named-run.ts): the same values as pg's own parsing, NULLs kept, and a new
 * shape as soon as the server describes other columns for the same statement.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import pg from 'pg';
import { NamedStatementRun, RowShapes, type NamedRunResult } from '../../src/store/engine/postgres-named-run.js';
import { storeTargets, withCreatedStore } from '../helpers/stores.js';

const postgres = storeTargets.find((target) => target.name === 'postgres')!;
/** The row shapes of this file's statements, as a database's driver keeps them. */
const shapes = new RowShapes();

function run(client: pg.Client, name: string, text: string, values: unknown[]): Promise<NamedRunResult> {
  return new Promise((resolve, reject) => {
    client.query(new NamedStatementRun(shapes, name, text, values, (error, result) => (error ? reject(error) : resolve(result))) as unknown as pg.QueryConfig);
  });
}

async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

test('a named statement\'s rows match pg\'s own parsing, NULLs included, run after run [postgres]', { skip: postgres.skip }, async () => {
  await withCreatedStore(postgres, async (url) => {
    await withClient(url, async (client) => {
      const text = `select $1::int as n, $2::text as t, null::int as missing, true as flag, 'a"b' as "quote""d", '2026-11-24'::date::text as day`;
      const expected = await client.query(text.replace('$1', '7').replace('$2', `'x'`));
      for (const [n, t] of [[7, 'x'], [8, 'y']] as const) {
        const result = await run(client, 'named_shape_test', text, [n, t]);
        assert.equal(result.command, 'SELECT');
        assert.equal(result.rowCount, 1);
        assert.deepEqual(result.rows, [{ ...expected.rows[0], n, t }]);
      }
      const none = await run(client, 'named_shape_none', 'select 1 as one where false', []);
      assert.deepEqual(none.rows, []);
      assert.equal(none.rowCount, 0);
    });
  });
});

test('a named statement whose columns the server describes differently gets a new shape [postgres]', { skip: postgres.skip }, async () => {
  await withCreatedStore(postgres, async (url) => {
    const name = 'named_shape_change';
    const text = 'select * from shaped';
    await withClient(url, async (client) => {
      await client.query('create table shaped (a integer not null)');
      await client.query('insert into shaped values (1)');
      assert.deepEqual((await run(client, name, text, [])).rows, [{ a: 1 }]);
    });
    await withClient(url, async (client) => {
      await client.query('alter table shaped alter column a type text, add column b integer');
      assert.deepEqual((await run(client, name, text, [])).rows, [{ a: '1', b: null }]);
    });
  });
});

test('a failing named statement answers its error, and the connection goes on [postgres]', { skip: postgres.skip }, async () => {
  await withCreatedStore(postgres, async (url) => {
    await withClient(url, async (client) => {
      await assert.rejects(run(client, 'named_shape_error', 'select 1 / $1::int as q', [0]), /division by zero/);
      assert.deepEqual((await run(client, 'named_shape_error', 'select 1 / $1::int as q', [1])).rows, [{ q: 1 }]);
    });
  });
});
