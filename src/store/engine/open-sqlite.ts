/** An SQLite database (open-database.ts): WAL, a writer and a reader connection, a commit group, the checkpointer. */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { sql } from 'kysely';
import type { Database } from './database.js';
import { RootQueries } from './root-queries.js';
import { withStatementCache } from './statement-cache.js';
import { DurableSqliteDialect } from './sqlite-driver.js';
import { CommitGroup } from './commit-group.js';
import { startWalCheckpointer, type WalCheckpointer } from './wal-checkpointer.js';
import { databaseProblem } from './database-problem.js';

/** The page cache of the SQLite connection that writes, KiB. */
const sqliteWriterCacheKiB = 32 * 1024;
/** The size the write-ahead log's file is cut back to when the log starts over. */
const sqliteWalSizeLimitBytes = 64 * 1024 * 1024;
/** How long a connection waits for another's write lock on the file before failing (SQLITE_BUSY). */
const sqliteBusyTimeoutMs = 5_000;

/** The file opened in WAL mode, or an error naming the file and the fix. */
function openSqliteFile(path: string): SqliteDatabase.Database {
  let database: SqliteDatabase.Database | undefined;
  try {
    database = new SqliteDatabase(path);
    database.pragma('journal_mode = WAL');
    return database;
  } catch (error) {
    database?.close();
    throw new Error(`cannot open the database sqlite:${path}: ${databaseProblem(error)}`, { cause: error });
  }
}

export function openSqlite<DB>(path: string): Database<DB> {
  if (path === '') throw new Error('sqlite: URL needs a file path, e.g. sqlite:./data/coregate.db');
  const inMemory = path === ':memory:';
  if (!inMemory) mkdirSync(dirname(path), { recursive: true });
  const database = openSqliteFile(path);
  // FULL: SQLite syncs the write-ahead log inside each commit, so an acknowledged write survives a
  // power loss. (Syncing it off the event loop instead — synchronous=NORMAL and an fdatasync in
  // the thread pool — was measured against this in issue 25's ablation, docs/performance.md: no
  // path gained, and audited 400s were 8–12 % slower; one commit group shares one sync either way.)
  database.pragma('synchronous = FULL');
  database.pragma('foreign_keys = ON');
  database.pragma(`busy_timeout = ${sqliteBusyTimeoutMs}`);
  // Each unit of a commit group runs in a savepoint (commit-group.ts), and SQLite copies every
  // page a savepoint changes to a statement journal first: in a temporary file by default, two
  // writes a page. In memory, the journal costs no system call; it lives as long as the savepoint.
  database.pragma('temp_store = MEMORY');
  // The writer's page cache, KiB: an operation touches a few dozen pages of tables and indexes
  // that grow with every operation, and pages read back from the file cost a read each.
  database.pragma(`cache_size = -${sqliteWriterCacheKiB}`);
  // The log is started over once it holds ~4 MiB (wal-checkpointer.ts) and its file is reused;
  // a burst that made it larger (one huge transaction) is cut back to this when it starts over.
  database.pragma(`journal_size_limit = ${sqliteWalSizeLimitBytes}`);
  // From here on the writer waits for another connection's write lock on timers, off the event
  // loop (wait-for-file-lock.ts); SQLite's own wait sleeps on it. Opening (above) keeps SQLite's.
  database.pragma('busy_timeout = 0');
  const reader = inMemory ? undefined : openSqliteReader(path);
  const dialect = new DurableSqliteDialect({ writer: withStatementCache(database), reader: reader && withStatementCache(reader), fileLockWaitMs: sqliteBusyTimeoutMs });
  const db = new RootQueries<DB>(dialect);
  // Checkpoints run in a worker thread (wal-checkpointer.ts), not inside a commit on the event
  // loop; it starts the log over in a moment when the writers wait. The thread starts with the
  // store's first transaction: a session that only reads (most operator commands, a test's look
  // at the tables) never pays for it (~50 ms of CPU and ~100 ms to start a thread and load the
  // driver in it). Until then SQLite's own checkpoints stay on, so the log is bounded either way.
  let checkpointer: WalCheckpointer | undefined;
  let closing = false;
  const startCheckpointer = () => {
    if (checkpointer !== undefined || inMemory || closing) return;
    checkpointer = startWalCheckpointer(path, {
      quietWindow: (work) => dialect.whileWritersWait(work),
      onFailure(error) {
        // Back to SQLite's own checkpoints (every 1,000 pages, in a commit): slower, never unbounded.
        database.pragma('wal_autocheckpoint = 1000');
        process.emitWarning(`${error.message}; SQLite's automatic checkpoints are back on`, 'CoregateWarning');
      },
    });
    database.pragma('wal_autocheckpoint = 0');
  };
  const group = new CommitGroup(db, { windowMs: commitWindowMs() });
  return {
    db,
    transaction: (work, options) => {
      startCheckpointer();
      return group.run(work, options);
    },
    dialect: 'sqlite',
    displayUrl: `sqlite:${path}`,
    poolStats: () => undefined,
    async ping() {
      await sql`select 1`.execute(db);
    },
    async close() {
      closing = true;
      await checkpointer?.stop();
      await db.destroy();
    },
  };
}

/** The connection for reads outside transactions (sqlite-driver.ts): it can never write. */
function openSqliteReader(path: string): SqliteDatabase.Database {
  const reader = new SqliteDatabase(path);
  reader.pragma(`busy_timeout = ${sqliteBusyTimeoutMs}`);
  reader.pragma('query_only = 1');
  return reader;
}

/** COREGATE_COMMIT_WINDOW_MS: how long an SQLite commit group waits for companions (default 0). */
function commitWindowMs(): number {
  const value = Number(process.env.COREGATE_COMMIT_WINDOW_MS ?? '0');
  if (!Number.isInteger(value) || value < 0 || value > 100) throw new Error('COREGATE_COMMIT_WINDOW_MS must be an integer from 0 to 100');
  return value;
}
