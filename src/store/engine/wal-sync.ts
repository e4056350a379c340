/**
 * Durability of the embedded store, off the event loop. SQLite with `synchronous=FULL` fsyncs
 * the write-ahead log inside every commit, and better-sqlite3 runs that commit on the event
 * loop: every request in the process waited for the disk at each commit (the largest single
 * cost of a write, measured). coregate commits with `synchronous=NORMAL` instead — SQLite then
 * writes the log without syncing it — and syncs the log itself, with `fdatasync` in libuv's
 * thread pool, before anyone hears of the commit:
 *
 * - a write transaction answers only once a sync that started after its commit has finished,
 *   so an acknowledged write is on disk exactly as with FULL (the log is a prefix: syncing it
 *   makes every earlier commit durable too);
 * - a read outside a transaction waits the same way when a commit is not yet synced, so no
 *   answer shows data that a power loss could still take back;
 * - syncs are shared: one sync covers every commit made before it started (group commit), and
 *   at most one runs at a time.
 *
 * SQLite itself syncs the log before each checkpoint and the log's header when it is reused,
 * which NORMAL keeps. A failed sync is final, as in PostgreSQL after "fsyncgate": what the disk
 * holds is unknown, so every later write and read is refused until the process restarts and
 * SQLite recovers from what is on disk.
 */
import { closeSync, fdatasync, fsyncSync, openSync } from 'node:fs';
import { dirname } from 'node:path';

interface Waiter {
  /** The commit count this waiter needs synced. */
  upTo: number;
  resolve: () => void;
  reject: (error: Error) => void;
}

/** `fs.fdatasync`'s shape: tests pass one they control. */
export type SyncFile = (fd: number, callback: (error: NodeJS.ErrnoException | null) => void) => void;

export class WalSyncFailed extends Error {
  override name = 'WalSyncFailed';
}

const resolved = Promise.resolve();

export class WalSync {
  readonly #fd: number;
  /** Commits made (write transactions and autocommitted writes), counted since opening. */
  #committed = 0;
  /** Every commit up to this count is on disk. */
  #synced = 0;
  #syncing = false;
  #waiters: Waiter[] = [];
  #failure: WalSyncFailed | undefined;
  #closed = false;

  readonly #sync: SyncFile;

  /** `walPath`: the database's `-wal` file, which SQLite has created already. */
  constructor(walPath: string, sync: SyncFile = fdatasync) {
    this.#sync = sync;
    this.#fd = openSync(walPath, 'r');
    // The log's directory entry must be durable too (SQLite syncs the directory of a new log).
    syncDirectory(dirname(walPath));
  }

  /** A commit was made: the next `durable()` waits for a sync that covers it. */
  committed(): void {
    this.#committed += 1;
  }

  /** Resolves once every commit made so far is on disk; at once when nothing waits for a sync. */
  durable(): Promise<void> {
    if (this.#failure) return Promise.reject(this.#failure);
    if (this.#synced >= this.#committed) return resolved;
    return new Promise<void>((resolve, reject) => {
      this.#waiters.push({ upTo: this.#committed, resolve, reject });
      this.#startSync();
    });
  }

  /** Waits for the syncs in flight, then closes the log's descriptor. */
  async close(): Promise<void> {
    await this.durable().catch(() => undefined);
    if (this.#closed) return;
    this.#closed = true;
    closeSync(this.#fd);
  }

  #startSync(): void {
    if (this.#syncing || this.#waiters.length === 0 || this.#closed) return;
    this.#syncing = true;
    const upTo = this.#committed;
    this.#sync(this.#fd, (error) => {
      this.#syncing = false;
      if (error) {
        this.#failure = new WalSyncFailed(`the disk refused to sync the write-ahead log (${error.code ?? error.message}): writes are no longer acknowledged; restart the service`, { cause: error });
        const waiters = this.#waiters;
        this.#waiters = [];
        for (const waiter of waiters) waiter.reject(this.#failure);
        return;
      }
      this.#synced = Math.max(this.#synced, upTo);
      const waiting: Waiter[] = [];
      for (const waiter of this.#waiters) {
        if (waiter.upTo <= upTo) waiter.resolve();
        else waiting.push(waiter);
      }
      this.#waiters = waiting;
      this.#startSync();
    });
  }
}

function syncDirectory(path: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    fsyncSync(fd);
  } catch {
    // Some file systems refuse to sync a directory; SQLite ignores that too.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
