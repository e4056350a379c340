/**
 * Statements outside a transaction, run by the store's own driver without Kysely's executor.
 * Kysely wraps every statement in several layers of promises (acquire a connection, run, release,
 * transform the result): on a retrieve, one indexed read, that was about a third of the
 * request's CPU on the event loop (measured, issue 9). Prepared queries (prepared-query.ts) run
 * outside a transaction through the runner the store registered for its Kysely instance; a
 * transaction is another object, has no runner, and keeps its statement queue.
 */
import type { CompiledQuery, QueryResult } from 'kysely';

export type DirectRunner = <R>(query: CompiledQuery) => Promise<QueryResult<R>>;

const runners = new WeakMap<object, DirectRunner>();

/** Registers how `db` (a store's root Kysely instance) runs a statement outside any transaction. */
export function runDirectlyOn(db: object, runner: DirectRunner): void {
  runners.set(db, runner);
}

/** The runner of a store's root instance; undefined for a transaction or anything else. */
export function directRunnerOf(db: object): DirectRunner | undefined {
  return runners.get(db);
}
