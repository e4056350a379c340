/** OAuth client rows. Secrets are stored only as a keyed hash. */
import type { Insertable, Selectable } from 'kysely';
import type { Queryable } from './queryable.js';
import type { ExpressionBuilder } from 'kysely';
import type { ClientTable, Database } from './schema.js';
import type { ClientAuthentication, ClientJwks, TokenEndpointAuthMethod } from '../core/client-registration.js';

export type ClientRow = Selectable<ClientTable>;

export interface Client {
  realm: string;
  clientId: string;
  serviceAccountId: string;
  secretHash: string;
  enabled: boolean;
  grants: string[];
  scopes: string[];
  technicalUser: string | null;
  defaultWorkstation: string | null;
  createdAt: string;
  updatedAt: string;
  /** How it proves itself and how its tokens are bound (docs/auth.md, "Client metadata and the fapi2 profile"). */
  authentication: ClientAuthentication;
  /**
   * Epoch seconds: its tokens issued before are refused, and the token endpoint issues none
   * earlier (docs/auth.md, "Client revocation"). 0 when never set.
   */
  tokensNotBefore: number;
}

/** A client as it is created: nothing of it is revoked yet. */
export type NewClient = Omit<Client, 'tokensNotBefore'>;

/**
 * The client not-before of a revocation at `nowMs`: the first whole second after it. `iat` has a
 * resolution of one second, so this is the only value that refuses every token issued until now
 * and none issued afterwards (the token endpoint issues at `max(now, not-before)`).
 */
export function notBeforeAfter(nowMs: number): number {
  return Math.floor(nowMs / 1000) + 1;
}

export async function findClient(db: Queryable, realm: string, clientId: string): Promise<Client | undefined> {
  // PostgreSQL refuses a NUL in text (an error, not "none"): no client has one, so none is found.
  if (realm.includes('\u0000') || clientId.includes('\u0000')) return undefined;
  const row = await db
    .selectFrom('clients')
    .selectAll()
    .where('realm', '=', realm)
    .where('client_id', '=', clientId)
    .executeTakeFirst();
  return row && toClient(row);
}

export async function listClients(db: Queryable, realm: string): Promise<Client[]> {
  const rows = await db.selectFrom('clients').selectAll().where('realm', '=', realm).orderBy('client_id').execute();
  return rows.map(toClient);
}

/** Inserts the client unless one with its id exists in the realm; answers whether it inserted. */
export async function insertClientIfMissing(db: Queryable, client: NewClient): Promise<boolean> {
  const result = await db
    .insertInto('clients')
    .values(toRow(client))
    .onConflict((c) => c.columns(['realm', 'client_id']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
}

/**
 * `tokens_not_before` raised to `notBefore` (never lowered: a revocation is never undone, whatever
 * the clocks of the processes that made them), as an update's value.
 */
function raisedNotBefore(notBefore: number) {
  return (eb: ExpressionBuilder<Database, 'clients'>) => eb.case().when('tokens_not_before', '<', notBefore).then(notBefore).else(eb.ref('tokens_not_before')).end();
}

/** A new secret; the tokens obtained with the old one are revoked (not-before: `notBeforeAfter(nowMs)`). */
export async function updateClientSecretHash(db: Queryable, realm: string, clientId: string, secretHash: string, nowMs: number): Promise<boolean> {
  const result = await db
    .updateTable('clients')
    .set((eb) => ({ secret_hash: secretHash, tokens_not_before: raisedNotBefore(notBeforeAfter(nowMs))(eb), updated_at: new Date(nowMs).toISOString() }))
    .where('realm', '=', realm)
    .where('client_id', '=', clientId)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Enables or disables the client; disabling revokes its tokens (not-before: `notBeforeAfter(nowMs)`), which enabling does not bring back. */
export async function setClientEnabled(db: Queryable, realm: string, clientId: string, enabled: boolean, nowMs: number): Promise<boolean> {
  const result = await db
    .updateTable('clients')
    .set((eb) => ({
      enabled: enabled ? 1 : 0,
      ...(enabled ? {} : { tokens_not_before: raisedNotBefore(notBeforeAfter(nowMs))(eb) }),
      updated_at: new Date(nowMs).toISOString(),
    }))
    .where('realm', '=', realm)
    .where('client_id', '=', clientId)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** New public keys (private_key_jwt); the tokens obtained with the old ones are revoked (not-before: `notBeforeAfter(nowMs)`). */
export async function updateClientJwks(db: Queryable, realm: string, clientId: string, jwks: ClientJwks, nowMs: number): Promise<boolean> {
  const result = await db
    .updateTable('clients')
    .set((eb) => ({ jwks: JSON.stringify(jwks), tokens_not_before: raisedNotBefore(notBeforeAfter(nowMs))(eb), updated_at: new Date(nowMs).toISOString() }))
    .where('realm', '=', realm)
    .where('client_id', '=', clientId)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * Revokes every token the client holds (`coregate clients revoke-tokens`, the operator API): its
 * not-before becomes `notBeforeAfter(nowMs)` unless it is later already. Answers the client's
 * not-before as stored, or undefined when the client does not exist.
 */
export async function revokeClientTokens(db: Queryable, realm: string, clientId: string, nowMs: number): Promise<number | undefined> {
  const result = await db
    .updateTable('clients')
    .set((eb) => ({ tokens_not_before: raisedNotBefore(notBeforeAfter(nowMs))(eb), updated_at: new Date(nowMs).toISOString() }))
    .where('realm', '=', realm)
    .where('client_id', '=', clientId)
    .executeTakeFirst();
  if (result.numUpdatedRows === 0n) return undefined;
  return (await findClient(db, realm, clientId))?.tokensNotBefore;
}

function toClient(row: ClientRow): Client {
  return {
    realm: row.realm,
    clientId: row.client_id,
    serviceAccountId: row.service_account_id,
    secretHash: row.secret_hash,
    enabled: Number(row.enabled) === 1,
    grants: JSON.parse(row.grants) as string[],
    scopes: JSON.parse(row.scopes) as string[],
    technicalUser: row.technical_user,
    defaultWorkstation: row.default_workstation,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    authentication: {
      method: row.auth_method as TokenEndpointAuthMethod,
      jwks: row.jwks === null ? null : (JSON.parse(row.jwks) as ClientJwks),
      tlsSubjectDn: row.tls_subject_dn,
      dpopBound: Number(row.dpop_bound) === 1,
      certificateBound: Number(row.certificate_bound) === 1,
    },
    // PostgreSQL answers a bigint as a string.
    tokensNotBefore: Number(row.tokens_not_before),
  };
}

function toRow(client: NewClient): Insertable<ClientTable> {
  return {
    realm: client.realm,
    client_id: client.clientId,
    service_account_id: client.serviceAccountId,
    secret_hash: client.secretHash,
    enabled: client.enabled ? 1 : 0,
    grants: JSON.stringify(client.grants),
    scopes: JSON.stringify(client.scopes),
    technical_user: client.technicalUser,
    default_workstation: client.defaultWorkstation,
    created_at: client.createdAt,
    updated_at: client.updatedAt,
    auth_method: client.authentication.method,
    jwks: client.authentication.jwks === null ? null : JSON.stringify(client.authentication.jwks),
    tls_subject_dn: client.authentication.tlsSubjectDn,
    dpop_bound: client.authentication.dpopBound ? 1 : 0,
    certificate_bound: client.authentication.certificateBound ? 1 : 0,
  };
}
