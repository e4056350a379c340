/**
 * The reference core's load side for sandbox data (CoreDataLoad in src/core/port.ts): the data
 * file's core part, checked with the core's part of the data file's schema (core-data-file.ts) and loaded with its own rules (only
 * missing records are added, in one transaction, under the administration lock). The API's part
 * (realms, webhooks) is refused here: it belongs to the API's database, never to the core's.
 */
import { CoreDataRefused, coreDataSections, type CoreDataLoad } from '../../core/port.js';
import type { CoreData } from '../core-data-file.js';
import { sql, type Transaction } from 'kysely';
import { adminLockId } from '../../store/admin-lock.js';
import type { Store } from '../../store/connect.js';
import type { Clock } from '../../core/clock.js';
import { coreTablesOf } from './core-db.js';
import type { CoreTables } from './core-schema.js';
import { loadCoreData } from './load-core-data.js';

/** `clock`: the core's (the loaded records' creation time, a new store's business date). */
export function coreDataLoad(store: Store, clock: Clock): CoreDataLoad {
  return {
    async loadData(document) {
      const foreign = Object.keys(document).find((section) => !(coreDataSections as readonly string[]).includes(section));
      if (foreign !== undefined) {
        throw new CoreDataRefused(foreign, `${foreign} is not the core's: the core takes ${coreDataSections.join(', ')}; realms and webhooks belong to the API (coregate serve --data)`);
      }
      // The data file's checker (TypeBox) loads with the first load: an operator command never needs it.
      const { DataFileError, parseCoreData } = await import('../core-data-file.js');
      let data: CoreData;
      try {
        data = parseCoreData(document, 'core data');
      } catch (error) {
        if (error instanceof DataFileError) throw new CoreDataRefused(error.field, error.message);
        throw error;
      }
      return loadCoreSandboxData(store, data, clock);
    },
  };
}

/**
 * The core's sections of a data file (directory, calendar, customers, accounts, products, loans)
 * into the core's own tables: only missing records are added, in one transaction, under the
 * core's loading lock.
 */
export async function loadCoreSandboxData(store: Store, data: CoreData, clock: Clock): Promise<{ accountsAdded: number }> {
  return coreTablesOf(store.db).transaction().execute(async (trx) => {
    await lockForLoading(store, trx);
    return loadCoreData(trx, data, clock);
  });
}

/**
 * Two loads (two instances of the core starting on one database) run one after the other: an
 * advisory lock on PostgreSQL; on SQLite a first write (to the core's own table) takes the
 * database's write lock.
 */
async function lockForLoading(store: Store, trx: Transaction<CoreTables>): Promise<void> {
  if (store.dialect === 'postgres') await sql`select pg_advisory_xact_lock(${adminLockId})`.execute(trx);
  else await sql`update core_settings set value = value where name = '__lock__'`.execute(trx);
}
