/**
 * Frozen migration: merchandising loan facilities, their repayment schedules and executions.
 *
 * Issue 25: these are the reference core's tables, and the core creates them with its own
 * migrations now (src/reference-core/storage/migrations/0001_core_tables.ts, `if not exists`: a
 * database this migration prepared before keeps them). Nothing of it is the API's, so it does
 * nothing; the name stays, as the migrator expects every name it has recorded.
 */
import type { Kysely } from 'kysely';

export async function up(_db: Kysely<unknown>): Promise<void> {}

export async function down(_db: Kysely<unknown>): Promise<void> {}
