/**
 * A business operation as the application layer runs it: one typed module per operation
 * (term-deposit-initiation.ts, loan-installment-execution.ts) says how its request is validated,
 * executed and looked up in the core, and how its results are presented. `erase` turns a typed
 * definition into the untyped shape the runner, the pending worker and the reconciler share, so
 * that none of them needs a cast.
 */
import type { Family } from '../core/error-catalogue.js';
import { BusinessRefusal } from '../core/error-catalogue.js';
import type { CoreBankingPort, CoreLookup, CoreOutcome } from '../core/port.js';
import type { NumberSource } from '../core/money.js';

export type OperationName = 'initiateTermDeposit' | 'executeMerchandisingLoanPayment';

/** A request as the operation keeps it until it is final: the JSON body and the path parameters. */
export interface StoredRequest {
  body: unknown;
  params: Readonly<Record<string, string>>;
}

export interface OperationDefinition<TCommand, TResult, TBody, TAccepted> {
  name: OperationName;
  scope: string;
  family: Family;
  /**
   * Checks that need no stored data; throws BusinessRefusal (the correlation id is not consumed).
   * `numbers`: the texts the body's numbers were written with, when the request comes from the
   * API; a stored request (the pending worker's, the reconciler's) was checked with them once.
   */
  validate(request: StoredRequest, numbers?: NumberSource): TCommand;
  execute(core: CoreBankingPort, reference: string, command: TCommand): Promise<CoreOutcome<TResult>>;
  lookup(core: CoreBankingPort, reference: string): Promise<CoreLookup<TResult>>;
  /** The 200 body. */
  present(result: TResult): TBody;
  /** The outcome word recorded in the audit trail (e.g. Executed, PartiallyExecuted). */
  outcomeOf(result: TResult): string;
  /** The 202 body (docs/api.md, "200, 202, 204"). */
  accepted(reference: string, acceptedAt: Date): TAccepted;
  /** The result a pending operation the core refused keeps, if the operation has one. */
  rejected?(reference: string, acceptedAt: Date): unknown;
}

/** What the core made of an operation, in the shape the operation record keeps. */
export type Settlement = { status: 'Executed'; body: unknown; outcome: string } | { status: 'Rejected'; refusal: BusinessRefusal };

/** A validated request, ready to be executed under a reference. */
export interface PreparedOperation {
  run(core: CoreBankingPort, reference: string): Promise<Settlement>;
}

export interface Operation {
  name: OperationName;
  scope: string;
  family: Family;
  prepare(request: StoredRequest, numbers?: NumberSource): PreparedOperation;
  lookup(core: CoreBankingPort, reference: string): Promise<Settlement | { status: 'NotFound' }>;
  accepted(reference: string, acceptedAt: Date): unknown;
  rejected(reference: string, acceptedAt: Date): unknown;
}

export function erase<TCommand, TResult, TBody, TAccepted>(definition: OperationDefinition<TCommand, TResult, TBody, TAccepted>): Operation {
  const settle = (outcome: CoreOutcome<TResult>): Settlement =>
    outcome.status === 'Executed'
      ? { status: 'Executed', body: definition.present(outcome.result), outcome: definition.outcomeOf(outcome.result) }
      : { status: 'Rejected', refusal: outcome.refusal };
  return {
    name: definition.name,
    scope: definition.scope,
    family: definition.family,
    prepare(request, numbers) {
      const command = definition.validate(request, numbers);
      return { run: async (core, reference) => settle(await definition.execute(core, reference, command)) };
    },
    async lookup(core, reference) {
      const found = await definition.lookup(core, reference);
      return found.status === 'NotFound' ? found : settle(found);
    },
    accepted: (reference, acceptedAt) => definition.accepted(reference, acceptedAt),
    rejected: (reference, acceptedAt) => definition.rejected?.(reference, acceptedAt),
  };
}

export { BusinessRefusal };
