/**
 * Frozen migration: sandbox scenarios and the request log (docs/sandbox.md; issue 27).
 * - operations.scenario: the scenario a request forced (JSON `{"name","delayMs"}`), kept after the
 *   operation is final so that the operator sees which scenario made which outcome;
 * - request_log: a sandbox's business API requests and answers as the client sent and received
 *   them, without credentials (src/sandbox/request-log.ts), newest first per client, kept 7 days
 *   and at most 10,000 per client.
 * Never edit a landed migration.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('operations').addColumn('scenario', 'text').execute();

  await db.schema
    .createTable('request_log')
    /** Time-ordered UUID: newest first is the order of ids too. */
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('client_key', 'text', (c) => c.notNull())
    .addColumn('recorded_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('recorded_epoch_ms', 'bigint', (c) => c.notNull())
    .addColumn('method', 'varchar(16)', (c) => c.notNull())
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('status', 'integer', (c) => c.notNull())
    .addColumn('correlation_id', 'text')
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('operation_reference', 'varchar(36)')
    .addColumn('scenario', 'varchar(32)')
    /** JSON objects: header names to values, the credentials left out. */
    .addColumn('request_headers', 'text', (c) => c.notNull())
    .addColumn('response_headers', 'text', (c) => c.notNull())
    /** The bodies as text (JSON as sent and answered), cut at the log's bound. */
    .addColumn('request_body', 'text')
    .addColumn('response_body', 'text')
    .execute();
  await db.schema.createIndex('request_log_client_recent').on('request_log').columns(['client_key', 'recorded_epoch_ms']).execute();
  await db.schema.createIndex('request_log_recent').on('request_log').column('recorded_epoch_ms').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('request_log').execute();
  await db.schema.alterTable('operations').dropColumn('scenario').execute();
}
