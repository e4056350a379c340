/**
 * Operation records of the business API: one per consumed correlation id (docs/api.md, "Correlation
 * ids and duplicates"). They hold the outcome a repeated id is answered with, the request while the
 * operation is not final, and the reconciler's bookkeeping. Every status change is an update
 * guarded by the state it leaves (src/operations/operation-states.ts has the table of allowed
 * transitions).
 */
import { sql, type Compilable, type Selectable } from 'kysely';
import { preparedInsert, preparedQueryOfArity, type PreparedQuery } from './prepared.js';
import type { OperationStatus } from '../core/operation-status.js';
import { toBigInt } from './bigint.js';
import type { Queryable } from './queryable.js';
import type { OperationTable } from './schema.js';
import type { StoreUnitOfWork } from './unit-of-work.js';


export interface OperationActor {
  clientId: string;
  backboneUser: string | null;
  workstation: string | null;
  channel: string | null;
}

export interface OperationRecord {
  reference: string;
  clientKey: string;
  correlationId: string;
  correlationSupplied: boolean;
  operation: string;
  scope: string;
  path: string;
  requestHash: string;
  /** The request, kept while the operation is not final (JSON). */
  request: unknown;
  status: OperationStatus;
  httpStatus: number | null;
  result: unknown;
  error: unknown;
  actor: OperationActor;
  createdAt: string;
  createdEpochMs: number;
  updatedAt: string;
  updatedEpochMs: number;
  attempts: number;
  nextAttemptEpochMs: number;
  /** Answered 202: the service owes the client an execution (the reconciler retries it). */
  accepted: boolean;
  /** The sandbox scenario the request forced (docs/sandbox.md, "Scenarios"), kept once final for the operator. */
  scenario?: StoredScenario | undefined;
}

/** A sandbox scenario as the record keeps it (src/operations/scenario.ts names them). */
export interface StoredScenario {
  name: string;
  delayMs: number;
}

const operationColumns = [
  'reference',
  'client_key',
  'correlation_id',
  'correlation_supplied',
  'operation',
  'scope',
  'path',
  'request_hash',
  'request',
  'status',
  'http_status',
  'result',
  'error',
  'actor',
  'created_at',
  'created_epoch_ms',
  'updated_at',
  'updated_epoch_ms',
  'attempts',
  'next_attempt_epoch_ms',
  'accepted',
  'scenario',
] as const satisfies ReadonlyArray<keyof OperationTable>;

const insertOperationRow = preparedInsert<Selectable<OperationTable>>(operationColumns, (db, rows) => db.insertInto('operations').values(rows));

