/**
 * The name of the database an audit spool's records belong to (audit-spool.ts): a random id kept
 * in the database's own settings, made by the first instance that needs it. Spool files carry it
 * in their names, so that a directory shared by instances of different databases (a developer's
 * `./data`, two deployments on one host) never drains one database's records into another's chain.
 */
import { randomBytes } from 'node:crypto';
import type { Queryable } from '../store/queryable.js';
import { getOrInitSetting } from '../store/settings.js';

/** Kept by a sandbox reset (src/sandbox/reset.ts): the database stays the same one for the spool. */
export const spoolDatabaseIdSetting = 'audit.spool_database_id';

export async function spoolDatabaseId(db: Queryable): Promise<string> {
  return getOrInitSetting(db, spoolDatabaseIdSetting, () => randomBytes(8).toString('hex'));
}
