/** Signing key rows: one active key per realm (retired_at null), retired ones kept for verification. */
import type { Selectable } from 'kysely';
import type { Queryable } from './queryable.js';
import type { SigningKeyTable } from './schema.js';

export type SigningKeyRow = Selectable<SigningKeyTable>;

export async function listSigningKeys(db: Queryable, realm: string): Promise<SigningKeyRow[]> {
  const rows = await db.selectFrom('signing_keys').selectAll().where('realm', '=', realm).orderBy('created_at').execute();
  return rows.map((row) => ({ ...row, retired_at: row.retired_at === null ? null : Number(row.retired_at) }));
}

export async function insertSigningKey(db: Queryable, key: SigningKeyRow): Promise<void> {
  await db.insertInto('signing_keys').values(key).execute();
}

export async function retireActiveKeys(db: Queryable, realm: string, retiredAt: number): Promise<void> {
  await db.updateTable('signing_keys').set({ retired_at: retiredAt }).where('realm', '=', realm).where('retired_at', 'is', null).execute();
}
