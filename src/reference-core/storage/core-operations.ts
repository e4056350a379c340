/** The reference core's memory of operation references: at most once, refusals included. */
import type { ErrorName } from '../../core/error-catalogue.js';
import { isErrorName } from '../../core/error-catalogue.js';
import type { CoreOperationKind, CoreOperationRecord } from '../repository.js';
import type { Insertable } from 'kysely';
import { type CoreDb, preparedInsert } from './core-db.js';
import type { CoreOperationTable } from './core-schema.js';

/** Inserts the reference's outcome unless it has one; answers whether it was inserted. */
const coreOperationInsert = preparedInsert<Insertable<CoreOperationTable>>(
  ['reference', 'kind', 'status', 'refusal_name', 'refusal_message', 'recorded_at'],
  (db, rows) => db.insertInto('core_operations').values(rows).onConflict((c) => c.column('reference').doNothing()),
);

export async function recordCoreOperation(db: CoreDb, record: CoreOperationRecord, recordedAt: string): Promise<boolean> {
  const result = await coreOperationInsert.execute(db, {
    reference: record.reference,
    kind: record.kind,
    status: record.status,
    refusal_name: record.status === 'Rejected' ? record.refusalName : null,
    refusal_message: record.status === 'Rejected' ? record.refusalMessage : null,
    recorded_at: recordedAt,
  });
  return Number(result.numAffectedRows ?? 0n) > 0;
}

export async function findCoreOperation(db: CoreDb, reference: string): Promise<CoreOperationRecord | undefined> {
  const row = await db.selectFrom('core_operations').selectAll().where('reference', '=', reference).executeTakeFirst();
  if (!row) return undefined;
  const kind = row.kind as CoreOperationKind;
  if (row.status === 'Executed') return { reference, kind, status: 'Executed' };
  const name = row.refusal_name ?? '';
  if (!isErrorName(name)) throw new Error(`core operation ${reference} has an unknown refusal ${name}`);
  return { reference, kind, status: 'Rejected', refusalName: name satisfies ErrorName, refusalMessage: row.refusal_message ?? '' };
}
