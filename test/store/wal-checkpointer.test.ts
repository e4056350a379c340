/**
 * WAL checkpoints off the event loop (src/store/engine/wal-checkpointer.ts): the store's own connection
 * never checkpoints inside a commit (wal_autocheckpoint = 0), a worker thread copies the log back
 * into the database file, starts the log over while the store's writers wait (a steady stream
 * of commits never lets a passive checkpoint catch up), and closing the store stops it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { sql } from 'kysely';
import { openStore, type Store } from '../../src/store/connect.js';
import { startWalCheckpointer, walCheckpointIntervalMs } from '../../src/store/engine/wal-checkpointer.js';

// On the disk, even where the runner keeps the tests' files in memory (docs/testing.md, "Temporary
// files"): how far the log grows between two checkpoints is what the disk lets be written meanwhile,
// and on tmpfs a steady stream wrote 27–29 MiB before a restart.
const dir = mkdtempSync(join(process.env.COREGATE_TEST_DISK_TMPDIR || tmpdir(), 'coregate-checkpointer-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const autocheckpoint = async (store: Store) => (await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(store.db)).rows[0]?.wal_autocheckpoint;

test('the store connection does not checkpoint in its commits; a worker thread copies the log into the database file', async () => {
  const path = join(dir, 'store.db');
  const store = await openStore(`sqlite:${path}`);
  try {
    await sql`create table filler (id integer primary key, text text not null)`.execute(store.db);
    await store.transaction(async (trx) => sql`insert into filler (text) values ('first')`.execute(trx));
    assert.equal(await autocheckpoint(store), 0, 'no checkpoint inside a commit on the event loop once the store writes');
    const before = statSync(path).size;
    // About 2 MB of rows: past the 1,000 pages at which a commit would have checkpointed by itself.
    for (let batch = 0; batch < 20; batch += 1) {
      await store.transaction(async (trx) => {
        for (let row = 0; row < 50; row += 1) await sql`insert into filler (text) values (${'x'.repeat(2_000)})`.execute(trx);
      });
    }
    const deadline = Date.now() + 20 * walCheckpointIntervalMs;
    while (statSync(path).size < before + 1_000_000 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, walCheckpointIntervalMs));
    assert.ok(statSync(path).size >= before + 1_000_000, `the database file grew from ${before} to ${statSync(path).size} bytes: the log was copied back`);
  } finally {
    await store.close();
  }
});

test('under a steady stream of commits the write-ahead log is started over: it stays bounded instead of growing with everything written', async () => {
  const path = join(dir, 'steady.db');
  const store = await openStore(`sqlite:${path}`);
  try {
    await sql`create table filler (id integer primary key, text text not null)`.execute(store.db);
    const row = 'x'.repeat(4_000);
    const mib = 1024 * 1024;
    let written = 0;
    let largestLog = 0;
    const deadline = Date.now() + 30_000;
    // Waves of transactions back to back, never a pause for a passive checkpoint to catch up.
    while (written < 48 * mib && Date.now() < deadline) {
      await Promise.all(
        Array.from({ length: 8 }, () =>
          store.transaction(async (trx) => {
            for (let i = 0; i < 8; i += 1) await sql`insert into filler (text) values (${row})`.execute(trx);
          }),
        ),
      );
      written += 8 * 8 * row.length;
      largestLog = Math.max(largestLog, statSync(`${path}-wal`).size);
    }
    assert.ok(written >= 48 * mib, `wrote ${(written / mib).toFixed(1)} MiB in the time allowed`);
    // About 1,000 frames (4 MiB) before a restart is asked for, plus what is written while it waits for its moment.
    assert.ok(largestLog <= 24 * mib, `the log reached ${(largestLog / mib).toFixed(1)} MiB while ${(written / mib).toFixed(1)} MiB were written`);
    const { rows } = await sql<{ n: number }>`select count(*) as n from filler`.execute(store.db);
    assert.equal(rows[0]?.n, written / row.length, 'every committed row is there');
  } finally {
    await store.close();
  }
});

test('a store that has run no transaction has started no checkpointer thread: SQLite\'s own checkpoints stay on until its first one', async () => {
  const path = join(dir, 'reads.db');
  const store = await openStore(`sqlite:${path}`);
  try {
    assert.equal(await autocheckpoint(store), 1000, 'SQLite\'s default: a reading session needs no thread');
    await store.transaction(async (trx) => sql`create table t (x integer)`.execute(trx));
    assert.equal(await autocheckpoint(store), 0, 'the thread took over with the first transaction');
  } finally {
    await store.close();
  }
});

test('closing the store stops the checkpointer (the process is free to exit) and the file opens again', async () => {
  const path = join(dir, 'reopen.db');
  const first = await openStore(`sqlite:${path}`);
  await sql`create table t (x integer)`.execute(first.db);
  await first.close();
  const second = await openStore(`sqlite:${path}`);
  try {
    await sql`insert into t (x) values (1)`.execute(second.db);
    const { rows } = await sql<{ n: number }>`select count(*) as n from t`.execute(second.db);
    assert.equal(rows[0]?.n, 1);
  } finally {
    await second.close();
  }
});

test('a checkpointer that cannot run says so once, so the store can turn SQLite\'s own checkpoints back on', async () => {
  // A directory is not a database: the worker's connection fails at once.
  const failures: Error[] = [];
  const checkpointer = startWalCheckpointer(dir, { onFailure: (error) => failures.push(error) });
  // The failed thread exits by itself: once it has (the signal awaited, no polling), its error and
  // its exit have both had their chance to be reported. The guard only bounds a thread that never ends.
  let guard: NodeJS.Timeout | undefined;
  try {
    await Promise.race([checkpointer.exited, new Promise((_, reject) => (guard = setTimeout(() => reject(new Error('the failed thread did not exit within 10 s')), 10_000)))]);
  } finally {
    clearTimeout(guard);
    await checkpointer.stop();
  }
  assert.equal(failures.length, 1, 'reported exactly once (the error, not again for the exit)');
  assert.match(failures[0]?.message ?? '', /^the WAL checkpointer thread failed: \S/);
});
