/**
 * Serializes administrative writes (data loading, key creation and rotation) across instances.
 * PostgreSQL: a transaction-scoped advisory lock. SQLite: the write lock of the transaction,
 * taken up front so that two processes cannot both read "no key" and both create one.
 */
import { sql, type Transaction } from 'kysely';
import type { Store } from './connect.js';
import type { Database } from './schema.js';

/**
 * An arbitrary constant naming coregate's administration lock; the reference core's loader takes
 * the same one, so that with the embedded core a load and a reset never interleave.
 */
export const adminLockId = 0x636f7265; // "core"

export async function lockForAdministration(store: Store, trx: Transaction<Database>): Promise<void> {
  if (store.dialect === 'postgres') {
    await sql`select pg_advisory_xact_lock(${adminLockId})`.execute(trx);
  } else {
    // A write at the start turns the deferred SQLite transaction into a write transaction.
    await sql`update settings set value = value where name = '__lock__'`.execute(trx);
  }
}
