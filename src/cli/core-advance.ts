/**
 * `coregate core advance --to YYYY-MM-DD` and `coregate core date` (docs/business-days.md): the
 * operator moves the core's business date. With --core-url the remote core runs the end of day
 * (its protocol's advance endpoint); otherwise this command opens the store (--db) and runs it
 * with the embedded reference core, one transaction per business day, resumable after a crash. On
 * the database of an API whose core is remote it refuses, naming --core-url (core-session.ts): an
 * end of day run on a copy of the core's tables would answer success while the core stood still.
 */
import { isCalendarDate } from '../core/calendar-date.js';
import { BusinessDateBackwards, type CoreBankingPort, type EndOfDayReport } from '../core/port.js';
import { CommandError } from './command-error.js';
import { withCore, type CoreFlags } from './core-session.js';

export interface CoreCommandFlags extends CoreFlags {
  json?: boolean;
}

export interface CoreAdvanceFlags extends CoreCommandFlags {
  to: string;
}

function withCoreOf<T>(flags: CoreCommandFlags, what: string, work: (core: CoreBankingPort) => Promise<T>): Promise<T> {
  return withCore(flags, what, (core) => work(core));
}

export async function coreAdvance(flags: CoreAdvanceFlags): Promise<EndOfDayReport> {
  if (!isCalendarDate(flags.to)) throw new CommandError(`--to must be a YYYY-MM-DD calendar date, got "${flags.to}"`);
  return withCoreOf(flags, 'coregate core advance', async (core) => {
    try {
      return await core.advanceBusinessDate(flags.to);
    } catch (error) {
      if (error instanceof BusinessDateBackwards) throw new CommandError(error.message);
      throw error;
    }
  });
}

export async function coreDate(flags: CoreCommandFlags): Promise<{ businessDate: string }> {
  return withCoreOf(flags, 'coregate core date', async (core) => ({ businessDate: await core.businessDate() }));
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
