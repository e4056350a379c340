/**
 * Frozen migration: client revocation (docs/auth.md, "Client revocation").
 * - clients.tokens_not_before: epoch seconds; the client's tokens issued before it are refused
 *   (business API, operator API, introspection), as the realm's not-before does for the whole
 *   realm. Raised to the first whole second after now when the client is disabled, its secret
 *   rotated, its keys replaced or its tokens revoked (`coregate clients revoke-tokens`); the token
 *   endpoint issues the client's tokens no earlier. 0 when never set: a client of an upgraded
 *   store keeps its tokens.
 * Never edit a landed migration.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('clients').addColumn('tokens_not_before', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('clients').dropColumn('tokens_not_before').execute();
}
