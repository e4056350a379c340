/**
 * An operation's repository while its reference is being recorded. The reference's record (the
 * proof of at most once) and the operation's reads go out together — on PostgreSQL in one round
 * trip instead of two, the largest single cost of a deposit there being its round trips — but no
 * write may run before the record is known to be new: every write waits for it and, for a
 * reference that has an outcome already, fails without reaching the store.
 *
 * Default-deny: only the methods named here run at once; any other method, a new one included,
 * is a write and waits. The locks (`lockAccounts`, `lockInstallment`) change nothing: taken for
 * a repeat, they are released with its transaction.
 */
import type { CoreRepository } from './repository.js';

const readsBeforeRecord: ReadonlySet<PropertyKey> = new Set<keyof CoreRepository>([
  'lockAccounts',
  'findCustomer',
  'findAccount',
  'findProduct',
  'findTermDeposit',
  'findTermDepositByReference',
  'lockInstallment',
  'findFacility',
  'findInstallment',
  'findLoanExecutionByReference',
  'findOperation',
  'userStatus',
  'workstationStatus',
  'businessDate',
]);

/** A write asked for on behalf of a reference that already has an outcome: nothing was written. */
export class ReferenceNotNew extends Error {
  override name = 'ReferenceNotNew';
}

export function writesAfterRecord(repository: CoreRepository, recorded: Promise<boolean>): CoreRepository {
  return new Proxy(repository, {
    get(target, name) {
      const member: unknown = Reflect.get(target, name, target);
      if (typeof member !== 'function') return member;
      if (readsBeforeRecord.has(name)) return (member as (...args: unknown[]) => unknown).bind(target);
      return async (...args: unknown[]) => {
        if (!(await recorded)) throw new ReferenceNotNew(`a write for a reference that has an outcome already (${String(name)})`);
        return (member as (...args: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}
