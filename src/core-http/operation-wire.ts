/**
 * What an operation's folder gives the remote core protocol (src/operations/<operation>/wire.ts,
 * docs/core-protocol.md): the path of its reference, its command and outcome schemas, and the
 * codec both sides use. The core server's routes (core-routes.ts) and the HTTP adapter
 * (http-core-adapter.ts) derive the operation's two endpoints from it: POST executes the command
 * under the reference (at most once), GET looks the reference's outcome up. Depends on src/core
 * and the protocol's own modules only, like the adapter.
 */
import type { TSchema } from '@sinclair/typebox';

export interface OperationWire<TCommand = unknown, TResult = unknown> {
  /** The reference's path (`/core/v1/term-deposit-constitutions/:reference`): POST executes, GET looks up. */
  path: string;
  /** What each endpoint does, as the protocol document says it. */
  summaries: { execute: string; lookup: string };
  /** What the API does when a core lacks each endpoint (docs/core-protocol.md, "What a core must serve"). */
  withoutIt: { execute: string; lookup: string };
  commandSchema: TSchema;
  /** Executed with the result, or Rejected with the refusal (the outcome of a POST and of a GET). */
  outcomeSchema: TSchema;
  commandToWire(command: TCommand): unknown;
  /**
   * A command as the core server read it, after the schema: what the schema cannot say (a
   * currency that is no ISO 4217 code, dates out of order) throws BadCommand (400).
   */
  commandFromWire(wire: unknown): TCommand;
  resultToWire(result: TResult): unknown;
  resultFromWire(wire: unknown): TResult;
  /** The reference a result carries, and where in the answer: a result of another reference breaks the protocol. */
  referenceOf(result: TResult): string;
  referenceField: string;
}

/** An operation's wire, typed by its command and result, erased for the routes and the adapter that serve every operation alike. */
export function operationWire<TCommand, TResult>(wire: OperationWire<TCommand, TResult>): OperationWire {
  return wire as unknown as OperationWire;
}
