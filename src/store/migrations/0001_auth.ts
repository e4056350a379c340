/**
 * Frozen migration: the auth service's tables and the user/workstation directory.
 * Never edit a landed migration; add a new one.
 *
 * Issue 25: the reference core owns its tables and creates them with its own migrations
 * (src/reference-core/storage/migrations). The core's tables this migration made when the API
 * and the core shared one schema are made there now (`if not exists`: a database this migration
 * prepared before keeps them as they are); what is left here is the API's. The name stays.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('realms')
    .addColumn('name', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('audience', 'varchar(256)', (c) => c.notNull())
    .addColumn('lifespan_seconds', 'integer', (c) => c.notNull())
    .addColumn('signing_alg', 'varchar(16)', (c) => c.notNull())
    .addColumn('not_before', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('key_generation', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('clients')
    .addColumn('realm', 'varchar(64)', (c) => c.notNull().references('realms.name'))
    .addColumn('client_id', 'varchar(128)', (c) => c.notNull())
    .addColumn('service_account_id', 'varchar(36)', (c) => c.notNull().unique())
    .addColumn('secret_hash', 'varchar(64)', (c) => c.notNull())
    .addColumn('enabled', 'integer', (c) => c.notNull())
    .addColumn('grants', 'text', (c) => c.notNull())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('technical_user', 'varchar(128)')
    .addColumn('default_workstation', 'varchar(128)')
    .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('updated_at', 'varchar(32)', (c) => c.notNull())
    .addPrimaryKeyConstraint('clients_pk', ['realm', 'client_id'])
    .execute();

  await db.schema
    .createTable('signing_keys')
    .addColumn('kid', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('realm', 'varchar(64)', (c) => c.notNull().references('realms.name'))
    .addColumn('alg', 'varchar(16)', (c) => c.notNull())
    .addColumn('public_jwk', 'text', (c) => c.notNull())
    .addColumn('private_jwk', 'text', (c) => c.notNull())
    .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('retired_at', 'bigint')
    .execute();
  await db.schema.createIndex('signing_keys_realm').on('signing_keys').column('realm').execute();

  await db.schema
    .createTable('settings')
    .addColumn('name', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .execute();

}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['settings', 'signing_keys', 'clients', 'realms']) {
    await db.schema.dropTable(table).execute();
  }
}
