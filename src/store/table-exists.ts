/**
 * Whether this database's own schema holds a table (the search path's first schema on
 * PostgreSQL): Kysely's introspection lists every schema's tables, and a database shared by
 * several tests or tenants has other schemas.
 */
import { sql } from 'kysely';
import type { Store } from './connect.js';

export async function tableExists(store: Store, table: string): Promise<boolean> {
  const { rows } =
    store.dialect === 'postgres'
      ? await sql<{ name: string }>`select table_name as name from information_schema.tables where table_schema = current_schema() and table_name = ${table}`.execute(store.db)
      : await sql<{ name: string }>`select name from sqlite_master where type = 'table' and name = ${table}`.execute(store.db);
  return rows.length > 0;
}
