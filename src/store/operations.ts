/**
 * Operation records of the business API: one per consumed correlation id (CONTRACT §4). They
 * hold the outcome that a repeated id is answered with, the pending requests of 202 answers,
 * and the results served by GET /v1/operations/{reference}.
 */
import type { Selectable } from 'kysely';
import { toBigInt } from './bigint.js';
import type { Queryable } from './realms.js';
import type { OperationTable } from './schema.js';

/** Pending: accepted, to be executed. Unknown: the core's answer was lost (502/504). */
export type OperationStatus = 'Pending' | 'Executed' | 'Rejected' | 'Unknown';

export interface OperationRecord {
  reference: string;
  clientKey: string;
  correlationId: string;
  correlationSupplied: boolean;
  operation: string;
  scope: string;
  path: string;
  requestHash: string;
  request: unknown;
  status: OperationStatus;
  httpStatus: number | null;
  result: unknown;
  error: unknown;
  actor: unknown;
  createdAt: string;
  createdEpochMs: number;
  updatedAt: string;
}

export async function insertOperation(db: Queryable, record: OperationRecord): Promise<void> {
  await db.insertInto('operations').values(toRow(record)).execute();
}

export async function findOperation(db: Queryable, reference: string): Promise<OperationRecord | undefined> {
  const row = await db.selectFrom('operations').selectAll().where('reference', '=', reference).executeTakeFirst();
  return row && toRecord(row);
}

export async function findOperationByCorrelation(db: Queryable, clientKey: string, correlationId: string): Promise<OperationRecord | undefined> {
  const row = await db
    .selectFrom('operations')
    .selectAll()
    .where('client_key', '=', clientKey)
    .where('correlation_id', '=', correlationId)
    .executeTakeFirst();
  return row && toRecord(row);
}

/** The latest operation of the client with this request hash since the given instant. */
export async function findRecentDuplicate(db: Queryable, clientKey: string, requestHash: string, sinceEpochMs: number): Promise<OperationRecord | undefined> {
  const row = await db
    .selectFrom('operations')
    .selectAll()
    .where('client_key', '=', clientKey)
    .where('request_hash', '=', requestHash)
    .where('created_epoch_ms', '>=', BigInt(sinceEpochMs))
    .orderBy('created_epoch_ms', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row && toRecord(row);
}

export interface OperationOutcome {
  status: OperationStatus;
  httpStatus: number | null;
  result?: unknown;
  error?: unknown;
  /** Keep the stored request (only while it may still be executed). */
  keepRequest?: boolean;
}

/** Moves an operation from one of `from` to its outcome; answers whether it was in `from`. */
export async function settleOperation(db: Queryable, reference: string, from: OperationStatus[], outcome: OperationOutcome): Promise<boolean> {
  const result = await db
    .updateTable('operations')
    .set({
      status: outcome.status,
      http_status: outcome.httpStatus,
      result: outcome.result === undefined ? null : JSON.stringify(outcome.result),
      error: outcome.error === undefined ? null : JSON.stringify(outcome.error),
      ...(outcome.keepRequest ? {} : { request: null }),
      updated_at: new Date().toISOString(),
    })
    .where('reference', '=', reference)
    .where('status', 'in', from)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Pending operations, oldest first, for the worker. */
export async function listPendingReferences(db: Queryable, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('operations')
    .select('reference')
    .where('status', '=', 'Pending')
    .orderBy('created_epoch_ms')
    .limit(limit)
    .execute();
  return rows.map((row) => row.reference);
}

function toRow(record: OperationRecord): Selectable<OperationTable> {
  return {
    reference: record.reference,
    client_key: record.clientKey,
    correlation_id: record.correlationId,
    correlation_supplied: record.correlationSupplied ? 1 : 0,
    operation: record.operation,
    scope: record.scope,
    path: record.path,
    request_hash: record.requestHash,
    request: record.request === undefined ? null : JSON.stringify(record.request),
    status: record.status,
    http_status: record.httpStatus,
    result: record.result === undefined ? null : JSON.stringify(record.result),
    error: record.error === undefined ? null : JSON.stringify(record.error),
    actor: JSON.stringify(record.actor),
    created_at: record.createdAt,
    created_epoch_ms: BigInt(record.createdEpochMs),
    updated_at: record.updatedAt,
  };
}

function toRecord(row: Selectable<OperationTable>): OperationRecord {
  const parse = (value: string | null) => (value === null ? undefined : (JSON.parse(value) as unknown));
  return {
    reference: row.reference,
    clientKey: row.client_key,
    correlationId: row.correlation_id,
    correlationSupplied: Number(row.correlation_supplied) === 1,
    operation: row.operation,
    scope: row.scope,
    path: row.path,
    requestHash: row.request_hash,
    request: parse(row.request),
    status: row.status as OperationStatus,
    httpStatus: row.http_status === null ? null : Number(row.http_status),
    result: parse(row.result),
    error: parse(row.error),
    actor: parse(row.actor),
    createdAt: row.created_at,
    createdEpochMs: Number(toBigInt(row.created_epoch_ms)),
    updatedAt: row.updated_at,
  };
}

/** A unique index refused the insert: the correlation id was consumed concurrently. */
export function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: string } | undefined)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}
