/**
 * The store side of business days (docs/business-days.md): the business date (a core_settings row
 * read by primary key), the closed days (the per-day claim) and the core's outbox of events.
 */
import type { Selectable } from 'kysely';
import type { CoreEvent } from '../../core/port.js';
import type { CoreDb } from './core-db.js';
import type { CoreEventTable } from './core-schema.js';
import { getCoreSetting } from './core-settings.js';

/** The core_settings row that holds the core's business date (YYYY-MM-DD). */
export const businessDateSetting = 'core.business_date';

export async function readBusinessDate(db: CoreDb): Promise<string> {
  const value = await getCoreSetting(db, businessDateSetting);
  if (value === undefined) throw new Error(`the core's store has no business date (setting ${businessDateSetting}): start the core once, or load a data file`);
  return value;
}

/**
 * Moves the business date to `to` only if that is later: a concurrent or repeated advance can
 * never move it back (YYYY-MM-DD strings compare as dates).
 */
export async function moveBusinessDateForward(db: CoreDb, to: string): Promise<void> {
  await db.updateTable('core_settings').set({ value: to }).where('name', '=', businessDateSetting).where('value', '<', to).execute();
}

/**
 * Claims a business day's end of day: the first statement of the day's transaction, a write (so
 * that SQLite takes its write lock at once). False when the day is closed already, or when a
 * concurrent transaction claimed it and committed (PostgreSQL makes this insert wait for it).
 */
export async function claimBusinessDay(db: CoreDb, day: string, closedAt: string): Promise<boolean> {
  const result = await db
    .insertInto('core_business_days')
    .values({ business_date: day, closed_at: closedAt, matured_deposits: 0, overdue_installments: 0 })
    .onConflict((c) => c.column('business_date').doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
}

export async function recordBusinessDayCounts(db: CoreDb, day: string, counts: { maturedDeposits: number; overdueInstallments: number }): Promise<void> {
  await db
    .updateTable('core_business_days')
    .set({ matured_deposits: counts.maturedDeposits, overdue_installments: counts.overdueInstallments })
    .where('business_date', '=', day)
    .execute();
}

export async function listClosedBusinessDays(db: CoreDb): Promise<Array<{ businessDate: string; maturedDeposits: number; overdueInstallments: number }>> {
  const rows = await db.selectFrom('core_business_days').selectAll().orderBy('business_date').execute();
  return rows.map((row) => ({ businessDate: row.business_date, maturedDeposits: Number(row.matured_deposits), overdueInstallments: Number(row.overdue_installments) }));
}

export async function insertCoreEvent(db: CoreDb, event: Omit<CoreEvent, 'sequence'>, createdAt: string): Promise<void> {
  await db
    .insertInto('core_events')
    .values({
      id: event.id,
      type: event.type,
      business_date: event.businessDate,
      operation_reference: event.operationReference,
      data: JSON.stringify(event.data),
      created_at: createdAt,
    })
    .execute();
}

export async function listCoreEventsAfter(db: CoreDb, sequence: number, limit: number): Promise<CoreEvent[]> {
  const rows = await db.selectFrom('core_events').selectAll().where('sequence', '>', sequence).orderBy('sequence').limit(limit).execute();
  return rows.map(toCoreEvent);
}

function toCoreEvent(row: Selectable<CoreEventTable>): CoreEvent {
  return {
    sequence: Number(row.sequence),
    id: row.id,
    type: row.type as CoreEvent['type'],
    businessDate: row.business_date,
    operationReference: row.operation_reference,
    data: JSON.parse(row.data) as Record<string, unknown>,
  };
}
