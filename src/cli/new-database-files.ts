/**
 * The SQLite files a start creates, so that a start that fails removes them (issue 27): a
 * `coregate serve` whose port was taken left a new, empty-but-migrated `data/coregate.db` behind,
 * and the next start, on the right port, took it for the store it meant to create. Only what did
 * not exist before the start is removed (the database, its -wal, -shm and -journal files, and a
 * directory made for them that is still empty): a database that existed is never touched.
 */
import { existsSync, rmdirSync, rmSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/** Besides the database file, what SQLite writes next to it (write-ahead log, shared memory, rollback journal). */
const companionSuffixes = ['-wal', '-shm', '-journal'];

export class NewDatabaseFiles {
  private constructor(
    /** The files of the database that did not exist before the start. */
    private readonly files: readonly string[],
    /** The directories the store's opening would create, deepest first. */
    private readonly directories: readonly string[],
  ) {}

  /** Notes which of the store's files do not exist yet; `dbUrl` is the store's URL (only sqlite:PATH has files). */
  static before(dbUrl: string): NewDatabaseFiles {
    if (!dbUrl.startsWith('sqlite:')) return new NewDatabaseFiles([], []);
    const path = dbUrl.slice('sqlite:'.length);
    if (path === '' || path === ':memory:') return new NewDatabaseFiles([], []);
    const database = resolve(path);
    // A database that exists keeps all its files: its -wal holds commits not yet in the file itself.
    if (existsSync(database)) return new NewDatabaseFiles([], []);
    const files = [database, ...companionSuffixes.map((suffix) => `${database}${suffix}`)].filter((file) => !existsSync(file));
    const directories: string[] = [];
    for (let directory = dirname(database); !existsSync(directory); directory = dirname(directory)) directories.push(directory);
    return new NewDatabaseFiles(files, directories);
  }

  /** Removes what the failed start created (after its store was closed); answers the files removed. */
  removeCreated(): string[] {
    const removed = this.files.filter((file) => existsSync(file));
    for (const file of removed) rmSync(file, { force: true });
    for (const directory of this.directories) {
      try {
        rmdirSync(directory);
      } catch {
        // Not empty (something else was put there meanwhile) or already gone: left as it is.
        break;
      }
    }
    return removed;
  }
}
