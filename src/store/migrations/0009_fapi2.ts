/**
 * Frozen migration: FAPI 2.0 for machine to machine (docs/auth.md, "FAPI 2.0: strong client
 * authentication and sender-constrained tokens"; issue 26).
 * - realms: the `fapi2` profile and whether DPoP proofs need a server nonce;
 * - clients: one authentication method each (a secret, `private_key_jwt` with the client's public
 *   keys, or `tls_client_auth` with the certificate's subject DN) and the binding of its tokens
 *   (DPoP, the TLS client certificate). A client without a secret keeps an empty `secret_hash`,
 *   which no secret matches;
 * - replay_records: the `jti`s of client assertions and DPoP proofs already used, one row each
 *   under a unique key, so that an instance inserting one that another instance inserted first is
 *   refused by the database itself; kept until the assertion or proof could no longer be accepted.
 * Never edit a landed migration.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('realms').addColumn('profile', 'varchar(16)').execute();
  await db.schema.alterTable('realms').addColumn('dpop_nonce', 'integer', (c) => c.notNull().defaultTo(0)).execute();

  await db.schema.alterTable('clients').addColumn('auth_method', 'varchar(32)', (c) => c.notNull().defaultTo('client_secret_basic')).execute();
  /** JSON `{"keys": [...]}`: the client's public keys (private_key_jwt). */
  await db.schema.alterTable('clients').addColumn('jwks', 'text').execute();
  await db.schema.alterTable('clients').addColumn('tls_subject_dn', 'text').execute();
  await db.schema.alterTable('clients').addColumn('dpop_bound', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('clients').addColumn('certificate_bound', 'integer', (c) => c.notNull().defaultTo(0)).execute();

  await db.schema
    .createTable('replay_records')
    /** Hex SHA-256 of what names the use (the kind, the client or the proof's key, the jti): a jti is the caller's text. */
    .addColumn('key', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('expires_epoch_ms', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('replay_records_expiry').on('replay_records').column('expires_epoch_ms').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('replay_records').execute();
  for (const column of ['certificate_bound', 'dpop_bound', 'tls_subject_dn', 'jwks', 'auth_method']) await db.schema.alterTable('clients').dropColumn(column).execute();
  for (const column of ['dpop_nonce', 'profile']) await db.schema.alterTable('realms').dropColumn(column).execute();
}
