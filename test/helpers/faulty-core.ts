/**
 * A fault-injecting wrapper of the core port: the only mock the tests use (DEVELOPERS.md). Each
 * fault applies to the next write operations until cleared. With the embedded reference core the
 * faults apply inside the API's unit of work as well (`within`).
 */
import { CoreUnavailable, isTransactional, type CoreBankingPort, type TransactionalCore } from '../../src/core/port.js';
import { Gate } from './gate.js';
import { sleep } from './wait.js';

export type Fault =
  | { kind: 'none' }
  /** Throws CoreUnavailable before the core does anything (502, nothing written). */
  | { kind: 'unavailable' }
  /** Lets the core write, then answers only after `delayMs` (504 if longer than the time-out; the work still commits). */
  | { kind: 'slow-after-commit'; delayMs: number }
  /**
   * Lets the core write, then holds the answer until the test calls release(): with a fake clock
   * moved past the time-out, "commit, then time out" without any delay (the work commits once released).
   */
  | { kind: 'commit-then-hold' }
  /**
   * Holds the call before the core sees it until the test calls release(), then throws
   * CoreUnavailable: with a fake clock moved past the time-out, "time out, then fail" without any
   * delay (504; the unit of work rolls back once released, nothing written).
   */
  | { kind: 'hold-then-fail' }
  /** The adapter fails unexpectedly (not a refusal, not CoreUnavailable): 500. */
  | { kind: 'crash'; error: Error };

export class FaultyCore {
  fault: Fault = { kind: 'none' };
  /** How many write operations reached the wrapped core. */
  writes = 0;
  readonly #gate = new Gate();

  /** Resolves when the next write held by `commit-then-hold` (its work done) or `hold-then-fail` (before any) is being held. */
  arrived(): Promise<void> {
    return this.#gate.arrived();
  }

  /** Lets every held write answer. */
  release(): void {
    this.#gate.release();
  }

  /** Runs `work` under `fault`, and clears the fault afterwards even when `work` throws. */
  async withFault<T>(fault: Fault, work: () => Promise<T>): Promise<T> {
    this.fault = fault;
    try {
      return await work();
    } finally {
      this.fault = { kind: 'none' };
    }
  }

  async #guard<T>(work: () => Promise<T>): Promise<T> {
    const fault = this.fault;
    if (fault.kind === 'unavailable') throw new CoreUnavailable('injected: core unavailable');
    if (fault.kind === 'crash') throw fault.error;
    if (fault.kind === 'hold-then-fail') {
      await this.#gate.hold();
      throw new CoreUnavailable('injected: core failed after being held');
    }
    this.writes += 1;
    const result = await work();
    if (fault.kind === 'slow-after-commit') await sleep(fault.delayMs);
    if (fault.kind === 'commit-then-hold') {
      await this.#gate.hold();
    }
    return result;
  }

  #faulted(port: CoreBankingPort): CoreBankingPort {
    return {
      constituteTermDeposit: (reference, command) => this.#guard(() => port.constituteTermDeposit(reference, command)),
      executeLoanInstallment: (reference, command) => this.#guard(() => port.executeLoanInstallment(reference, command)),
      findTermDepositConstitution: (reference) => port.findTermDepositConstitution(reference),
      findLoanInstallmentExecution: (reference) => port.findLoanInstallmentExecution(reference),
      fenceOperation: (reference) => port.fenceOperation(reference),
      retrieveTermDeposit: (contractNumber) => port.retrieveTermDeposit(contractNumber),
      userStatus: (login) => port.userStatus(login),
      workstationStatus: (id) => port.workstationStatus(id),
      ping: () => port.ping(),
      businessDate: () => port.businessDate(),
      advanceBusinessDate: (to) => port.advanceBusinessDate(to),
      eventsAfter: (sequence, limit) => port.eventsAfter(sequence, limit),
    };
  }

  wrap = (inner: CoreBankingPort): CoreBankingPort => {
    const outer = this.#faulted(inner);
    if (!isTransactional(inner)) return outer;
    const transactional: TransactionalCore = { ...outer, within: (unitOfWork) => this.#faulted(inner.within(unitOfWork)) };
    return transactional;
  };
}
