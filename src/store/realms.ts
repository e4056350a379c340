/** Realm rows: lifespan, audience, signing algorithm, not-before and the key generation. */
import type { Selectable } from 'kysely';
import type { RealmTable } from './schema.js';
import type { Queryable } from './queryable.js';

export type Realm = Selectable<RealmTable>;

export async function findRealm(db: Queryable, name: string): Promise<Realm | undefined> {
  // PostgreSQL refuses a NUL in text (an error, not "none"): no realm has one, so none is found.
  if (name.includes('\u0000')) return undefined;
  const row = await db.selectFrom('realms').selectAll().where('name', '=', name).executeTakeFirst();
  return row && normalizeRealm(row);
}

export async function listRealms(db: Queryable): Promise<Realm[]> {
  const rows = await db.selectFrom('realms').selectAll().orderBy('name').execute();
  return rows.map(normalizeRealm);
}

export async function insertRealmIfMissing(db: Queryable, realm: Realm): Promise<void> {
  await db.insertInto('realms').values(realm).onConflict((c) => c.column('name').doNothing()).execute();
}

export async function setRealmNotBefore(db: Queryable, name: string, notBefore: number): Promise<boolean> {
  const result = await db.updateTable('realms').set({ not_before: notBefore }).where('name', '=', name).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function bumpKeyGeneration(db: Queryable, name: string, signingAlg: string): Promise<void> {
  await db
    .updateTable('realms')
    .set((eb) => ({ key_generation: eb('key_generation', '+', 1), signing_alg: signingAlg }))
    .where('name', '=', name)
    .execute();
}

/** PostgreSQL returns bigint columns as strings; the realm's numbers are small integers. */
function normalizeRealm(row: Realm): Realm {
  return {
    ...row,
    lifespan_seconds: Number(row.lifespan_seconds),
    not_before: Number(row.not_before),
    key_generation: Number(row.key_generation),
  };
}
