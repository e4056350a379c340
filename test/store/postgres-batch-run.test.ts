/**
 * A transaction's statements in one pipeline with one Sync (src/store/engine/postgres-batch-run.ts):
 * each answered on its own, in order, with the rows and counts pg would give; a failed one
 * answers its error and the ones after it answer that they did not run (25P02), and the
 * connection goes on after the rollback.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import pg from 'pg';
import { OneSyncBatchRun, type BatchStatement } from '../../src/store/engine/postgres-batch-run.js';
import { NotRunInBatch } from '../../src/store/engine/not-run-in-batch.js';
import { NamedStatementRun, RowShapes, type NamedRunResult } from '../../src/store/engine/postgres-named-run.js';
import { storeTargets, withCreatedStore } from '../helpers/stores.js';

const postgres = storeTargets.find((target) => target.name === 'postgres')!;
/** The row shapes of this file's statements, as a database's driver keeps them. */
const shapes = new RowShapes();

const statements = {
  insert: { name: 'batch_test_insert', text: 'insert into items (name, qty) values ($1, $2)' },
  add: { name: 'batch_test_add', text: 'update items set qty = qty + $1 where name = $2' },
  select: { name: 'batch_test_select', text: 'select name, qty from items where name = $1' },
};

function runNamed(client: pg.Client, statement: { name: string; text: string }, values: unknown[]): Promise<NamedRunResult> {
  return new Promise((resolve, reject) => {
    client.query(new NamedStatementRun(shapes, statement.name, statement.text, values, (error, result) => (error ? reject(error) : resolve(result))) as unknown as pg.QueryConfig);
  });
}

function runBatch(client: pg.Client, batch: Array<[{ name: string }, unknown[]]>): Array<Promise<NamedRunResult>> {
  const answers: Array<Promise<NamedRunResult>> = [];
  const members: BatchStatement[] = batch.map(([statement, values]) => {
    let member!: BatchStatement;
    answers.push(new Promise((resolve, reject) => (member = { name: statement.name, values, resolve, reject })));
    return member;
  });
  client.query(new OneSyncBatchRun(shapes, members) as unknown as pg.QueryConfig);
  return answers;
}

test('a batch with one Sync answers each statement in order, and a failure stops the ones after it [postgres]', { skip: postgres.skip }, async () => {
  await withCreatedStore(postgres, async (url) => {
    const client = new pg.Client({ connectionString: url, pipeline: true } as pg.ClientConfig);
    await client.connect();
    try {
      await client.query('create table items (name text primary key, qty integer not null)');
      // Parsed on this connection first, as the driver requires of a batch.
      await runNamed(client, statements.insert, ['seed', 0]);
      await runNamed(client, statements.add, [0, 'seed']);
      await runNamed(client, statements.select, ['seed']);

      await client.query('begin');
      const [inserted, added, missed, selected] = await Promise.all(
        runBatch(client, [
          [statements.insert, ['a', 1]],
          [statements.add, [10, 'a']],
          [statements.add, [10, 'nobody']],
          [statements.select, ['a']],
        ]),
      );
      await client.query('commit');
      assert.deepEqual([inserted!.command, inserted!.rowCount], ['INSERT', 1]);
      assert.deepEqual([added!.command, added!.rowCount], ['UPDATE', 1]);
      assert.deepEqual([missed!.command, missed!.rowCount], ['UPDATE', 0]);
      assert.deepEqual(selected!.rows, [{ name: 'a', qty: 11 }]);

      await client.query('begin');
      const answers = runBatch(client, [
        [statements.add, [5, 'a']],
        [statements.insert, ['a', 2]],
        [statements.add, [100, 'a']],
        [statements.select, ['a']],
      ]);
      const settled = await Promise.allSettled(answers);
      assert.equal(settled[0]!.status, 'fulfilled');
      assert.equal(settled[1]!.status, 'rejected');
      assert.equal((settled[1] as PromiseRejectedResult).reason.code, '23505', 'the failed statement answers its own error');
      for (const skipped of settled.slice(2)) {
        assert.equal(skipped.status, 'rejected');
        assert.ok((skipped as PromiseRejectedResult).reason instanceof NotRunInBatch);
        assert.equal((skipped as PromiseRejectedResult).reason.code, '25P02');
      }
      await client.query('rollback');
      // Nothing of the failed transaction stayed, and the connection serves the next statements.
      assert.deepEqual((await runNamed(client, statements.select, ['a'])).rows, [{ name: 'a', qty: 11 }]);
      const [again] = await Promise.all(runBatch(client, [[statements.select, ['a']], [statements.select, ['seed']]]));
      assert.deepEqual(again!.rows, [{ name: 'a', qty: 11 }]);
    } finally {
      await client.end();
    }
  });
});
