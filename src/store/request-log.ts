/**
 * The sandbox's request log (docs/sandbox.md, "The request log") as stored: rows written in
 * batches, read newest first with the filters a client and the console share, pruned by age and by
 * count per client.
 */
import { sql, type Insertable, type Selectable } from 'kysely';
import { toBigInt } from './bigint.js';
import type { Queryable } from './queryable.js';
import type { RequestLogTable } from './schema.js';

export interface RequestLogRow {
  id: string;
  clientKey: string;
  recordedAt: string;
  recordedEpochMs: number;
  method: string;
  path: string;
  status: number;
  correlationId: string | null;
  durationMs: number;
  operationReference: string | null;
  scenario: string | null;
  requestHeaders: Record<string, string>;
  responseHeaders: Record<string, string>;
  requestBody: string | null;
  responseBody: string | null;
}

export interface RequestLogFilter {
  /** One client's requests; every client's when absent (the operator). */
  clientKey?: string | undefined;
  /** Clients whose key ends with this (`/realms/{realm}#{clientId}`): the operator's client filter. */
  clientKeySuffix?: string | undefined;
  correlationId?: string | undefined;
  /** The requests about one operation (its execution, repeats, polls of its resource). */
  operationReference?: string | undefined;
  /** An exact status (404) or a class (4 for 4xx). */
  status?: { exact: number } | { hundreds: number } | undefined;
  /** The path starts with this (the query string is never stored). */
  pathPrefix?: string | undefined;
  /** Recorded at or after this instant. */
  sinceEpochMs: number;
  limit: number;
  offset: number;
}

/** Rows per insert statement: PostgreSQL takes at most 65,535 parameters (15 columns each). */
const insertRowsMax = 500;

export async function insertRequestLogRows(db: Queryable, rows: readonly RequestLogRow[]): Promise<void> {
  for (let start = 0; start < rows.length; start += insertRowsMax) {
    await db.insertInto('request_log').values(rows.slice(start, start + insertRowsMax).map(toRow)).execute();
  }
}

/** A page, newest first, and whether more follow. */
export async function listRequestLog(db: Queryable, filter: RequestLogFilter): Promise<{ items: RequestLogRow[]; more: boolean }> {
  let query = db.selectFrom('request_log').selectAll().where('recorded_epoch_ms', '>=', BigInt(filter.sinceEpochMs));
  if (filter.clientKey !== undefined) query = query.where('client_key', '=', filter.clientKey);
  if (filter.correlationId !== undefined) query = query.where('correlation_id', '=', filter.correlationId);
  if (filter.operationReference !== undefined) query = query.where('operation_reference', '=', filter.operationReference);
  if (filter.status !== undefined) {
    const { status } = filter;
    query = 'exact' in status ? query.where('status', '=', status.exact) : query.where('status', '>=', status.hundreds * 100).where('status', '<', status.hundreds * 100 + 100);
  }
  if (filter.pathPrefix !== undefined) query = query.where(sql<boolean>`path like ${`${likeText(filter.pathPrefix)}%`} escape '\\'`);
  if (filter.clientKeySuffix !== undefined) query = query.where(sql<boolean>`client_key like ${`%${likeText(filter.clientKeySuffix)}`} escape '\\'`);
  const rows = await query
    .orderBy('recorded_epoch_ms', 'desc')
    .orderBy('id', 'desc')
    .limit(filter.limit + 1)
    .offset(filter.offset)
    .execute();
  return { items: rows.slice(0, filter.limit).map(toEntry), more: rows.length > filter.limit };
}

/** A text LIKE matches as it is: its wildcards (and the escape character) escaped. */
function likeText(text: string): string {
  return text.replace(/[\\%_]/g, (character) => `\\${character}`);
}

/**
 * Deletes what the log no longer keeps: rows recorded before `beforeEpochMs`, and each client's
 * rows beyond its newest `perClientMax`. Answers how many rows went.
 */
export async function pruneRequestLog(db: Queryable, beforeEpochMs: number, perClientMax: number): Promise<number> {
  const expired = await db.deleteFrom('request_log').where('recorded_epoch_ms', '<', BigInt(beforeEpochMs)).executeTakeFirst();
  let deleted = Number(expired.numDeletedRows ?? 0n);
  const crowded = await db
    .selectFrom('request_log')
    .select('client_key')
    .groupBy('client_key')
    .having((eb) => eb.fn.countAll(), '>', perClientMax)
    .execute();
  for (const { client_key: clientKey } of crowded) {
    // The newest row past the bound; it and everything older go.
    const edge = await db
      .selectFrom('request_log')
      .select(['recorded_epoch_ms', 'id'])
      .where('client_key', '=', clientKey)
      .orderBy('recorded_epoch_ms', 'desc')
      .orderBy('id', 'desc')
      .offset(perClientMax)
      .limit(1)
      .executeTakeFirst();
    if (!edge) continue;
    const result = await db
      .deleteFrom('request_log')
      .where('client_key', '=', clientKey)
      .where((eb) => eb.or([eb('recorded_epoch_ms', '<', edge.recorded_epoch_ms), eb.and([eb('recorded_epoch_ms', '=', edge.recorded_epoch_ms), eb('id', '<=', edge.id)])]))
      .executeTakeFirst();
    deleted += Number(result.numDeletedRows ?? 0n);
  }
  return deleted;
}

function toRow(entry: RequestLogRow): Insertable<RequestLogTable> {
  return {
    id: entry.id,
    client_key: entry.clientKey,
    recorded_at: entry.recordedAt,
    recorded_epoch_ms: BigInt(entry.recordedEpochMs),
    method: entry.method,
    path: entry.path,
    status: entry.status,
    correlation_id: entry.correlationId,
    duration_ms: entry.durationMs,
    operation_reference: entry.operationReference,
    scenario: entry.scenario,
    request_headers: JSON.stringify(entry.requestHeaders),
    response_headers: JSON.stringify(entry.responseHeaders),
    request_body: entry.requestBody,
    response_body: entry.responseBody,
  };
}

function toEntry(row: Selectable<RequestLogTable>): RequestLogRow {
  return {
    id: row.id,
    clientKey: row.client_key,
    recordedAt: row.recorded_at,
    recordedEpochMs: Number(toBigInt(row.recorded_epoch_ms)),
    method: row.method,
    path: row.path,
    status: Number(row.status),
    correlationId: row.correlation_id,
    durationMs: Number(row.duration_ms),
    operationReference: row.operation_reference,
    scenario: row.scenario,
    requestHeaders: JSON.parse(row.request_headers) as Record<string, string>,
    responseHeaders: JSON.parse(row.response_headers) as Record<string, string>,
    requestBody: row.request_body,
    responseBody: row.response_body,
  };
}
