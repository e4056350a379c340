/**
 * The reference core's view of a database: its own tables only (core-schema.ts). With the
 * embedded core the core's tables sit in the API's database, whose Kysely type names the API's
 * tables only; the core retypes that handle here, at its entry (reference-core-repository.ts,
 * embedded-core.ts), so that none of its queries can name an API table, and no API query a core
 * table: the compiler refuses either.
 */
import type { Kysely, Transaction } from 'kysely';
import { preparedQueriesFor } from '../../store/engine/prepared-query.js';
import type { Database } from '../../store/schema.js';
import type { CoreTables } from './core-schema.js';

/** What the core's storage functions query: the database or a transaction, seeing the core's tables. */
export type CoreDb = Kysely<CoreTables> | Transaction<CoreTables>;

/** The engine's prepared queries, their builders typed over the core's tables. */
export const { preparedQuery, preparedInsert } = preparedQueriesFor<CoreTables>();

/**
 * The store's handle (typed over the API's tables), typed over the core's instead: with the
 * embedded core both live in that one database. Kysely's types are invariant in the schema (a
 * `Kysely<A>` is no `Kysely<B>` to the compiler, through `transaction()`), while the object is the
 * same and names its tables by string at run time: a view, never a copy.
 */
export function coreTablesOf(db: Transaction<Database>): Transaction<CoreTables>;
export function coreTablesOf(db: Kysely<Database>): Kysely<CoreTables>;
export function coreTablesOf(db: Kysely<Database> | Transaction<Database>): CoreDb;
export function coreTablesOf(db: unknown): unknown {
  return db;
}
