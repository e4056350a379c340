/** Store-wide named values (for instance the sealed client-secret hash key). */
import { preparedQuery } from './prepared.js';
import type { Queryable } from './queryable.js';

const settingByName = preparedQuery((db, name: string) => db.selectFrom('settings').select('value').where('name', '=', name));

export async function getSetting(db: Queryable, name: string): Promise<string | undefined> {
  return (await settingByName.first(db, name))?.value;
}

/** Sets the value only if the name is unset, then answers the value that won (safe under races). */
export async function getOrInitSetting(db: Queryable, name: string, initial: () => string): Promise<string> {
  const existing = await getSetting(db, name);
  if (existing !== undefined) return existing;
  await db.insertInto('settings').values({ name, value: initial() }).onConflict((c) => c.column('name').doNothing()).execute();
  const value = await getSetting(db, name);
  if (value === undefined) throw new Error(`setting ${name} vanished after insert`);
  return value;
}

const settingUpsert = preparedQuery((db, name: string, value: string) =>
  db
    .insertInto('settings')
    .values({ name, value })
    .onConflict((c) => c.column('name').doUpdateSet({ value: (eb) => eb.ref('excluded.value') })),
);

/** Sets a value, replacing any earlier one. */
export async function putSetting(db: Queryable, name: string, value: string): Promise<void> {
  await settingUpsert.execute(db, name, value);
}
