/** OAuth client rows. Secrets are stored only as a keyed hash. */
import type { Selectable } from 'kysely';
import type { Queryable } from './realms.js';
import type { ClientTable } from './schema.js';
import type { ClientAuthentication, ClientJwks, TokenEndpointAuthMethod } from '../auth/client-metadata.js';

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
  /** How it proves itself and how its tokens are bound (CONTRACT §13). */
  authentication: ClientAuthentication;
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
export async function insertClientIfMissing(db: Queryable, client: Client): Promise<boolean> {
  const result = await db
    .insertInto('clients')
    .values(toRow(client))
    .onConflict((c) => c.columns(['realm', 'client_id']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
}

export async function updateClientSecretHash(db: Queryable, realm: string, clientId: string, secretHash: string): Promise<boolean> {
  const result = await db
    .updateTable('clients')
    .set({ secret_hash: secretHash, updated_at: new Date().toISOString() })
    .where('realm', '=', realm)
    .where('client_id', '=', clientId)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function setClientEnabled(db: Queryable, realm: string, clientId: string, enabled: boolean): Promise<boolean> {
  const result = await db
    .updateTable('clients')
    .set({ enabled: enabled ? 1 : 0, updated_at: new Date().toISOString() })
    .where('realm', '=', realm)
    .where('client_id', '=', clientId)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
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
  };
}

function toRow(client: Client): ClientRow {
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
