/**
 * Frozen migration: business days that move and end of day (docs/business-days.md):
 * the closed days, the core's outbox, installment status and the end of day's indexes.
 *
 * Issue 25: these are the reference core's, and the core creates them with its own migrations now
 * (src/reference-core/storage/migrations/0001_core_tables.ts, which also adds the installment
 * status to a table made before this migration). Nothing of it is the API's, so it does nothing;
 * the name stays, as the migrator expects every name it has recorded.
 */
import type { Kysely } from 'kysely';

export async function up(_db: Kysely<unknown>): Promise<void> {}

export async function down(_db: Kysely<unknown>): Promise<void> {}
