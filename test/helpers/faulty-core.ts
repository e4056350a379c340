/**
 * A fault-injecting wrapper of the core port: the only mock the tests use (DEVELOPERS.md). Each
 * fault applies to the next write operations until cleared.
 */
import { CoreUnavailable, type CoreBankingPort, type UnitOfWork } from '../../src/core/port.js';
import { sleep } from './wait.js';

export type Fault =
  | { kind: 'none' }
  /** Throws CoreUnavailable before the core does anything (502, nothing written). */
  | { kind: 'unavailable' }
  /** Lets the core write in the unit of work, then answers only after `delayMs` (504 if longer than the time-out; the work still commits). */
  | { kind: 'slow-after-commit'; delayMs: number }
  /** Waits `delayMs`, then throws CoreUnavailable: the unit of work rolls back (504, nothing written). */
  | { kind: 'slow-then-fail'; delayMs: number };

export class FaultyCore {
  fault: Fault = { kind: 'none' };
  /** How many write operations reached the wrapped core. */
  writes = 0;

  /** Runs `work` under `fault`, and clears the fault afterwards even when `work` throws. */
  async withFault<T>(fault: Fault, work: () => Promise<T>): Promise<T> {
    this.fault = fault;
    try {
      return await work();
    } finally {
      this.fault = { kind: 'none' };
    }
  }

  wrap = (inner: CoreBankingPort): CoreBankingPort => {
    const guard = async <T>(work: () => Promise<T>): Promise<T> => {
      const fault = this.fault;
      if (fault.kind === 'unavailable') throw new CoreUnavailable('injected: core unavailable');
      if (fault.kind === 'slow-then-fail') {
        await sleep(fault.delayMs);
        throw new CoreUnavailable('injected: core failed after a delay');
      }
      this.writes += 1;
      const result = await work();
      if (fault.kind === 'slow-after-commit') await sleep(fault.delayMs);
      return result;
    };
    const wrapped: CoreBankingPort = Object.create(inner) as CoreBankingPort;
    wrapped.initiateTermDeposit = (uow: UnitOfWork, reference, command) => guard(() => inner.initiateTermDeposit(uow, reference, command));
    wrapped.executeLoanInstallment = (uow: UnitOfWork, reference, command, executedAt) =>
      guard(() => inner.executeLoanInstallment(uow, reference, command, executedAt));
    wrapped.findLoanExecutionByReference = (reference) => inner.findLoanExecutionByReference(reference);
    wrapped.retrieveTermDeposit = (id) => inner.retrieveTermDeposit(id);
    wrapped.findTermDepositByReference = (reference) => inner.findTermDepositByReference(reference);
    wrapped.userStatus = (login) => inner.userStatus(login);
    wrapped.workstationStatus = (id) => inner.workstationStatus(id);
    wrapped.calendar = () => inner.calendar();
    return wrapped;
  };
}
