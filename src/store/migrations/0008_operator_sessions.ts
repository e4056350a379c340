/**
 * Frozen migration: operator access to the console (issue 11). One-time login tokens, printed by
 * `coregate console` and by the sandbox banner, and the console sessions they open. Both are kept
 * only as SHA-256 hashes, in the database, so that every instance on one store accepts them.
 * Never edit a landed migration.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('operator_login_tokens')
    /** Hex SHA-256 of the token: the token itself is never stored. */
    .addColumn('token_hash', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('expires_epoch_ms', 'bigint', (c) => c.notNull())
    /** Set when the token opened a session: a token is used once. */
    .addColumn('used_epoch_ms', 'bigint')
    /** Who asked for it: "cli" or "banner". */
    .addColumn('issued_by', 'varchar(32)', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('operator_sessions')
    /** Hex SHA-256 of the session cookie's value. */
    .addColumn('session_hash', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('expires_epoch_ms', 'bigint', (c) => c.notNull())
    .addColumn('issued_by', 'varchar(32)', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('operator_sessions_expiry').on('operator_sessions').column('expires_epoch_ms').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('operator_sessions').execute();
  await db.schema.dropTable('operator_login_tokens').execute();
}
