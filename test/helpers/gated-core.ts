/**
 * Faults at the port, gated by the test rather than timed (STYLE.md: "commit, then time out",
 * "hold until released"): a wrapper of a core whose write operations (constitution, installment)
 * and, when asked, its fence and lookups, do what the current fault says. The test waits for a
 * call to arrive (`arrived`) and decides when it ends (`release`); time-outs happen when the test
 * moves its fake clock past the core time-out, never because the machine was slow.
 */
import { CoreUnavailable, isTransactional, type CoreBankingPort, type TransactionalCore } from '../../src/core/port.js';
import { Gate } from './gate.js';

export type GateFault =
  | { kind: 'none' }
  /** Throws CoreUnavailable before the core does anything (502, nothing written). */
  | { kind: 'unavailable' }
  /** The core does the work (and, on its own, commits it), then the answer is held until released. */
  | { kind: 'commit-then-hold' }
  /** The call is held before the core sees it; once released it fails with CoreUnavailable (nothing written). */
  | { kind: 'hold-then-fail' };

const writes = new Set(['constituteTermDeposit', 'executeLoanInstallment']);
const settling = new Set(['fenceOperation', 'findTermDepositConstitution', 'findLoanInstallmentExecution']);

export class GatedCore {
  fault: GateFault = { kind: 'none' };
  /** The fault also applies to fence and lookups (the reconciler's calls), not only to writes. */
  faultSettling = false;
  /** Write operations that reached the wrapped core. */
  writes = 0;
  readonly #gate = new Gate();

  /** Resolves when the next faulted call has arrived (and is being held, or has failed). */
  arrived(): Promise<void> {
    return this.#gate.arrived();
  }

  /** Lets every held call go on. */
  release(): void {
    this.#gate.release();
  }

  async #guard<T>(write: boolean, work: () => Promise<T>): Promise<T> {
    const fault = this.fault;
    if (fault.kind === 'unavailable') {
      this.#gate.arrive();
      throw new CoreUnavailable('gated: core unavailable');
    }
    if (fault.kind === 'hold-then-fail') {
      await this.#gate.hold();
      throw new CoreUnavailable('gated: core failed after being held');
    }
    if (write) this.writes += 1;
    const result = await work();
    if (fault.kind === 'commit-then-hold') {
      await this.#gate.hold();
    }
    return result;
  }

  #faulted(port: CoreBankingPort): CoreBankingPort {
    return new Proxy(port, {
      get: (target, name, receiver) => {
        const member = Reflect.get(target, name, receiver) as unknown;
        if (typeof member !== 'function' || typeof name !== 'string' || name === 'within') return typeof member === 'function' ? member.bind(target) : member;
        const call = (...args: unknown[]) => (member as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        if (writes.has(name)) return (...args: unknown[]) => this.#guard(true, () => call(...args));
        if (settling.has(name)) return (...args: unknown[]) => (this.faultSettling ? this.#guard(false, () => call(...args)) : call(...args));
        return call;
      },
    });
  }

  /** The core as the application layer sees it: transactional when the inner one is, unless `remote`. */
  wrap(inner: CoreBankingPort, options: { remote: boolean }): CoreBankingPort {
    const outer = this.#faulted(inner);
    if (options.remote || !isTransactional(inner)) {
      // A remote core has no `within`: the application layer then claims, calls and settles apart.
      return new Proxy(outer, { get: (target, name, receiver) => (name === 'within' ? undefined : Reflect.get(target, name, receiver)) });
    }
    const transactional: TransactionalCore = Object.assign(Object.create(outer) as CoreBankingPort, { within: (unitOfWork: Parameters<TransactionalCore['within']>[0]) => this.#faulted(inner.within(unitOfWork)) });
    return transactional;
  }
}
