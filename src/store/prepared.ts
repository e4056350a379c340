/**
 * The engine's prepared queries (engine/prepared-query.ts) bound to the store's schema: their
 * builders see its tables, typed. The engine itself knows no schema.
 */
import { preparedQueriesFor } from './engine/prepared-query.js';
import type { Database } from './schema.js';

export const { preparedQuery, preparedQueryOfArity, preparedInsert } = preparedQueriesFor<Database>();
export { preparedInsertRowsMax, type PreparedQuery } from './engine/prepared-query.js';
