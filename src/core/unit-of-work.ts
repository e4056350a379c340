/**
 * A unit of work: one transaction of the caller's store, opaque to the core. The store implements
 * it (src/store/unit-of-work.ts); a core that shares the store (TransactionalCore) joins it, so that
 * its postings commit with the API's operation and audit records. Nothing else may look inside.
 */
export interface UnitOfWork {
  readonly isUnitOfWork: true;
}
