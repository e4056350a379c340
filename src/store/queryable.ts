/**
 * The API's database as a query sees it: the root handle or a transaction (a unit of work's), so
 * that one function serves both a statement on its own and a step of a larger transaction.
 */
import type { Kysely, Transaction } from 'kysely';
import type { Database } from './schema.js';

export type Queryable = Kysely<Database> | Transaction<Database>;
