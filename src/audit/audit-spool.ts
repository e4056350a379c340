/**
 * The audit spool (docs/api.md "Audit", docs/deployment.md "The audit spool"): every execution
 * attempt that passed authentication is audited, refusals included, and a refusal
 * answered while the database is unreachable (a 503 of an outage, or a refusal whose record could
 * not be written) must not lose its record. Such records are appended here, to files on local
 * disk, durably (fsync) before they count as kept; the drain (audit-spool-drain.ts) appends them
 * to the audit table once the database is back, and the chainer links them.
 *
 * Files: `audit-<database>-<owner>-<seq>.jsonl`, one JSON audit record per line, mode 0600, in a
 * directory that several processes may share (`serve --workers N`, several instances on one host):
 * each process writes files of its own (`owner`, random per process), and proves it lives through
 * its socket `<owner>.sock` (liveness-socket.ts). A process claims the files of owners that died
 * by renaming them to its own name (atomic: two processes never drain one file). `database` names
 * the database the records belong to (spool-database-id.ts), so that a directory shared by
 * instances of different databases never drains one's records into the other's chain.
 *
 * A record holds what the audit table holds: no secret, no token, no body (operation-audit.ts).
 */
import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, open, readdir, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import type { AuditEntry } from '../store/audit.js';
import { AuditUnavailable } from './audit-unavailable.js';
import { LivenessSocket, ownerState } from './liveness-socket.js';

/**
 * Records one process's spool holds at most, its own and those it claimed. A refusal's record is
 * about 400 bytes: this is a long outage's worth of refusals (some minutes at hundreds of refusals
 * a second) in a few tens of megabytes. Past it a record cannot be kept: it is counted
 * (coregate_audit_records_lost_total) and readiness answers 503 naming the spool.
 */
export const auditSpoolRecordsMax = 100_000;
/** Bytes one process's spool holds at most (its files together): the disk it may take. */
export const auditSpoolBytesMax = 64 * 1024 * 1024;

export interface AuditSpoolBounds {
  recordsMax: number;
  bytesMax: number;
}

/** One spool file: its name in the directory and what it holds. */
export interface SpoolFile {
  name: string;
  records: number;
  bytes: number;
  /** The oldest record's time (its recordedAt), epoch ms. */
  oldestMs: number | undefined;
}

export interface AuditSpoolStats {
  records: number;
  bytes: number;
  /** Seconds since the oldest record held was recorded; 0 when none is held. */
  oldestAgeSeconds: number;
}

/** A record that could not be kept: the spool is at its bound. */
export class AuditSpoolFull extends AuditUnavailable {
  override name = 'AuditSpoolFull';
}

export interface AuditSpoolOptions {
  directory: string;
  /** The database the records belong to (spool-database-id.ts): 16 hexadecimal digits. */
  databaseId: string;
  bounds?: Partial<AuditSpoolBounds>;
}

/** What a scan of the directory found (claimOrphans). */
export interface OrphanScan {
  /** Files of dead owners, of this database, now this process's. */
  claimed: number;
  /** Files of dead owners left for later: they did not fit within the bounds now. */
  deferred: number;
  /** Files of another database: never drained here. */
  foreign: number;
}

const fileNamePattern = /^audit-([0-9a-f]{16})-([0-9a-f]{12})-(\d{8})\.jsonl$/;
const socketNamePattern = /^([0-9a-f]{12})\.sock$/;

interface Waiting {
  text: string;
  records: number;
  bytes: number;
  oldestMs: number | undefined;
  resolve: () => void;
  reject: (error: unknown) => void;
}

export class AuditSpool {
  readonly directory: string;
  readonly databaseId: string;
  readonly bounds: AuditSpoolBounds;
  readonly #owner: string;
  readonly #liveness: LivenessSocket;
  #nextSeq = 1;
  /** The file appends go to, opened with the first record after the last seal. */
  #active: { file: SpoolFile; handle: FileHandle } | undefined;
  /** Closed files waiting for the drain, in order (the active one's records come after theirs). */
  readonly #sealed: SpoolFile[] = [];
  /** Records and bytes held, those being written included (reserved when accepted). */
  #records = 0;
  #bytes = 0;
  /** A record was refused for the bounds and nothing was drained since: readiness says so. */
  #refusedForRoom = false;
  readonly #waiting: Waiting[] = [];
  #flushQueued = false;
  /** File operations (a batch's write and fsync, a seal, a claim) one at a time, in order. */
  #tail: Promise<unknown> = Promise.resolve();
  #closed = false;

  private constructor(directory: string, databaseId: string, owner: string, liveness: LivenessSocket, bounds: AuditSpoolBounds) {
    this.directory = directory;
    this.databaseId = databaseId;
    this.#owner = owner;
    this.#liveness = liveness;
    this.bounds = bounds;
  }

