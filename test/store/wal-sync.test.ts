/**
 * Durability of the embedded store off the event loop (src/store/engine/wal-sync.ts,
 * src/store/engine/sqlite-driver.ts): SQLite commits with synchronous=NORMAL and coregate syncs the
 * write-ahead log in the thread pool; nobody hears of a commit, and no read outside a
 * transaction returns data, before a sync that covers it has finished.
 */
import assert from 'node:assert/strict';
import fs, { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { sql } from 'kysely';
import { openStore } from '../../src/store/connect.js';
import { WalSync, WalSyncFailed, type SyncFile } from '../../src/store/engine/wal-sync.js';

const dir = mkdtempSync(join(tmpdir(), 'coregate-wal-sync-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A sync the test completes by hand. */
function heldSync() {
  const calls: Array<(error: NodeJS.ErrnoException | null) => void> = [];
  const sync: SyncFile = (_fd, callback) => void calls.push(callback);
  return { sync, calls, finish: (index: number, error: NodeJS.ErrnoException | null = null) => calls[index]?.(error) };
}

function walFile(name: string): string {
  const path = join(dir, `${name}-wal`);
  writeFileSync(path, '');
  return path;
}

const settled = async (promise: Promise<unknown>) => {
  let done = false;
  void promise.then(
    () => (done = true),
    () => (done = true),
  );
  await new Promise((resolve) => setImmediate(resolve));
  return done;
};

test('nothing committed: durable() answers at once, without a sync', async () => {
  const held = heldSync();
  const walSync = new WalSync(walFile('idle'), held.sync);
  await walSync.durable();
  assert.equal(held.calls.length, 0);
  await walSync.close();
});

test('a commit is durable only once a sync that started after it has finished', async () => {
  const held = heldSync();
  const walSync = new WalSync(walFile('one'), held.sync);
  walSync.committed();
  const durable = walSync.durable();
  assert.equal(held.calls.length, 1, 'a sync started');
  assert.equal(await settled(durable), false, 'not durable while the sync runs');
  held.finish(0);
  await durable;
  const close = walSync.close();
  await close;
});

test('one sync covers every commit made before it started; a commit made during it waits for the next', async () => {
  const held = heldSync();
  const walSync = new WalSync(walFile('group'), held.sync);
  walSync.committed();
  walSync.committed();
  const first = [walSync.durable(), walSync.durable()];
  assert.equal(held.calls.length, 1, 'one sync for both commits');
  walSync.committed();
  const later = walSync.durable();
  assert.equal(held.calls.length, 1, 'at most one sync at a time');
  held.finish(0);
  await Promise.all(first);
  assert.equal(await settled(later), false, 'the commit made during the first sync is not covered by it');
  assert.equal(held.calls.length, 2, 'the next sync started at once');
  held.finish(1);
  await later;
  await walSync.close();
});

test('a failed sync is final: its waiters and every later durable() are refused (what the disk holds is unknown)', async () => {
  const held = heldSync();
  const walSync = new WalSync(walFile('failed'), held.sync);
  walSync.committed();
  const waiting = walSync.durable();
  held.finish(0, Object.assign(new Error('EIO: i/o error'), { code: 'EIO' }));
  await assert.rejects(waiting, (error: unknown) => error instanceof WalSyncFailed && /EIO/.test(error.message) && /restart/.test(error.message));
  await assert.rejects(walSync.durable(), WalSyncFailed);
  walSync.committed();
  await assert.rejects(walSync.durable(), WalSyncFailed);
  await walSync.close();
});

/**
 * The store as it runs (connect.ts), with node's fdatasync held by the test: the real wiring of
 * SQLite, the driver and the sync, observed from outside.
 */
async function withHeldFdatasync<T>(run: (held: { pending: () => number; releaseAll: () => void; synced: () => number }) => Promise<T>): Promise<T> {
  const original = fs.fdatasync;
  let holding = true;
  let synced = 0;
  const pending: Array<() => void> = [];
  fs.fdatasync = ((fd: number, callback: (error: NodeJS.ErrnoException | null) => void) => {
    const go = () =>
      original(fd, (error) => {
        synced += 1;
        callback(error);
      });
    if (holding) pending.push(go);
    else go();
  }) as typeof fs.fdatasync;
  syncBuiltinESMExports();
  try {
    return await run({
      pending: () => pending.length,
      releaseAll: () => {
        holding = false;
        for (const go of pending.splice(0)) go();
      },
      synced: () => synced,
    });
  } finally {
    fs.fdatasync = original;
    syncBuiltinESMExports();
  }
}

/** A store file with an `items` table (its creation answered once the held sync is let go). */
async function createItemsTable(file: string): Promise<void> {
  await withHeldFdatasync(async (held) => {
    const store = openStore(`sqlite:${join(dir, file)}`);
    try {
      const create = sql`create table items (name text primary key)`.execute(store.db);
      held.releaseAll();
      await create;
    } finally {
      await store.close();
    }
  });
}

test('the store answers a write transaction only after its log was synced', async () => {
  await createItemsTable('store-write.db');
  await withHeldFdatasync(async (held) => {
    const store = openStore(`sqlite:${join(dir, 'store-write.db')}`);
    try {
      const write = store.transaction((trx) => trx.insertInto('items' as never).values({ name: 'a' } as never).execute());
      assert.equal(await settled(write), false, 'committed, but not answered while the sync is held');
      assert.ok(held.pending() >= 1, 'a sync of the log is under way');
      held.releaseAll();
      await write;
      assert.ok(held.synced() >= 1);
    } finally {
      await store.close();
    }
  });
});

test('a read outside a transaction returns committed data only once it is synced; a transaction in progress is never read', async () => {
  await createItemsTable('store-read.db');
  await withHeldFdatasync(async (held) => {
    const store = openStore(`sqlite:${join(dir, 'store-read.db')}`);
    try {
      // A transaction in progress: its row is not visible to reads beside it, which do not wait for it.
      let finishTransaction!: () => void;
      const inProgress = store.db.transaction().execute(async (trx) => {
        await trx.insertInto('items' as never).values({ name: 'uncommitted' } as never).execute();
        await new Promise<void>((resolve) => (finishTransaction = resolve));
      });
      await new Promise((resolve) => setImmediate(resolve));
      const during = await sql<{ name: string }>`select name from items`.execute(store.db);
      assert.deepEqual(during.rows, [], 'the read ran beside the open transaction and saw none of it');
      finishTransaction();
      assert.equal(await settled(inProgress), false, 'the commit waits for its sync');
      const after = sql<{ name: string }>`select name from items`.execute(store.db);
      assert.equal(await settled(after), false, 'a read that could see the unsynced commit waits for the sync too');
      held.releaseAll();
      await inProgress;
      assert.deepEqual((await after).rows, [{ name: 'uncommitted' }]);
    } finally {
      await store.close();
    }
  });
});
