/** The core's directory of users and workstations, checked by the business API (docs/api.md, "Tokens"). */
import type { CoreDb } from './core-db.js';

export async function insertUserIfMissing(db: CoreDb, login: string, status: string): Promise<void> {
  await db.insertInto('directory_users').values({ login, status }).onConflict((c) => c.column('login').doNothing()).execute();
}

export async function insertWorkstationIfMissing(db: CoreDb, id: string, status: string): Promise<void> {
  await db.insertInto('workstations').values({ id, status }).onConflict((c) => c.column('id').doNothing()).execute();
}

export async function findUserStatus(db: CoreDb, login: string): Promise<string | undefined> {
  const row = await db.selectFrom('directory_users').select('status').where('login', '=', login).executeTakeFirst();
  return row?.status;
}

export async function findWorkstationStatus(db: CoreDb, id: string): Promise<string | undefined> {
  const row = await db.selectFrom('workstations').select('status').where('id', '=', id).executeTakeFirst();
  return row?.status;
}
