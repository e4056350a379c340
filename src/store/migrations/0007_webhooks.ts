/**
 * Frozen migration: signed events (docs/webhooks.md). Clients register webhook endpoints; every final
 * operation state and every maturity writes one event in the transaction of the change (the
 * outbox, `webhook_events`); a dispatcher fans each event out to the client's endpoints as
 * deliveries, which one instance at a time leases and sends until delivered or failed.
 * Never edit a landed migration.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('webhook_endpoints')
    .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
    /** The client the endpoint belongs to (auth service realm and client id). */
    .addColumn('realm', 'varchar(255)', (c) => c.notNull())
    .addColumn('client_id', 'varchar(255)', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    /** The whsec_ signing secret, sealed by the vault when COREGATE_MASTER_KEY is set. */
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(1))
    /** JSON array of event types; empty: every type. */
    .addColumn('event_types', 'text', (c) => c.notNull())
    .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhook_endpoints_client').on('webhook_endpoints').columns(['realm', 'client_id']).execute();

  await db.schema
    .createTable('webhook_events')
    /** The stable id: the webhook-id header of every delivery of the event. */
    .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('type', 'varchar(64)', (c) => c.notNull())
    .addColumn('realm', 'varchar(255)', (c) => c.notNull())
    .addColumn('client_id', 'varchar(255)', (c) => c.notNull())
    /** The operation the event is about, when it is about one. */
    .addColumn('reference', 'varchar(64)')
    /** The JSON body every delivery sends, byte for byte (it is what the signature covers). */
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('created_epoch_ms', 'bigint', (c) => c.notNull())
    /** 1 once fanned out to the endpoints as deliveries. */
    .addColumn('dispatched', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex('webhook_events_undispatched').on('webhook_events').columns(['dispatched', 'created_epoch_ms']).execute();

  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('event_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('endpoint_id', 'varchar(64)', (c) => c.notNull())
    /** pending | delivered | failed */
    .addColumn('status', 'varchar(16)', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_epoch_ms', 'bigint', (c) => c.notNull())
    /** The instance sending it now, until lease_until_epoch_ms; another instance takes it only after. */
    .addColumn('lease_owner', 'varchar(64)')
    .addColumn('lease_until_epoch_ms', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('last_status_code', 'integer')
    /** What went wrong last, in the deliverer's words (never a secret). */
    .addColumn('last_error', 'text')
    .addColumn('delivered_at', 'varchar(32)')
    .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('created_epoch_ms', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'varchar(32)', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhook_deliveries_event_endpoint').unique().on('webhook_deliveries').columns(['event_id', 'endpoint_id']).execute();
  await db.schema.createIndex('webhook_deliveries_due').on('webhook_deliveries').columns(['status', 'next_attempt_epoch_ms']).execute();
  await db.schema.createIndex('webhook_deliveries_created').on('webhook_deliveries').columns(['created_epoch_ms']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('webhook_deliveries').execute();
  await db.schema.dropTable('webhook_events').execute();
  await db.schema.dropTable('webhook_endpoints').execute();
}
