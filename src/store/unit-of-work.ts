/**
 * The store's implementation of the core's UnitOfWork: one Kysely transaction. The application
 * layer runs an operation in `inUnitOfWork`; the embedded reference core joins it through
 * `transactionOf`, so that operation record, postings and audit record commit together.
 */
import type { Transaction } from 'kysely';
import type { UnitOfWork } from '../core/unit-of-work.js';
import type { Store } from './connect.js';
import type { Database } from './schema.js';

export class StoreUnitOfWork implements UnitOfWork {
  readonly isUnitOfWork = true as const;

  constructor(
    /** The transaction: for the store's repository functions only. */
    readonly db: Transaction<Database>,
    /** Which store opened it: a core joins only a unit of work of its own store. */
    readonly store: Store,
  ) {}
}

export function inUnitOfWork<T>(store: Store, work: (unitOfWork: StoreUnitOfWork) => Promise<T>): Promise<T> {
  return store.transaction((trx) => work(new StoreUnitOfWork(trx, store)));
}

/** The transaction of a unit of work of `store`; anything else is a wiring error. */
export function transactionOf(unitOfWork: UnitOfWork, store: Store): Transaction<Database> {
  if (!(unitOfWork instanceof StoreUnitOfWork) || unitOfWork.store !== store) {
    throw new Error('the unit of work belongs to another store: the embedded core shares the API\'s store only');
  }
  return unitOfWork.db;
}
