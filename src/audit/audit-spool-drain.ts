/**
 * The audit spool's drain (docs/api.md "Audit", docs/deployment.md "The audit spool"): a
 * background loop of the instance (src/operations/periodic.ts) that appends the records kept in
 * the spool (audit-spool.ts) to the audit table once the database answers again, in the order they
 * were kept, and asks the chainer to link them (chain.ts). No restart is needed: each pass tries,
 * and one that meets the outage still going leaves everything where it is for the next.
 *
 * Safe against a crash in its middle: a file is removed only once every record of it is
 * committed, and records are inserted each at most once by id (insertAuditEntriesOnce), so a file
 * drained again after a crash adds only what its first drain had not committed. A record is never
 * appended twice.
 *
 * Every pass first claims, now and then, the files of processes that died (their own spool left
 * behind) when this process holds none of its own: a process that starts drains them at its first
 * pass.
 */
import type { Clock } from '../core/clock.js';
import type { Logger } from '../log.js';
import { Periodic } from '../clock/periodic.js';
import { auditRowsPerStatementMax, type AuditEntry } from '../store/audit.js';
import { isDatabaseUnavailable } from '../store/engine/database-unavailable.js';
import type { AuditSpool, SpoolFile } from './audit-spool.js';
import type { AuditLossReason } from './audit-unavailable.js';

/** How often the drain looks at the spool: a pass over an empty spool costs nothing. */
export const auditSpoolDrainIntervalMs = 1_000;
/** How often the directory is scanned for files of processes that died (the first pass always scans). */
export const auditSpoolOrphanScanIntervalMs = 60_000;

export interface AuditSpoolDrainOptions {
  spool: AuditSpool;
  /** Appends a batch to the audit table, each record at most once (insertAuditEntriesOnce). */
  append: (entries: readonly AuditEntry[]) => Promise<void>;
  /** Links the appended records into the chain, soon after. */
  chainer: { schedule(): void };
  clock: Clock;
  logger: Pick<Logger, 'info' | 'warn' | 'error'>;
  intervalMs?: number;
  /** Told of every record of a file set aside (AuditSpool.quarantine): it will not reach the chain. */
  onLost?: (reason: AuditLossReason) => void;
}

export class AuditSpoolDrain {
  readonly #options: AuditSpoolDrainOptions;
  readonly #periodic: Periodic;
  #scannedAtMs: number | undefined;
  /** The outage was logged once; said again when the drain succeeds. */
  #waitingForDatabase = false;
  #foreignReported = false;

  constructor(options: AuditSpoolDrainOptions) {
    this.#options = options;
    this.#periodic = new Periodic(options.clock, options.intervalMs ?? auditSpoolDrainIntervalMs, () => this.#pass(), (error) =>
      options.logger.error({ err: error }, 'audit spool drain failed; the next pass tries again'),
    );
  }

  start(): void {
    this.#periodic.start();
  }

  /**
   * Waits for the pass under way, which ends after the batch it is writing. What the spool still
   * holds stays on disk: another process of the directory, or the next start, drains it.
   */
  async stop(): Promise<void> {
    await this.#periodic.stop();
    const { spool, clock, logger } = this.#options;
    if (spool.holdsRecords) logger.warn({ records: spool.stats(clock.now()).records, directory: spool.directory }, 'audit records stay in the spool for the next process of this directory to append');
  }

  /** One pass: claims orphans when due, then drains until the spool is empty or the database fails. */
  runOnce(): Promise<void> {
    return this.#periodic.runOnce();
  }

  async #pass(): Promise<void> {
    const { spool, logger, clock } = this.#options;
    let appended = 0;
    try {
      await this.#claimOrphansWhenDue();
      while (!this.#periodic.stopped) {
        const files = await spool.sealForDrain();
        if (files.length === 0) break;
        for (const file of files) {
          if (this.#periodic.stopped) break;
          let skipped = 0;
          let fromFile = 0;
          try {
            for await (const batch of spool.batchesOf(file, auditRowsPerStatementMax, () => (skipped += 1))) {
              await this.#options.append(batch);
              appended += batch.length;
              fromFile += batch.length;
              // A stop ends the pass after this batch: the file stays, and its next drain adds only the rest.
              if (this.#periodic.stopped) break;
            }
          } catch (error) {
            if (isDatabaseUnavailable(error)) throw error;
            // Refused for another reason than an outage: every pass would meet it again, and the
            // spool, never emptied, would fill. Set aside, the rest drains.
            await this.#quarantine(file, file.records - fromFile, error);
            continue;
          }
          if (this.#periodic.stopped) break;
          if (skipped > 0) logger.warn({ file: file.name, lines: skipped }, 'audit spool lines that are not a whole record were skipped (a write cut by a crash: never acknowledged)');
          await spool.remove(file);
        }
      }
    } catch (error) {
      if (!isDatabaseUnavailable(error)) throw error;
      if (!this.#waitingForDatabase) logger.warn({ err: error, records: spool.stats(clock.now()).records }, 'the audit spool waits for the database: its records are appended once it answers');
      this.#waitingForDatabase = true;
      return;
    } finally {
      if (appended > 0) this.#options.chainer.schedule();
    }
    if (appended > 0) logger.info({ records: appended }, 'audit records kept in the spool during an outage were appended to the audit trail');
    this.#waitingForDatabase = false;
  }

  async #quarantine(file: SpoolFile, notAppended: number, cause: unknown): Promise<void> {
    const { spool, logger } = this.#options;
    const name = await spool.quarantine(file);
    for (let lost = 0; lost < notAppended; lost += 1) this.#options.onLost?.('spool_quarantined');
    logger.error(
      { err: cause, file: name, records: file.records, notAppended, directory: spool.directory },
      'an audit spool file the database refused (not an outage) was set aside; its records that were not appended are not in the audit trail: see the file',
    );
  }

  async #claimOrphansWhenDue(): Promise<void> {
    const { spool, clock, logger } = this.#options;
    const now = clock.now();
    if (spool.holdsRecords || (this.#scannedAtMs !== undefined && now - this.#scannedAtMs < auditSpoolOrphanScanIntervalMs)) return;
    this.#scannedAtMs = now;
    const scan = await spool.claimOrphans();
    if (scan.claimed > 0) logger.info({ files: scan.claimed, directory: spool.directory }, 'audit spool files of processes that died were claimed; their records are appended now');
    if (scan.foreign > 0 && !this.#foreignReported) {
      this.#foreignReported = true;
      logger.warn(
        { files: scan.foreign, directory: spool.directory },
        'the audit spool directory holds files of another database: they are left for that database\'s instances (give each deployment a directory of its own)',
      );
    }
  }
}
