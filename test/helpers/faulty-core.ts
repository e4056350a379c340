/**
 * The tests' one fake core: a wrapper of a real core (the reference core, embedded or over HTTP)
 * whose write operations (every registered operation's execution: src/operations/registry.ts) and,
 * when asked, its fence and lookups, do what the current fault says. Every other member of the port passes through unchanged. Faults
 * are gated by the test rather than timed (docs/testing.md): the test waits for a call to arrive
 * (`arrived`) and decides when it ends (`release`); a time-out happens when the test moves its
 * fake clock past the core time-out, never because the machine was slow. With the embedded
 * reference core the faults apply inside the API's unit of work as well (`within`).
 */
import { CoreUnavailable, isTransactional, type CoreBankingPort, type TransactionalCore } from '../../src/core/port.js';
import { operations } from '../../src/operations/registry.js';
import { Gate } from './gate.js';
import { sleep } from './wait.js';

export type Fault =
  | { kind: 'none' }
  /** Throws CoreUnavailable before the core does anything (502, nothing written). */
  | { kind: 'unavailable' }
  /** Lets the core write, then answers only after `delayMs` of real time (504 if longer than the time-out; the work still commits). */
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

/** The port's write operations, each registered operation's execution: the faults apply to them. */
export const faultedWrites: ReadonlySet<string> = new Set<keyof CoreBankingPort>(operations.map((operation) => operation.port.execute));
/** The calls that settle an unknown outcome (the reconciler's): the fence and each operation's lookup, faulted only with `faultSettling`. */
export const faultedSettling: ReadonlySet<string> = new Set<keyof CoreBankingPort>(['fenceOperation', ...operations.map((operation) => operation.port.lookup)]);

export class FaultyCore {
  fault: Fault = { kind: 'none' };
  /** The fault also applies to the fence and the lookups (the reconciler's calls), not only to writes. */
  faultSettling = false;
  /** How many write operations reached the wrapped core. */
  writes = 0;
  readonly #gate = new Gate();

  /** Resolves when the next faulted call has arrived (held, or failed at once). */
  arrived(): Promise<void> {
    return this.#gate.arrived();
  }

  /** Lets every held call go on. */
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

  async #guard<T>(write: boolean, work: () => Promise<T>): Promise<T> {
    const fault = this.fault;
    if (fault.kind === 'unavailable') {
      this.#gate.arrive();
      throw new CoreUnavailable('injected: core unavailable');
    }
    if (fault.kind === 'crash') {
      this.#gate.arrive();
      throw fault.error;
    }
    if (fault.kind === 'hold-then-fail') {
      await this.#gate.hold();
      throw new CoreUnavailable('injected: core failed after being held');
    }
    if (write) this.writes += 1;
    const result = await work();
    if (fault.kind === 'slow-after-commit') await sleep(fault.delayMs);
    if (fault.kind === 'commit-then-hold') await this.#gate.hold();
    return result;
  }

  #faulted(port: CoreBankingPort): CoreBankingPort {
    return new Proxy(port, {
      get: (target, name, receiver) => {
        const member = Reflect.get(target, name, receiver) as unknown;
        if (typeof member !== 'function' || typeof name !== 'string' || name === 'within') return typeof member === 'function' ? member.bind(target) : member;
        const call = (...args: unknown[]) => (member as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        if (faultedWrites.has(name)) return (...args: unknown[]) => this.#guard(true, () => call(...args));
        if (faultedSettling.has(name)) return (...args: unknown[]) => (this.faultSettling ? this.#guard(false, () => call(...args)) : call(...args));
        return call;
      },
    });
  }

  /**
   * The core as the application layer sees it: transactional when the inner one is, unless
   * `remote` (a remote core has no `within`: the application layer then claims, calls and
   * settles apart). An arrow: handed as `wrapCore` to the test server.
   */
  wrap = (inner: CoreBankingPort, options: { remote?: boolean } = {}): CoreBankingPort => {
    const outer = this.#faulted(inner);
    if (options.remote === true || !isTransactional(inner)) {
      return new Proxy(outer, { get: (target, name, receiver) => (name === 'within' ? undefined : Reflect.get(target, name, receiver)) });
    }
    const transactional: TransactionalCore = Object.assign(Object.create(outer) as CoreBankingPort, { within: (unitOfWork: Parameters<TransactionalCore['within']>[0]) => this.#faulted(inner.within(unitOfWork)) });
    return transactional;
  };
}
