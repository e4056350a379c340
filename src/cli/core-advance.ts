/**
 * `coregate core advance --to YYYY-MM-DD` and `coregate core date` (docs/business-days.md): the
 * operator moves the core's business date. With --core-url the remote core runs the end of day
 * (its protocol's advance endpoint); otherwise this command opens the store (--db) and runs it
 * with the embedded reference core, one transaction per business day, resumable after a crash.
 */
import { isCalendarDate } from '../core/calendar-date.js';
import { BusinessDateBackwards, type CoreBankingPort, type EndOfDayReport } from '../core/port.js';
import { defaultDbUrl } from '../config.js';
import { connectRemoteCore, openReferenceCore } from '../core-http/core-service.js';
import { createLogger } from '../log.js';
import { CommandError } from './command-error.js';

export interface CoreCommandFlags {
  db?: string;
  coreUrl?: string;
  json?: boolean;
}

export interface CoreAdvanceFlags extends CoreCommandFlags {
  to: string;
}

/** A remote advance may run many days: the adapter waits this long (the work goes on in the core if it is cut). */
const remoteTimeoutMs = 60_000;

async function withCore<T>(flags: CoreCommandFlags, work: (core: CoreBankingPort) => Promise<T>): Promise<T> {
  const coreUrl = flags.coreUrl ?? process.env.COREGATE_CORE_URL;
  if (coreUrl !== undefined) {
    const remote = connectRemoteCore(coreUrl, remoteTimeoutMs);
    try {
      return await work(remote);
    } finally {
      await remote.close();
    }
  }
  const db = flags.db ?? process.env.COREGATE_DB ?? defaultDbUrl;
  const { store, core } = await openReferenceCore({ db, dataFile: undefined, businessDate: undefined }, createLogger({ level: 'silent' }));
  try {
    return await work(core);
  } finally {
    await store.close();
  }
}

export async function coreAdvance(flags: CoreAdvanceFlags): Promise<EndOfDayReport> {
  if (!isCalendarDate(flags.to)) throw new CommandError(`--to must be a YYYY-MM-DD calendar date, got "${flags.to}"`);
  return withCore(flags, async (core) => {
    try {
      return await core.advanceBusinessDate(flags.to);
    } catch (error) {
      if (error instanceof BusinessDateBackwards) throw new CommandError(error.message);
      throw error;
    }
  });
}

export async function coreDate(flags: CoreCommandFlags): Promise<{ businessDate: string }> {
  return withCore(flags, async (core) => ({ businessDate: await core.businessDate() }));
}

export function describeAdvance(report: EndOfDayReport): string {
  if (report.daysClosed.length === 0) {
    return report.from === report.to
      ? `The business date is ${report.to} already: nothing to do.`
      : `Business date ${report.from} → ${report.to}: no business day to close (they had closed before, or none was a business day).`;
  }
  const first = report.daysClosed[0];
  const last = report.daysClosed.at(-1);
  return [
    `Business date ${report.from} → ${report.to}.`,
    `End of day ran for ${report.daysClosed.length} business day${report.daysClosed.length === 1 ? '' : 's'} (${first === last ? first : `${first} … ${last}`}).`,
    `Term deposits matured: ${report.maturedDeposits}. Installments overdue: ${report.overdueInstallments}.`,
  ].join('\n');
}
