/**
 * The reference core's named values (`core_settings`, its migration 0001): the business date and
 * the calendar. The core's own table, not the API's `settings`, so that a core in its own
 * database needs none of the API's tables and an API with a remote core holds none of the core's.
 */
import { type CoreDb, preparedQuery } from './core-db.js';

const coreSettingByName = preparedQuery((db, name: string) => db.selectFrom('core_settings').select('value').where('name', '=', name));

export async function getCoreSetting(db: CoreDb, name: string): Promise<string | undefined> {
  return (await coreSettingByName.first(db, name))?.value;
}

/** Sets the value only if the name is unset, then answers the value that won (safe under races). */
export async function getOrInitCoreSetting(db: CoreDb, name: string, initial: () => string): Promise<string> {
  const existing = await getCoreSetting(db, name);
  if (existing !== undefined) return existing;
  await db.insertInto('core_settings').values({ name, value: initial() }).onConflict((c) => c.column('name').doNothing()).execute();
  const value = await getCoreSetting(db, name);
  if (value === undefined) throw new Error(`core setting ${name} vanished after insert`);
  return value;
}

/** Sets a value, replacing any earlier one. */
export async function putCoreSetting(db: CoreDb, name: string, value: string): Promise<void> {
  await db
    .insertInto('core_settings')
    .values({ name, value })
    .onConflict((c) => c.column('name').doUpdateSet({ value: (eb) => eb.ref('excluded.value') }))
    .execute();
}
