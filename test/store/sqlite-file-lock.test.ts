/**
 * Waiting for another connection's write lock on an SQLite file (src/store/engine/wait-for-file-lock.ts):
 * on timers, never asleep on the event loop. Two stores on one file in this process stand for an
 * instance and an operator command beside it: while one holds the lock in a transaction that
 * awaits something, the other's writes wait for it and then run; the event loop serves meanwhile
 * (with SQLite's own busy wait the holder could never finish, and the waiter failed after 5 s).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { sql } from 'kysely';
import { systemClock } from '../../src/clock/system-clock.js';
import { openStore } from '../../src/store/connect.js';
import { isBusy, waitForFileLock } from '../../src/store/engine/wait-for-file-lock.js';

const dir = mkdtempSync(join(tmpdir(), 'coregate-file-lock-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const busy = () => Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });

test('a write waits for another connection\'s write lock off the event loop, then runs: in a transaction and outside one', async () => {
  const path = join(dir, 'two-stores.db');
  const holder = await openStore(`sqlite:${path}`);
  const other = await openStore(`sqlite:${path}`);
  try {
    await sql`create table items (name text primary key)`.execute(holder.db);
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let holding!: () => void;
    const held = new Promise<void>((resolve) => (holding = resolve));
    const holderDone = holder.transaction(async (trx) => {
      await sql`insert into items (name) values ('holder')`.execute(trx);
      holding();
      await released;
    });
    await held;
    let transactionDone = false;
    let autocommitDone = false;
    const inTransaction = other.transaction((trx) => sql`insert into items (name) values ('in a transaction')`.execute(trx)).then(() => (transactionDone = true));
    const outside = sql`insert into items (name) values ('outside a transaction')`.execute(other.db).then(() => (autocommitDone = true));
    // The event loop goes on while they wait: turns and timers come and go.
    for (let turn = 0; turn < 20; turn += 1) await nextTurn();
    await new Promise((resolve) => setTimeout(resolve, 30));
    assert.equal(transactionDone, false, 'the other store\'s transaction waits for the lock');
    assert.equal(autocommitDone, false, 'so does its write outside a transaction');
    release();
    await holderDone;
    await Promise.all([inTransaction, outside]);
    const names = (await sql<{ name: string }>`select name from items order by name`.execute(other.db)).rows.map((row) => row.name);
    assert.deepEqual(names, ['holder', 'in a transaction', 'outside a transaction']);
  } finally {
    await other.close();
    await holder.close();
  }
});

test('waitForFileLock: the answer at once when the lock is free; after SQLITE_BUSY, a later attempt\'s; SQLITE_BUSY once the wait is over; any other error at once', async () => {
  assert.equal(waitForFileLock(() => 'free', 1_000), 'free', 'no promise when the first attempt runs');

  let attempts = 0;
  const later = waitForFileLock(() => {
    attempts += 1;
    if (attempts < 3) throw busy();
    return 'third';
  }, 1_000);
  assert.ok(later instanceof Promise);
  assert.equal(await later, 'third');
  assert.equal(attempts, 3);

  attempts = 0;
  // On the clock the wait's deadline is on (the system clock's milliseconds): performance.now()
  // counts fractions of one, and saw 39.x ms when the deadline's millisecond had just begun.
  const started = systemClock.now();
  await assert.rejects(
    Promise.resolve(
      waitForFileLock(() => {
        attempts += 1;
        throw busy();
      }, 40),
    ),
    (error) => isBusy(error),
  );
  assert.ok(systemClock.now() - started >= 40, 'tried until the wait was over');
  assert.ok(attempts > 1, `tried again meanwhile (${attempts} attempts)`);

  const other = new Error('no such table: items');
  assert.throws(() => waitForFileLock(() => { throw other; }, 1_000), (error) => error === other);
  assert.throws(() => waitForFileLock(() => { throw busy(); }, 0), (error) => isBusy(error), 'no wait: SQLITE_BUSY at once');
});
