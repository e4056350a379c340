/**
 * The audit record of an execution attempt (docs/api.md, "Audit"): written in the operation's own
 * transaction when there is one, chained by the AuditChainer just after commit.
 */
import type { Clock } from '../core/clock.js';
import { timeOrderedUuid } from '../core/time-ordered-uuid.js';
import { isoTimestamp } from '../core/iso-timestamp.js';
import type { AuditChainer } from '../audit/chain.js';
import { errorCode, type ErrorEntry, type Family } from '../core/error-catalogue.js';
import { insertAuditEntry, type AuditEntry } from '../store/audit.js';
import type { RefusalAudit } from '../audit/refusal-audit.js';
import type { Queryable } from '../store/queryable.js';
import type { Caller } from './invocation.js';

/** What every audit record of one call shares. */
export interface AuditContext {
  operation: string;
  family: Family;
  caller: Caller;
  correlationId: string | null;
  path: string;
  startedAtMs: number;
}

/** A new audit record, recorded at `recordedAtMs` (the caller's clock). */
export function auditEntry(fields: Omit<AuditEntry, 'id' | 'recordedAt'>, recordedAtMs: number): AuditEntry {
  return { id: timeOrderedUuid(recordedAtMs), recordedAt: isoTimestamp(recordedAtMs), ...fields };
}

export function operationAuditEntry(context: AuditContext, reference: string | null, httpStatus: number, outcome: string, entry: ErrorEntry | undefined, nowMs: number): AuditEntry {
  const code = entry && (entry.family === 'both' || entry.family === context.family) ? errorCode(entry, context.family) : undefined;
  return auditEntry({
    operation: context.operation,
    clientId: context.caller.clientKey,
    backboneUser: context.caller.backboneUser ?? null,
    workstation: context.caller.workstation ?? null,
    correlationId: context.correlationId,
    reference,
    httpStatus,
    outcome,
    durationMs: nowMs - context.startedAtMs,
    details: { path: context.path, channel: context.caller.channel ?? null, ...(code ? { code } : {}) },
  }, nowMs);
}

export class OperationAudit {
  constructor(
    readonly chainer: AuditChainer,
    /** Refusals outside any unit of work, written in batches. */
    readonly refusals: RefusalAudit,
    /** Whose time stamps the records and measures their duration (src/core/clock.ts). */
    readonly clock: Clock,
  ) {}

  /** Inside a unit of work: the record commits with it. Call `chained()` after the commit. */
  async write(db: Queryable, context: AuditContext, reference: string | null, httpStatus: number, outcome: string, entry?: ErrorEntry): Promise<void> {
    await insertAuditEntry(db, operationAuditEntry(context, reference, httpStatus, outcome, entry, this.clock.now()));
  }

  /** On its own (a refusal before any unit of work): durable when this answers, chained soon after. */
  async record(context: AuditContext, reference: string | null, httpStatus: number, outcome: string, entry?: ErrorEntry): Promise<void> {
    await this.refusals.record(operationAuditEntry(context, reference, httpStatus, outcome, entry, this.clock.now()));
  }

  /** Records committed: the chain is extended soon after, by one chainer at a time. */
  chained(): void {
    this.chainer.schedule();
  }
}
