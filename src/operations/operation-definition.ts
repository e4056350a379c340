/**
 * A business operation as every layer finds it (docs/adding-an-operation.md). Each operation lives
 * in a folder of its own, src/operations/<operation>/, whose operation.ts declares it with
 * `defineOperation`:
 * - its facts: name, family, scopes, the API route's method and path, the port methods that
 *   execute and look it up, the docs page's tag;
 * - its application definition: how its request is validated, how the core's result becomes its
 *   200 body, its audit outcome and its 202 body;
 * - its parts: one loader per file of the folder that plays another layer (the API route, the
 *   remote core protocol, the reference core's handler, the docs page's examples). A layer loads
 *   the part it plays and no other, so importing an operation never loads a schema library, HTTP
 *   or storage (test/architecture.test.ts, "operation folders").
 *
 * `defineOperation` erases the typed definition into the untyped shape the runner, the pending
 * worker and the reconciler share (`Operation`), so that none of them needs a cast.
 */
import type { Family } from '../core/error-catalogue.js';
import { BusinessRefusal } from '../core/error-catalogue.js';
import type { CoreBankingPort, CoreLookup, CoreOutcome } from '../core/port.js';
import type { NumberSource } from '../core/money.js';

/** A request as the operation keeps it until it is final: the JSON body and the path parameters. */
export interface StoredRequest {
  body: unknown;
  params: Readonly<Record<string, string>>;
}

/** The port's methods that execute a command of type C under a reference, with a result of type R. */
export type ExecuteMethodOf<C, R> = {
  [K in keyof CoreBankingPort]-?: CoreBankingPort[K] extends (reference: string, command: C) => Promise<CoreOutcome<R>> ? K : never;
}[keyof CoreBankingPort];

/** The port's methods that look a reference's outcome up, with a result of type R. */
export type LookupMethodOf<R> = {
  [K in keyof CoreBankingPort]-?: CoreBankingPort[K] extends (reference: string) => Promise<CoreLookup<R>> ? K : never;
}[keyof CoreBankingPort];

/** The API route of an operation: what the framework's errors and the docs page need to know of it without loading it. */
export interface OperationRoute {
  method: 'POST';
  /** The route's path, with its parameters as the router writes them (`:merchandisingLoanId`). */
  path: string;
  /** The paths of the folder's reads of what the operation made (the term deposit's retrieve), in both spellings where there are two. */
  readPaths: readonly string[];
  /** The error record is wrapped in `{"error": ...}` on the folder's routes (docs/loans.md). */
  wrapped: boolean;
}

/** One loader per part of the folder that another layer plays: each layer calls its own. */
export interface OperationParts {
  /** route.ts: the API's routes (src/api loads it). */
  route(): Promise<unknown>;
  /** wire.ts: the remote core protocol's paths, schemas and codec (src/core-http loads it). */
  wire(): Promise<unknown>;
  /** core-handler.ts: how the reference core executes and finds it (src/reference-core loads it). */
  coreHandler(): Promise<unknown>;
  /** examples.ts: the docs page's examples (src/docs-page loads it). */
  examples(): Promise<unknown>;
}

export interface OperationDefinition<
  TName extends string,
  TCommand,
  TResult,
  TBody,
  TAccepted,
  TExecute extends keyof CoreBankingPort,
  TLookup extends keyof CoreBankingPort,
  TParts extends OperationParts,
> {
  /** The operation's name: its route's operationId, the operation record's `operation`, the metrics' label. */
  name: TName;
  /** The error codes' family of the folder's routes (docs/errors.md). */
  family: Family;
  /** The scope a token must carry to run it. */
  scope: string;
  /** Every scope of the folder's routes with what it grants, the operation's first: the token endpoint and the docs page list them. */
  scopes: Readonly<Record<string, string>>;
  route: OperationRoute;
  /** The docs page's tag of the folder's routes. */
  tag: { name: string; description: string };
  /** The port's methods that execute it and look it up (src/core/port.ts: the contract a bank's core implements). */
  port: { execute: TExecute & ExecuteMethodOf<NoInfer<TCommand>, NoInfer<TResult>>; lookup: TLookup & LookupMethodOf<NoInfer<TResult>> };
  /**
   * Checks that need no stored data; throws BusinessRefusal (the correlation id is not consumed).
   * `numbers`: the texts the body's numbers were written with, when the request comes from the
   * API; a stored request (the pending worker's, the reconciler's) was checked with them once.
   */
  validate(request: StoredRequest, numbers?: NumberSource): TCommand;
  /** The 200 body. */
  present(result: TResult): TBody;
  /** The outcome word recorded in the audit trail (e.g. Executed, PartiallyExecuted). */
  outcomeOf(result: TResult): string;
  /** The 202 body (docs/api.md, "200, 202, 204"). */
  accepted(reference: string, acceptedAt: Date): TAccepted;
  /** The result a pending operation the core refused keeps, if the operation has one. */
  rejected?(reference: string, acceptedAt: Date): unknown;
  parts: TParts;
}

