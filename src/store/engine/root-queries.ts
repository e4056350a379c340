/**
 * The root query builder of a store's database: a Kysely instance that also knows its dialect's
 * engine, so that a prepared query run outside any transaction goes straight to the driver, and
 * that opens the units of work (unit-of-work.ts). Kysely wraps every statement in several layers
 * of promises (acquire a connection, run, release, transform the result): on a retrieve, one
 * indexed read, that was about a third of the request's CPU on the event loop (measured, issue 9).
 */
import { Kysely, SingleConnectionProvider, Transaction, type CompiledQuery, type Dialect, type Driver, type QueryResult } from 'kysely';
import { UnitOfWork, type UnsyncedCommit } from './unit-of-work.js';

/** A dialect of this engine: it runs a statement outside any transaction without Kysely's executor. */
export interface EngineDialect extends Dialect {
  runOutsideTransaction<R>(query: CompiledQuery): Promise<QueryResult<R>>;
  /** The driver it created for the root instance (a unit of work's Kysely props name it). */
  readonly driver: Driver;
}

export class RootQueries<DB> extends Kysely<DB> {
  readonly #dialect: EngineDialect;

  constructor(dialect: EngineDialect) {
    super({ dialect });
    this.#dialect = dialect;
  }

  /** A statement outside any transaction, on the driver directly (prepared-query.ts). */
  runDirect<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    return this.#dialect.runOutsideTransaction<R>(query);
  }

  /** Runs `work` in a unit of work of its own: one transaction, committed when `work` succeeds (`synced`: database.ts). */
  inUnitOfWork<T>(work: (unit: UnitOfWork<DB>) => Promise<T>, options: { synced?: boolean } = {}): Promise<T> {
    const dialect = this.#dialect;
    const props = { config: { dialect }, dialect, driver: dialect.driver };
    if (options.synced !== false) return this.transaction().execute((trx) => UnitOfWork.within(trx, props, work));
    // Kysely's transaction, but the connection told before BEGIN that its commit need not be
    // synced: SQLite changes a connection's safety level only outside a transaction.
    const executor = this.getExecutor();
    return executor.provideConnection(async (connection) => {
      (connection as Partial<UnsyncedCommit>).commitWithoutSync?.();
      const trx = new Transaction<DB>({ ...props, executor: executor.withConnectionProvider(new SingleConnectionProvider(connection)) });
      let begun = false;
      try {
        await dialect.driver.beginTransaction(connection, {});
        begun = true;
        const value = await UnitOfWork.within(trx, props, work);
        await dialect.driver.commitTransaction(connection);
        return value;
      } catch (error) {
        if (begun) await dialect.driver.rollbackTransaction(connection);
        throw error;
      }
    });
  }
}
