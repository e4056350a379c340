/** One call of a business operation, as the HTTP layer hands it to the application layer. */
import type { OperationActor } from '../store/operations.js';
import type { NumberSource } from '../core/money.js';
import type { StoredRequest } from './operation-definition.js';
import type { Scenario } from './scenario.js';

/** Who calls: the client's namespace of correlation ids, and the token's user and workstation. */
export interface Caller {
  /** `{issuer}#{client_id}`: correlation ids and operations belong to it. */
  clientKey: string;
  backboneUser: string | undefined;
  workstation: string | undefined;
  channel: string | undefined;
}

export interface Invocation {
  caller: Caller;
  correlationId: string;
  correlationSupplied: boolean;
  /** `POST /v1/...`: the error records' path. */
  path: string;
  request: StoredRequest;
  /** The texts the body's numbers were written with, as the API read them: amounts are checked as written. */
  numberTextOf?: NumberSource | undefined;
  respondAsync: boolean;
  startedAtMs: number;
  /** The sandbox scenario the request forces (docs/sandbox.md, "Scenarios"); only in sandbox mode. */
  scenario?: Scenario | undefined;
}

export function actorOf(caller: Caller): OperationActor {
  return { clientId: caller.clientKey, backboneUser: caller.backboneUser ?? null, workstation: caller.workstation ?? null, channel: caller.channel ?? null };
}

export function callerOf(actor: OperationActor): Caller {
  return { clientKey: actor.clientId, backboneUser: actor.backboneUser ?? undefined, workstation: actor.workstation ?? undefined, channel: actor.channel ?? undefined };
}