export async function insertOperation(db: Queryable, record: OperationRecord): Promise<void> {
  await insertOperationRow.execute(db, toRow(record));
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

/**
 * Serializes, until the unit of work ends, the transactions that check the duplicate window for
 * one client and request hash. SQLite's single writer serializes them already.
 */
export async function lockRequestHash(unitOfWork: StoreUnitOfWork, clientKey: string, requestHash: string): Promise<void> {
  if (unitOfWork.store.dialect !== 'postgres') return;
  await sql`select pg_advisory_xact_lock(hashtextextended(${`${clientKey}|${requestHash}`}, 0))`.execute(unitOfWork.db);
}

/** The state an update leaves: the status, and for an in-flight claim the instant of the claim. */
export interface OperationGuard {
  status: OperationStatus;
  updatedEpochMs?: number;
}

export interface OperationChange {
  status: OperationStatus;
  httpStatus?: number | null;
  /** The result to store, or null to clear it. */
  result?: unknown;
  /** The error record to store, or null to clear it (an executed operation keeps no error). */
  error?: unknown;
  /** The request to keep (a retried request's body), or null to drop it once final. */
  request?: unknown;
  attempts?: number;
  nextAttemptEpochMs?: number;
  accepted?: boolean;
  /** The instant of the change; an in-flight claim is identified by it. */
  atEpochMs: number;
}

/** The columns an OperationChange may set, in the order of their parameters. */
type ChangeColumn = 'http_status' | 'result' | 'error' | 'request' | 'attempts' | 'accepted' | 'next_attempt_epoch_ms';

function changedColumns(change: OperationChange): Array<[ChangeColumn, unknown]> {
  const columns: Array<[ChangeColumn, unknown]> = [];
  if (change.httpStatus !== undefined) columns.push(['http_status', change.httpStatus]);
  if (change.result !== undefined) columns.push(['result', change.result === null ? null : JSON.stringify(change.result)]);
  if (change.error !== undefined) columns.push(['error', change.error === null ? null : JSON.stringify(change.error)]);
  if (change.request !== undefined) columns.push(['request', change.request === null ? null : JSON.stringify(change.request)]);
  if (change.attempts !== undefined) columns.push(['attempts', change.attempts]);
  if (change.accepted !== undefined) columns.push(['accepted', change.accepted ? 1 : 0]);
  if (change.nextAttemptEpochMs !== undefined) columns.push(['next_attempt_epoch_ms', BigInt(change.nextAttemptEpochMs)]);
  return columns;
}

/**
 * One prepared update per shape of change (which columns, whether the guard names the claim's
 * instant): a handful in all, bounded by the changes written in the code. Process-wide on
 * purpose: a prepared query is pure (its SQL text per dialect, no connection, no value), so one
 * serves every database; what a database keeps of it (a statement's name and plan) is its own
 * (engine/postgres-driver.ts).
 */
const operationUpdates = new Map<string, PreparedQuery<unknown[], never>>();

function operationUpdate(columns: readonly ChangeColumn[], guardsInstant: boolean): PreparedQuery<unknown[], never> {
  const key = `${columns.join(',')}|${guardsInstant}`;
  let update = operationUpdates.get(key);
  if (update === undefined) {
    // Arguments: status, updated_at, updated_epoch_ms, the changed columns, reference, guard status[, guard instant].
    const arity = 3 + columns.length + 2 + (guardsInstant ? 1 : 0);
    update = preparedQueryOfArity<never>(arity, (db, args) => {
      const set: Record<string, unknown> = { status: args[0], updated_at: args[1], updated_epoch_ms: args[2] };
      columns.forEach((column, index) => (set[column] = args[3 + index]));
      let query = db
        .updateTable('operations')
        .set(set as never)
        .where('reference', '=', args[3 + columns.length] as string)
        .where('status', '=', args[4 + columns.length] as string);
      if (guardsInstant) query = query.where('updated_epoch_ms', '=', args[5 + columns.length] as bigint);
      return query as unknown as Compilable<never>;
    });
    operationUpdates.set(key, update);
  }
  return update;
}

/** Moves an operation from the guarded state to its change; answers whether it was in that state. */
export async function updateOperation(db: Queryable, reference: string, guard: OperationGuard, change: OperationChange): Promise<boolean> {
  const changed = changedColumns(change);
  const guardsInstant = guard.updatedEpochMs !== undefined;
  const args: unknown[] = [change.status, new Date(change.atEpochMs).toISOString(), BigInt(change.atEpochMs), ...changed.map(([, value]) => value), reference, guard.status];
  if (guardsInstant) args.push(BigInt(guard.updatedEpochMs as number));
  const result = await operationUpdate(
    changed.map(([column]) => column),
    guardsInstant,
  ).execute(db, ...args);
  return (result.numAffectedRows ?? 0n) > 0n;
}

/**
 * Pending operations (202 answers) with their request, due at `nowEpochMs` (an async sandbox
 * scenario's is due after its delay), oldest first, for the pending worker.
 */
export async function listPendingOperations(db: Queryable, nowEpochMs: number, limit: number): Promise<OperationRecord[]> {
  const rows = await db
    .selectFrom('operations')
    .selectAll()
    .where('status', '=', 'Pending')
    .where('request', 'is not', null)
    .where('next_attempt_epoch_ms', '<=', BigInt(nowEpochMs))
    .orderBy('created_epoch_ms')
    .limit(limit)
    .execute();
  return rows.map(toRecord);
}

/** Unknown operations due for an attempt, and in-flight ones abandoned before `staleBeforeEpochMs`. */
export async function listOperationsToReconcile(db: Queryable, nowEpochMs: number, staleBeforeEpochMs: number, limit: number): Promise<OperationRecord[]> {
  const rows = await db
    .selectFrom('operations')
    .selectAll()
    .where((eb) =>
      eb.or([
        eb.and([eb('status', '=', 'Unknown'), eb('next_attempt_epoch_ms', '<=', BigInt(nowEpochMs))]),
        eb.and([eb('status', '=', 'InFlight'), eb('updated_epoch_ms', '<', BigInt(staleBeforeEpochMs))]),
      ]),
    )
    .orderBy('next_attempt_epoch_ms')
    .limit(limit)
    .execute();
  return rows.map(toRecord);
}

export interface ReconcilerBacklog {
  pending: number;
  inFlight: number;
  unknown: number;
  /** Unknown or in flight, created before the age limit. */
  overAge: number;
}

export async function countReconcilerBacklog(db: Queryable, overAgeBeforeEpochMs: number): Promise<ReconcilerBacklog> {
  const rows = await db
    .selectFrom('operations')
    .select('status')
    .select((eb) => eb.fn.countAll<string | number>().as('count'))
    .select((eb) => eb.fn.sum<string | number | null>(eb.case().when('created_epoch_ms', '<', BigInt(overAgeBeforeEpochMs)).then(1).else(0).end()).as('old'))
    .where('status', 'in', ['Pending', 'InFlight', 'Unknown'])
    .groupBy('status')
    .execute();
  const count = (status: string) => Number(rows.find((row) => row.status === status)?.count ?? 0);
  const old = rows.filter((row) => row.status !== 'Pending').reduce((sum, row) => sum + Number(row.old ?? 0), 0);
  return { pending: count('Pending'), inFlight: count('InFlight'), unknown: count('Unknown'), overAge: old };
}

/** Operations not final and created before the instant: `coregate check`'s finding. */
export async function listUnsettledOperations(db: Queryable, createdBeforeEpochMs: number, limit: number): Promise<OperationRecord[]> {
  const rows = await db
    .selectFrom('operations')
    .selectAll()
    .where('status', 'in', ['InFlight', 'Unknown'])
    .where('created_epoch_ms', '<', BigInt(createdBeforeEpochMs))
    .orderBy('created_epoch_ms')
    .limit(limit)
    .execute();
  return rows.map(toRecord);
}

/** References of executed operations in reference order, a page after `afterReference`. */
export async function listExecutedReferences(db: Queryable, afterReference: string, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('operations')
    .select('reference')
    .where('status', '=', 'Executed')
    .where('reference', '>', afterReference)
    .orderBy('reference')
    .limit(limit)
    .execute();
  return rows.map((row) => row.reference);
}

/** Which of the references have an audit record of their success (HTTP 200). */
export async function findAuditedSuccesses(db: Queryable, references: readonly string[]): Promise<Set<string>> {
  if (references.length === 0) return new Set();
  const rows = await db.selectFrom('audit_records').select('reference').where('reference', 'in', [...references]).where('http_status', '=', 200).execute();
  return new Set(rows.map((row) => row.reference ?? ''));
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
    updated_epoch_ms: BigInt(record.updatedEpochMs),
    attempts: record.attempts,
    next_attempt_epoch_ms: BigInt(record.nextAttemptEpochMs),
    accepted: record.accepted ? 1 : 0,
    scenario: record.scenario === undefined ? null : JSON.stringify(record.scenario),
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
    actor: parse(row.actor) as OperationActor,
    createdAt: row.created_at,
    createdEpochMs: Number(toBigInt(row.created_epoch_ms)),
    updatedAt: row.updated_at,
    updatedEpochMs: Number(toBigInt(row.updated_epoch_ms)),
    attempts: Number(row.attempts),
    nextAttemptEpochMs: Number(toBigInt(row.next_attempt_epoch_ms)),
    accepted: Number(row.accepted) === 1,
    scenario: row.scenario === null ? undefined : (JSON.parse(row.scenario) as StoredScenario),
  };
}

/** A unique index refused the insert: the correlation id was consumed concurrently. */
export function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: string } | undefined)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}