  /**
   * Makes the directory (0700) when missing and listens on this process's socket in it: a
   * directory that cannot be written is refused at start, not found out in the middle of an outage.
   */
  static async open(options: AuditSpoolOptions): Promise<AuditSpool> {
    if (!/^[0-9a-f]{16}$/.test(options.databaseId)) throw new Error(`an audit spool's database id is 16 hexadecimal digits, got "${options.databaseId}"`);
    const directory = resolve(options.directory);
    const bounds = { recordsMax: options.bounds?.recordsMax ?? auditSpoolRecordsMax, bytesMax: options.bounds?.bytesMax ?? auditSpoolBytesMax };
    await mkdir(directory, { recursive: true, mode: 0o700 });
    for (let attempt = 1; ; attempt += 1) {
      const owner = randomBytes(6).toString('hex');
      try {
        const liveness = await LivenessSocket.listen(join(directory, `${owner}.sock`));
        return new AuditSpool(directory, options.databaseId, owner, liveness, bounds);
      } catch (error) {
        // Another process's socket of the same random name (48 bits: never in practice): another name.
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= 3) throw error;
      }
    }
  }

  /** Whether records are held or being written: while so, new records come here too, after them (chain order). */
  get holdsRecords(): boolean {
    return this.#records > 0;
  }

  /** A record was refused for the bounds, or the spool is at them: refused requests cannot be audited now. */
  get full(): boolean {
    return this.#refusedForRoom || this.#records >= this.bounds.recordsMax || this.#bytes >= this.bounds.bytesMax;
  }

  stats(nowMs: number): AuditSpoolStats {
    let oldestMs: number | undefined;
    for (const file of this.#files()) {
      if (file.oldestMs !== undefined && (oldestMs === undefined || file.oldestMs < oldestMs)) oldestMs = file.oldestMs;
    }
    return { records: this.#records, bytes: this.#bytes, oldestAgeSeconds: oldestMs === undefined ? 0 : Math.max(0, (nowMs - oldestMs) / 1000) };
  }

  /**
   * Appends the records; resolves once they are on disk (written and fsync'd), rejects with
   * AuditSpoolFull when they do not fit within the bounds, or with the file system's error.
   * Records arriving while a write is under way share the next write and fsync.
   */
  keep(entries: readonly AuditEntry[]): Promise<void> {
    if (this.#closed) return Promise.reject(new AuditUnavailable('the audit spool is closed'));
    if (entries.length === 0) return Promise.resolve();
    const text = entries.map((entry) => `${JSON.stringify(entry)}\n`).join('');
    const bytes = Buffer.byteLength(text);
    if (this.#records + entries.length > this.bounds.recordsMax || this.#bytes + bytes > this.bounds.bytesMax) {
      this.#refusedForRoom = true;
      return Promise.reject(
        new AuditSpoolFull(`the audit spool ${this.directory} is full (${this.#records} records, ${this.#bytes} bytes; at most ${this.bounds.recordsMax} records, ${this.bounds.bytesMax} bytes): the record is lost`),
      );
    }
    this.#records += entries.length;
    this.#bytes += bytes;
    let oldestMs: number | undefined;
    for (const entry of entries) {
      const recordedMs = Date.parse(entry.recordedAt);
      if (Number.isFinite(recordedMs) && (oldestMs === undefined || recordedMs < oldestMs)) oldestMs = recordedMs;
    }
    return new Promise<void>((resolvePromise, reject) => {
      this.#waiting.push({ text, records: entries.length, bytes, oldestMs, resolve: resolvePromise, reject });
      if (this.#flushQueued) return;
      this.#flushQueued = true;
      void this.#serially(() => this.#flush());
    });
  }

  /**
   * The files for the drain, in order. The active file is closed first (sealed): records kept
   * from now on go to a new file, which the drain takes after these.
   */
  sealForDrain(): Promise<readonly SpoolFile[]> {
    return this.#serially(async () => {
      if (this.#active !== undefined && this.#active.file.records > 0) await this.#seal();
      return [...this.#sealed];
    });
  }

  /** A sealed file's records, `size` at a time, in the order they were kept. Lines that are not a whole record are skipped (`onSkipped`). */
  async *batchesOf(file: SpoolFile, size: number, onSkipped: (line: number) => void = () => {}): AsyncGenerator<AuditEntry[]> {
    let batch: AuditEntry[] = [];
    for await (const { entry, line } of this.#recordsOf(join(this.directory, file.name))) {
      if (entry === undefined) {
        onSkipped(line);
        continue;
      }
      batch.push(entry);
      if (batch.length >= size) {
        yield batch;
        batch = [];
      }
    }
    if (batch.length > 0) yield batch;
  }

  /** Removes a sealed file whose records are all in the audit table: its room is free again. */
  async remove(file: SpoolFile): Promise<void> {
    await this.#serially(async () => {
      await rm(join(this.directory, file.name), { force: true });
      const index = this.#sealed.indexOf(file);
      if (index >= 0) this.#sealed.splice(index, 1);
      this.#records -= file.records;
      this.#bytes -= file.bytes;
      this.#refusedForRoom = false;
    });
  }

  /**
   * Sets aside a sealed file the database refused for another reason than an outage (a record it
   * cannot take: a file copied by hand, a schema it no longer fits): renamed `quarantined-<name>`,
   * which no process drains or claims, and no longer held, so that the spool goes on draining and
   * taking records. It stays on disk for an operator (docs/deployment.md, "The audit spool").
   */
  async quarantine(file: SpoolFile): Promise<string> {
    return this.#serially(async () => {
      const name = `quarantined-${file.name}`;
      await rename(join(this.directory, file.name), join(this.directory, name));
      const index = this.#sealed.indexOf(file);
      if (index >= 0) this.#sealed.splice(index, 1);
      this.#records -= file.records;
      this.#bytes -= file.bytes;
      this.#refusedForRoom = false;
      return name;
    });
  }

  /**
   * Claims the files that owners which died left in the directory (this database's only), while
   * they fit within the bounds, by renaming each to this process's name: the rename is atomic, so
   * when two processes claim one file one of them finds it gone. A dead owner's socket goes once
   * none of its files is left.
   */
  claimOrphans(): Promise<OrphanScan> {
    return this.#serially(async () => {
      const scan: OrphanScan = { claimed: 0, deferred: 0, foreign: 0 };
      const names = await readdir(this.directory);
      const filesByOwner = new Map<string, Array<{ name: string; seq: number }>>();
      const owners = new Set<string>();
      for (const name of names) {
        const file = fileNamePattern.exec(name);
        if (file) {
          const [, database = '', owner = '', seq = '0'] = file;
          if (database !== this.databaseId) {
            scan.foreign += 1;
            continue;
          }
          owners.add(owner);
          filesByOwner.set(owner, [...(filesByOwner.get(owner) ?? []), { name, seq: Number(seq) }]);
          continue;
        }
        const socket = socketNamePattern.exec(name);
        if (socket?.[1] !== undefined) owners.add(socket[1]);
      }
      owners.delete(this.#owner);
      for (const owner of [...owners].sort()) {
        if ((await ownerState(join(this.directory, `${owner}.sock`))) !== 'dead') continue;
        const files = (filesByOwner.get(owner) ?? []).sort((a, b) => a.seq - b.seq);
        let left = 0;
        for (const orphan of files) {
          const claimed = await this.#claim(orphan.name);
          if (claimed === 'deferred') left += 1;
          if (claimed === 'claimed') scan.claimed += 1;
        }
        scan.deferred += left;
        if (left === 0) await rm(join(this.directory, `${owner}.sock`), { force: true });
      }
      return scan;
    });
  }

  /**
   * Waits for the writes under way, closes the active file and stops listening: from then on
   * what this process kept is an orphan, which the next process to scan the directory claims.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#serially(async () => {
      if (this.#active !== undefined) await this.#seal();
    });
    await this.#liveness.close();
  }

  #files(): SpoolFile[] {
    return this.#active === undefined ? this.#sealed : [...this.#sealed, this.#active.file];
  }

  #serially<T>(work: () => Promise<T>): Promise<T> {
    const done = this.#tail.then(work, work);
    this.#tail = done.catch(() => {});
    return done;
  }

  /** Writes every waiting record in one write and one fsync. */
  async #flush(): Promise<void> {
    this.#flushQueued = false;
    const batch = this.#waiting.splice(0);
    if (batch.length === 0) return;
    try {
      const active = await this.#activeFile();
      const text = batch.map((waiting) => waiting.text).join('');
      await active.handle.appendFile(text, 'utf8');
      // The records are kept once they are on disk, not in the page cache.
      await active.handle.datasync();
      for (const waiting of batch) {
        active.file.records += waiting.records;
        active.file.bytes += waiting.bytes;
        if (waiting.oldestMs !== undefined && (active.file.oldestMs === undefined || waiting.oldestMs < active.file.oldestMs)) active.file.oldestMs = waiting.oldestMs;
      }
      for (const waiting of batch) waiting.resolve();
    } catch (error) {
      for (const waiting of batch) {
        this.#records -= waiting.records;
        this.#bytes -= waiting.bytes;
        waiting.reject(error);
      }
      // The file may end with part of a line now: nothing more is appended to it (its reader
      // skips a part line); the next records start a new file.
      if (this.#active !== undefined) await this.#seal().catch(() => {});
    }
  }

  async #activeFile(): Promise<{ file: SpoolFile; handle: FileHandle }> {
    if (this.#active !== undefined) return this.#active;
    const name = this.#nameOf(this.#nextSeq++);
    // 'ax': created here, never an existing file appended to; 0600: the owner's alone.
    const handle = await open(join(this.directory, name), 'ax', 0o600);
    try {
      // The new file's name must survive a crash too: the directory is synced once per file.
      await syncDirectory(this.directory);
    } catch (error) {
      await handle.close();
      await rm(join(this.directory, name), { force: true });
      throw error;
    }
    this.#active = { file: { name, records: 0, bytes: 0, oldestMs: undefined }, handle };
    return this.#active;
  }

  async #seal(): Promise<void> {
    const active = this.#active;
    if (active === undefined) return;
    this.#active = undefined;
    // Listed before the close is awaited: stats() and the drain never miss it meanwhile.
    if (active.file.records > 0) this.#sealed.push(active.file);
    await active.handle.close();
    if (active.file.records === 0) await rm(join(this.directory, active.file.name), { force: true });
  }

  #nameOf(seq: number): string {
    return `audit-${this.databaseId}-${this.#owner}-${String(seq).padStart(8, '0')}.jsonl`;
  }

  /** One orphan: counted, then renamed to this process's name when it fits. */
  async #claim(orphanName: string): Promise<'claimed' | 'deferred' | 'gone'> {
    const path = join(this.directory, orphanName);
    let size: number;
    try {
      size = (await stat(path)).size;
    } catch {
      return 'gone';
    }
    // A dead owner's file no longer changes: counted before it is claimed, so that it is claimed only when it fits.
    const file: SpoolFile = { name: '', records: 0, bytes: size, oldestMs: undefined };
    try {
      for await (const { entry } of this.#recordsOf(path)) {
        if (entry === undefined) continue;
        file.records += 1;
        const recordedMs = Date.parse(entry.recordedAt);
        if (Number.isFinite(recordedMs) && (file.oldestMs === undefined || recordedMs < file.oldestMs)) file.oldestMs = recordedMs;
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'gone';
      throw error;
    }
    // An empty spool takes any file (its owner's bounds may have been larger); else only what fits.
    if (this.#records > 0 && (this.#records + file.records > this.bounds.recordsMax || this.#bytes + file.bytes > this.bounds.bytesMax)) return 'deferred';
    file.name = this.#nameOf(this.#nextSeq++);
    try {
      await rename(path, join(this.directory, file.name));
    } catch (error) {
      // Another process claimed it first.
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'gone';
      throw error;
    }
    // Drained before the active file's records, if any: the chainer orders what it links by time anyway.
    this.#sealed.push(file);
    this.#records += file.records;
    this.#bytes += file.bytes;
    return 'claimed';
  }

  async *#recordsOf(path: string): AsyncGenerator<{ entry: AuditEntry | undefined; line: number }> {
    const input = createReadStream(path, { encoding: 'utf8' });
    const lines = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
    try {
      let number = 0;
      for await (const text of lines) {
        number += 1;
        if (text === '') continue;
        yield { entry: parseEntry(text), line: number };
      }
    } finally {
      // A reader stopped early (a drain whose append failed) closes its file: readline's close
      // leaves the stream, and its descriptor, open.
      lines.close();
      input.destroy();
    }
  }
}

/** A record as the spool wrote it, or undefined when the line is not one (a write cut by a crash). */
function parseEntry(text: string): AuditEntry | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const entry = value as Partial<Record<keyof AuditEntry, unknown>>;
  const isText = (field: unknown) => typeof field === 'string';
  const isTextOrNull = (field: unknown) => field === null || typeof field === 'string';
  if (
    typeof value !== 'object' ||
    value === null ||
    !isText(entry.id) ||
    !isText(entry.recordedAt) ||
    !isText(entry.clientId) ||
    !isText(entry.operation) ||
    !isText(entry.outcome) ||
    !isTextOrNull(entry.backboneUser) ||
    !isTextOrNull(entry.workstation) ||
    !isTextOrNull(entry.correlationId) ||
    !isTextOrNull(entry.reference) ||
    !Number.isInteger(entry.httpStatus) ||
    !Number.isInteger(entry.durationMs) ||
    typeof entry.details !== 'object' ||
    entry.details === null
  ) {
    return undefined;
  }
  return value as AuditEntry;
}

async function syncDirectory(directory: string): Promise<void> {
  const handle = await open(directory, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
