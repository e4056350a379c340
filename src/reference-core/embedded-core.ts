/**
 * The reference core over a store: its migrations, then the core itself. Shared by the API's
 * embedded core (src/main.ts), `coregate core serve` (src/core-http/core-service.ts) and the CLI's
 * embedded sessions (src/cli/core-session.ts). Kept apart from the core's HTTP service so that an
 * operator command loads neither Fastify nor the HTTP client (docs/performance.md, "CLI start").
 */
import { systemClock } from '../clock/system-clock.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../log.js';
import type { Store } from '../store/connect.js';
import { ReferenceCore } from './reference-core.js';
import { coreDataLoad } from './storage/core-data-load.js';
import { coreTablesOf } from './storage/core-db.js';
import { coreRecords } from './storage/core-records.js';
import { readBusinessCalendar } from './storage/load-core-data.js';
import { migrateCoreToLatest } from './storage/migrate-core.js';
import { coreStorage } from './storage/reference-core-repository.js';

/**
 * The reference core's own migrations (src/reference-core/storage/migrate-core.ts) on `store`:
 * the core's database, or the API's with the embedded core. Never on an API whose core is remote.
 */
export async function migrateEmbeddedCore(store: Store, logger?: Logger): Promise<void> {
  const applied = await migrateCoreToLatest(store);
  if (applied.length > 0) logger?.info({ migrations: applied, db: store.displayUrl }, 'core migrations applied');
}

/** The reference core over a store its migrations prepared, on the stored business date (`businessDate`: a new store's). */
export async function referenceCoreOn(store: Store, businessDate: string | undefined, clock: Clock = systemClock): Promise<ReferenceCore> {
  const db = coreTablesOf(store.db);
  const calendar = await readBusinessCalendar(db, businessDate, clock);
  return new ReferenceCore({ storage: coreStorage(store, clock), records: coreRecords(db), data: coreDataLoad(store, clock), calendar, clock });
}
