/**
 * What an operation's folder gives the reference core (src/operations/<operation>/core-handler.ts):
 * how the operation is decided and written, and how what it made is found by its reference. The
 * reference core keeps the rest for every operation alike (reference-core.ts): the reference's
 * claim and its outcome record (at most once), the transaction, the fence, the refusals.
 */
import type { BusinessCalendar } from '../core/business-calendar.js';
import type { Clock } from '../core/clock.js';
import type { Decision } from '../core/decision.js';
import type { OperationRepository } from './operation-repository.js';

/** What an execution is handed besides its repository: the calendar on the stored business date (read in the operation's transaction), the core's clock. */
export interface OperationContext {
  calendar: Promise<BusinessCalendar>;
  clock: Clock;
}

export interface OperationHandler<TCommand = unknown, TResult = unknown> {
  /** Reads the facts, lets the pure rules decide, writes what they decided: in the transaction that claimed the reference. */
  execute(repository: OperationRepository, context: OperationContext, reference: string, command: TCommand): Promise<Decision<TResult>>;
  /** The result the operation made under `reference`, when it executed. */
  find(repository: OperationRepository, reference: string): Promise<TResult | undefined>;
  /** What an execution makes, named in the error of a reference recorded as executed that has none (`contract`). */
  made: string;
}

/** An operation's handler, typed by its command and result, erased for the core that runs every operation alike. */
export function operationHandler<TCommand, TResult>(handler: OperationHandler<TCommand, TResult>): OperationHandler {
  return handler as unknown as OperationHandler;
}
