/**
 * What a server with the embedded core applies at start: the API's migrations, then the reference
 * core's own (src/reference-core/storage/migrate-core.ts). Answers the names applied, the API's first.
 */
import { migrateCoreToLatest } from '../../src/reference-core/storage/migrate-core.js';
import type { Store } from '../../src/store/connect.js';
import { migrateToLatest } from '../../src/store/migrate.js';

export async function migrateEmbedded(store: Store): Promise<string[]> {
  return [...(await migrateToLatest(store)), ...(await migrateCoreToLatest(store))];
}