/** What the core made of an operation, in the shape the operation record keeps. */
export type Settlement = { status: 'Executed'; body: unknown; outcome: string } | { status: 'Rejected'; refusal: BusinessRefusal };

/** A validated request, ready to be executed under a reference. */
export interface PreparedOperation {
  run(core: CoreBankingPort, reference: string): Promise<Settlement>;
}

/** An operation as the application layer runs it: untyped, so that one runner serves them all. */
export interface Operation {
  name: string;
  scope: string;
  family: Family;
  prepare(request: StoredRequest, numbers?: NumberSource): PreparedOperation;
  lookup(core: CoreBankingPort, reference: string): Promise<Settlement | { status: 'NotFound' }>;
  accepted(reference: string, acceptedAt: Date): unknown;
  rejected(reference: string, acceptedAt: Date): unknown;
}

/** A registered operation: the runner's shape, with the facts and parts every other layer reads. */
export interface RegisteredOperation<TName extends string = string, TExecute extends string = string, TLookup extends string = string, TParts extends OperationParts = OperationParts>
  extends Operation {
  name: TName;
  scopes: Readonly<Record<string, string>>;
  route: OperationRoute;
  tag: { name: string; description: string };
  port: { execute: TExecute; lookup: TLookup };
  parts: TParts;
}

/** The operation of a folder's operation.ts, typed by its definition and erased for the layers that run it. */
export function defineOperation<
  TName extends string,
  TCommand,
  TResult,
  TBody,
  TAccepted,
  TExecute extends keyof CoreBankingPort,
  TLookup extends keyof CoreBankingPort,
  TParts extends OperationParts,
>(
  definition: OperationDefinition<TName, TCommand, TResult, TBody, TAccepted, TExecute, TLookup, TParts>,
): RegisteredOperation<TName, TExecute, TLookup, TParts> {
  return { ...erase(definition), name: definition.name, scopes: definition.scopes, route: definition.route, tag: definition.tag, port: definition.port, parts: definition.parts };
}

/** The port's methods of a definition, called by name: the port declares them (ExecuteMethodOf, LookupMethodOf). */
function portCalls<TCommand, TResult>(port: { execute: ExecuteMethodOf<TCommand, TResult>; lookup: LookupMethodOf<TResult> }) {
  return {
    execute: (core: CoreBankingPort, reference: string, command: TCommand) =>
      (core[port.execute] as (reference: string, command: TCommand) => Promise<CoreOutcome<TResult>>).call(core, reference, command),
    lookup: (core: CoreBankingPort, reference: string) => (core[port.lookup] as (reference: string) => Promise<CoreLookup<TResult>>).call(core, reference),
  };
}

function erase<
  TName extends string,
  TCommand,
  TResult,
  TBody,
  TAccepted,
  TExecute extends keyof CoreBankingPort,
  TLookup extends keyof CoreBankingPort,
  TParts extends OperationParts,
>(
  definition: OperationDefinition<TName, TCommand, TResult, TBody, TAccepted, TExecute, TLookup, TParts>,
): Operation {
  const calls = portCalls<TCommand, TResult>(definition.port);
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
      return { run: async (core, reference) => settle(await calls.execute(core, reference, command)) };
    },
    async lookup(core, reference) {
      const found = await calls.lookup(core, reference);
      return found.status === 'NotFound' ? found : settle(found);
    },
    accepted: (reference, acceptedAt) => definition.accepted(reference, acceptedAt),
    rejected: (reference, acceptedAt) => definition.rejected?.(reference, acceptedAt),
  };
}

export { BusinessRefusal };
