/**
 * Migrates the stores named on the command line to the latest schema and closes them cleanly:
 * scripts/test.mjs makes the run's templates with it (test/helpers/stores.ts copies them per
 * suite). It applies exactly what a server applies at start, so a copy's start has nothing left to
 * migrate. Usage: `node dist/test/helpers/migrate-template.js <store URL>...` (built by scripts/test.mjs), or `node --import tsx test/helpers/migrate-template.ts <store URL>...`.
 */
import { openStore } from '../../src/store/connect.js';
import { migrateEmbedded } from './migrate-embedded.js';

for (const url of process.argv.slice(2)) {
  const store = await openStore(url);
  try {
    await migrateEmbedded(store);
  } finally {
    await store.close();
  }
}
