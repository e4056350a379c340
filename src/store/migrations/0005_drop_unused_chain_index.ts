/**
 * Frozen migration: audit_records_unchained (chain_seq, recorded_at) duplicated the unique index
 * on chain_seq, which both SQLite and PostgreSQL use for `chain_seq is null` (SQLite's planner
 * never chose the other). Every audit record paid for it twice, on insert and when chained: pages
 * the commit writes for nothing. Never edit a landed migration.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('audit_records_unchained').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('audit_records_unchained').on('audit_records').columns(['chain_seq', 'recorded_at']).execute();
}
