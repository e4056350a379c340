/**
 * Frozen migration: business days that move and end of day (CONTRACT §12, docs/business-days.md).
 * - core_business_days: one row per business day whose end of day ran, written in the day's own
 *   transaction first (the claim: a unique insert), so that a day closes once, whoever tries.
 * - core_events: the core's outbox, written in the transaction of the change; `sequence` orders it.
 * - loan_installments.status: Pending, Overdue (set at end of day) or Paid.
 * - indexes for the end of day's scans (maturing deposits, installments past due).
 * Never edit a landed migration.
 */
import { sql, type Kysely } from 'kysely';

function isPostgres(db: Kysely<unknown>): boolean {
  return db.getExecutor().adapter.constructor.name.startsWith('Postgres');
}

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('core_business_days')
    .addColumn('business_date', 'varchar(10)', (c) => c.primaryKey())
    .addColumn('closed_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('matured_deposits', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('overdue_installments', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();

  await db.schema
    .createTable('core_events')
    .addColumn('sequence', isPostgres(db) ? sql`bigserial` : 'integer', (c) => (isPostgres(db) ? c.primaryKey() : c.primaryKey().autoIncrement()))
    .addColumn('id', 'varchar(36)', (c) => c.notNull().unique())
    .addColumn('type', 'varchar(64)', (c) => c.notNull())
    .addColumn('business_date', 'varchar(10)', (c) => c.notNull())
    .addColumn('operation_reference', 'varchar(64)')
    .addColumn('data', 'text', (c) => c.notNull())
    .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
    .execute();

  await db.schema.alterTable('loan_installments').addColumn('status', 'varchar(16)', (c) => c.notNull().defaultTo('Pending')).execute();
  await sql`update loan_installments set status = 'Paid' where paid_minor >= amount_minor`.execute(db);
  await db.schema.createIndex('loan_installments_due').on('loan_installments').columns(['status', 'due_date']).execute();
  await db.schema.createIndex('term_deposits_maturing').on('term_deposits').columns(['status', 'maturity_date']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('term_deposits_maturing').execute();
  await db.schema.dropIndex('loan_installments_due').execute();
  await db.schema.alterTable('loan_installments').dropColumn('status').execute();
  await db.schema.dropTable('core_events').execute();
  await db.schema.dropTable('core_business_days').execute();
}
