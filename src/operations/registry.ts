/**
 * Every business operation, one line each (docs/adding-an-operation.md): the one list of
 * operations. Every other list that names operations is derived from it (test/operations/registry.test.ts
 * checks that each agrees): the scopes, the API's routes and shared schemas, the framework errors'
 * families, the docs page's tags and examples, the port methods the remote core adapter, the
 * reference core and the sandbox's scenarios implement, the remote core protocol's routes.
 *
 * Importing it loads each operation's facts and application definition only (pure: src/core and
 * the folder's operation.ts); a layer loads the part of each operation it plays with `partsOf`.
 */
import type { CoreBankingPort, CoreLookup, CoreOutcome } from '../core/port.js';
import { loanInstallmentExecution } from './loan-installment-execution/operation.js';
import type { Operation, OperationParts, RegisteredOperation } from './operation-definition.js';
import { termDepositInitiation } from './term-deposit-initiation/operation.js';

export const operations = [termDepositInitiation, loanInstallmentExecution] as const;

export type AnyOperation = (typeof operations)[number];
/** A registered operation's name: the operation record's `operation`, its route's operationId. */
export type OperationName = AnyOperation['name'];
/** The port methods that execute an operation (the faults of the tests' fake core and the sandbox's scenarios apply to them). */
export type OperationExecuteMethod = AnyOperation['port']['execute'];
/** The port methods that look an operation up by reference (the reconciler's). */
export type OperationLookupMethod = AnyOperation['port']['lookup'];
/** The port's members that belong to an operation: every implementation of the port derives them from here. */
export type OperationPortMethods = Pick<CoreBankingPort, OperationExecuteMethod | OperationLookupMethod>;

/** Every operation by name: the pending worker and the reconciler find a stored operation's definition here. */
export const businessOperations: ReadonlyMap<string, Operation> = new Map(operations.map((operation) => [operation.name, operation]));

/** The names of every registered operation, in the registry's order. */
export const operationNames: readonly OperationName[] = operations.map((operation) => operation.name);

/** Every scope of the operations' routes with what it grants, the registry's order: the token endpoint and the docs page list them. */
export const operationScopes: Readonly<Record<string, string>> = Object.assign({}, ...operations.map((operation) => operation.scopes));

/**
 * Each registered operation with its part of one layer, in the registry's order: the layer that
 * plays the part loads it (each folder's files: docs/adding-an-operation.md).
 */
export async function partsOf<K extends keyof OperationParts>(part: K): Promise<Array<{ operation: AnyOperation; part: Awaited<ReturnType<AnyOperation['parts'][K]>> }>> {
  return Promise.all(
    operations.map(async (operation) => ({ operation, part: (await (operation.parts[part] as () => Promise<unknown>)()) as Awaited<ReturnType<AnyOperation['parts'][K]>> })),
  );
}

/** How an implementation of the port executes and looks up one operation. */
export interface OperationCalls {
  execute(reference: string, command: unknown): Promise<CoreOutcome<unknown>>;
  lookup(reference: string): Promise<CoreLookup<unknown>>;
}

/**
 * The port's operation members of an implementation, one pair per registered operation under the
 * port's names (`constituteTermDeposit`, `findTermDepositConstitution`, ...): the adapters, the
 * reference core and the decorators build theirs here instead of listing them.
 */
export function operationMethods(callsOf: (operation: RegisteredOperation) => OperationCalls): OperationPortMethods {
  const methods: Record<string, unknown> = {};
  for (const operation of operations) {
    const calls = callsOf(operation);
    methods[operation.port.execute] = calls.execute;
    methods[operation.port.lookup] = calls.lookup;
  }
  return methods as unknown as OperationPortMethods;
}

/** An operation's execution and lookup on `core`, called by the port's names (its `port`). */
export function callsOn(core: CoreBankingPort, operation: RegisteredOperation): OperationCalls {
  const methods = core as unknown as Record<string, (...args: unknown[]) => Promise<never>>;
  return {
    execute: (reference, command) => (methods[operation.port.execute] as (reference: string, command: unknown) => Promise<CoreOutcome<unknown>>).call(core, reference, command),
    lookup: (reference) => (methods[operation.port.lookup] as (reference: string) => Promise<CoreLookup<unknown>>).call(core, reference),
  };
}
