/**
 * The sandbox's decorator of the core port (docs/sandbox.md, "Scenarios"): the core as it behaves
 * under one scenario, for one operation. Wired only in sandbox mode (src/main.ts hands
 * `scenarioCore` to the execution); the execution calls it like a remote core (claim first, the
 * call under the core time-out, the outcome settled after), so that everything above the port does
 * what it would for a real core that fails this way. Only the operations' executions are touched
 * (every registered operation's: src/operations/registry.ts); lookups, fencing and reads go to the
 * real core, which is how the reconciler and a repeat learn the truth.
 */
import { sleep, type Clock } from '../core/clock.js';
import { BusinessRefusal, errorCatalogue as E } from '../core/error-catalogue.js';
import { CoreUnavailable, type CoreBankingPort, type CoreOutcome } from '../core/port.js';
import { callsOn, operationMethods } from '../operations/registry.js';
import type { Scenario } from '../operations/scenario.js';

/** A promise that never settles: the core that keeps its answer; the caller's time-out fires (504). */
function noAnswer<T>(): Promise<T> {
  return new Promise<T>(() => undefined);
}

export function scenarioCore(core: CoreBankingPort, scenario: Scenario, clock: Clock): CoreBankingPort {
  const faulty = async <T>(reference: string, execute: () => Promise<CoreOutcome<T>>): Promise<CoreOutcome<T>> => {
    switch (scenario.name) {
      case 'core-unavailable':
        throw new CoreUnavailable('sandbox scenario core-unavailable: the core was not called');
      case 'core-timeout':
        return noAnswer();
      case 'core-timeout-then-commit':
        // Committed before the time-out reports it, so that a repeat made right after the 504
        // finds it executed (409 naming it), as the contract promises, never a race to execute it.
        await execute();
        return noAnswer();
      case 'async-rejected':
        // Closed in the core first, so the reference can never execute later: the refusal is final there too.
        await core.fenceOperation(reference);
        return { status: 'Rejected', refusal: new BusinessRefusal(E.rejectedByCore, 'The core rejected the operation after accepting it (sandbox scenario async-rejected); nothing was posted') };
      case 'slow':
        await sleep(clock, scenario.delayMs);
        return execute();
      case 'async-executed':
        // Its delay was the pending worker's (the runner accepted it for later).
        return execute();
    }
  };
  return {
    ...operationMethods((operation) => {
      const calls = callsOn(core, operation);
      return { execute: (reference, command) => faulty(reference, () => calls.execute(reference, command)), lookup: calls.lookup };
    }),
    // The port's members that belong to no operation.
    fenceOperation: (reference) => core.fenceOperation(reference),
    retrieveTermDeposit: (contractNumber) => core.retrieveTermDeposit(contractNumber),
    userStatus: (login) => core.userStatus(login),
    workstationStatus: (id) => core.workstationStatus(id),
    ping: () => core.ping(),
    businessDate: () => core.businessDate(),
    advanceBusinessDate: (to) => core.advanceBusinessDate(to),
    eventsAfter: (sequence, limit) => core.eventsAfter(sequence, limit),
  };
}
