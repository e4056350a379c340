/**
 * The shapes of a business call, shared by the client (client.ts) and each operation's calls
 * (src/operations/<operation>/sdk.ts): a call's options, an execution's and a read's answers, and
 * the transport the calls go through (the client's retries and tokens).
 */
import type { SessionIdentity } from './token-provider.js';

export interface CallOptions {
  /**
   * `x-correlation-id`. When absent one is generated and kept across the call's retries, and the
   * server's duplicate window still applies: the same body sent again to the same path within the
   * window is refused (409), as for a request without the header. Give an id of your own to make a
   * deliberate second identical operation.
   */
  correlationId?: string;
  /** `Prefer: respond-async` → the server may answer 202 (status Pending). */
  respondAsync?: boolean;
  /** Loan only: `Prefer: return=minimal` → 204 on success. */
  returnMinimal?: boolean;
  /** `x-channel`, e.g. MOBILE. */
  channel?: string;
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** An execution's answer: done (200, or 204 with no body) or accepted (202, pending). */
export type Execution<TDone, TAccepted> =
  | { status: 200; result: TDone; correlationId: string }
  | { status: 204; result: undefined; correlationId: string }
  | { status: 202; accepted: TAccepted; reference: string; correlationId: string };

/** A read's answer, in the shape of an execution's: the 200 body in `result`. */
export interface Read<T> {
  status: 200;
  result: T;
  correlationId: string;
}

/** How an operation's calls reach the API: the client's `execute` and `read`, with its tokens and retries. */
export interface CallTransport {
  execute(identity: SessionIdentity, method: string, path: string, body: unknown, options: CallOptions): Promise<Execution<unknown, unknown>>;
  read(identity: SessionIdentity, path: string, options: CallOptions): Promise<Read<unknown>>;
}

/** What an operation's sdk.ts tells the client of a retry that met its pending original (202 by reference only). */
export interface PendingBody {
  /** The operation's name, as GET /v1/operations answers it. */
  operation: string;
  /** The 202 body of the operation known only by its reference. */
  accepted(reference: string, at: Date): unknown;
}
