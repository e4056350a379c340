/**
 * The duplicate window (docs/api.md, "Correlation ids and duplicates"): without x-correlation-id,
 * the same client sending the same body (RFC 8785 canonical JSON) to the same path within the
 * window is a duplicate. Checked once before anything is written, and again inside the claiming
 * transaction under a lock on the request hash, so that concurrent identical requests cannot all
 * pass the first check.
 */
import type { Clock } from '../core/clock.js';
import { hash } from 'node:crypto';
import { canonicalJson } from '../core/canonical-json.js';
import { findOperationByCorrelation, findRecentDuplicate, lockRequestHash, type OperationRecord } from '../store/operations.js';
import type { Queryable } from '../store/queryable.js';
import type { StoreUnitOfWork } from '../store/unit-of-work.js';

export function requestHash(path: string, body: unknown): string {
  // The one-shot hash: no Hash object per request.
  return hash('sha256', `${path}\n${canonicalJson(body)}`, 'hex');
}

export class DuplicateWindow {
  constructor(
    /** 0 disables the window. */
    readonly windowSeconds: number,
    /** Whose time the window is measured in (src/core/clock.ts). */
    private readonly clock: Clock,
  ) {}

  applies(record: Pick<OperationRecord, 'correlationSupplied'>): boolean {
    return !record.correlationSupplied && this.windowSeconds > 0;
  }

  /**
   * The earlier operation this one duplicates, if any (a read; no lock). One with the same
   * correlation id is no duplicate but the same call again (an SDK's retry with the id it
   * generated): the correlation id's own rules answer it (409 naming it, or reconciliation).
   */
  async find(db: Queryable, record: Pick<OperationRecord, 'clientKey' | 'requestHash' | 'reference' | 'correlationId'>): Promise<OperationRecord | undefined> {
    const duplicate = await findRecentDuplicate(db, record.clientKey, record.requestHash, this.clock.now() - this.windowSeconds * 1000);
    if (!duplicate || duplicate.reference === record.reference || duplicate.correlationId === record.correlationId) return undefined;
    // A later identical operation under another id may hide this call's own: look for it (duplicates only).
    return (await findOperationByCorrelation(db, record.clientKey, record.correlationId)) ? undefined : duplicate;
  }

  /** Inside the claiming unit of work: the check again, serialized with identical requests. */
  async findLocked(unitOfWork: StoreUnitOfWork, record: Pick<OperationRecord, 'clientKey' | 'requestHash' | 'reference' | 'correlationId'>): Promise<OperationRecord | undefined> {
    await lockRequestHash(unitOfWork, record.clientKey, record.requestHash);
    return this.find(unitOfWork.db, record);
  }
}
