/**
 * What the console reads (issue 11) of the API's own tables: operations, the audit trail,
 * clients. Read-only; never a secret or a secret's hash. The bank's records (customers, accounts,
 * postings, term deposits, loan facilities) are the core's: they are read through the port's read
 * side (src/operator/bank-views.ts), never from here, so that they work with a remote core too.
 */
import { toBigInt } from './bigint.js';
import type { Queryable } from './queryable.js';

/** `{issuer}#{clientId}` → the client's realm (for coregate's own issuers), id and issuer. */
export function clientOfKey(clientKey: string): { realm: string | null; clientId: string; issuer: string } {
  const hash = clientKey.lastIndexOf('#');
  const issuer = hash < 0 ? '' : clientKey.slice(0, hash);
  const clientId = hash < 0 ? clientKey : clientKey.slice(hash + 1);
  const match = /\/realms\/([^/]+)$/.exec(issuer);
  let realm: string | null = null;
  try {
    realm = match?.[1] === undefined ? null : decodeURIComponent(match[1]);
  } catch {
    realm = null;
  }
  return { realm, clientId, issuer };
}

type OperationRow = {
  reference: string;
  client_key: string;
  correlation_id: string;
  correlation_supplied: number;
  operation: string;
  path: string;
  status: string;
  http_status: number | null;
  result: string | null;
  error: string | null;
  actor: string;
  created_at: string;
  updated_at: string;
  attempts: number;
  scenario: string | null;
};

function operationView(row: OperationRow) {
  const actor = JSON.parse(row.actor) as { backboneUser?: string | null; workstation?: string | null; channel?: string | null };
  const parse = (value: string | null) => (value === null ? null : (JSON.parse(value) as unknown));
  return {
    reference: row.reference,
    operation: row.operation,
    path: row.path,
    status: row.status,
    httpStatus: row.http_status === null ? null : Number(row.http_status),
    client: clientOfKey(row.client_key),
    user: actor.backboneUser ?? null,
    workstation: actor.workstation ?? null,
    correlationId: row.correlation_id,
    correlationSupplied: Number(row.correlation_supplied) === 1,
    result: parse(row.result),
    error: parse(row.error),
    attempts: Number(row.attempts),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    // The sandbox scenario that forced this outcome (docs/sandbox.md, "Scenarios"), by name.
    scenario: row.scenario === null ? null : ((JSON.parse(row.scenario) as { name?: string }).name ?? null),
  };
}

const operationColumns = ['reference', 'client_key', 'correlation_id', 'correlation_supplied', 'operation', 'path', 'status', 'http_status', 'result', 'error', 'actor', 'created_at', 'updated_at', 'attempts', 'scenario'] as const;

/** Operations newest first, optionally of one status. */
export async function listOperations(db: Queryable, filter: { status?: string | undefined; limit: number; offset: number }) {
  let query = db.selectFrom('operations').select([...operationColumns]);
  if (filter.status !== undefined) query = query.where('status', '=', filter.status);
  const rows = await query.orderBy('created_epoch_ms', 'desc').orderBy('reference', 'desc').limit(filter.limit).offset(filter.offset).execute();
  return rows.map(operationView);
}

export async function findOperationView(db: Queryable, reference: string) {
  const row = await db.selectFrom('operations').select([...operationColumns]).where('reference', '=', reference).executeTakeFirst();
  return row && operationView(row);
}

/** The audit trail, newest first. */
export async function listAuditRecords(db: Queryable, limit: number, offset: number) {
  const rows = await db.selectFrom('audit_records').selectAll().orderBy('recorded_at', 'desc').orderBy('id', 'desc').limit(limit).offset(offset).execute();
  return rows.map((row) => ({
    id: row.id,
    recordedAt: row.recorded_at,
    chainSeq: row.chain_seq === null ? null : Number(toBigInt(row.chain_seq)),
    client: clientOfKey(row.client_id),
    user: row.backbone_user,
    workstation: row.workstation,
    operation: row.operation,
    correlationId: row.correlation_id,
    reference: row.reference,
    httpStatus: Number(row.http_status),
    outcome: row.outcome,
    durationMs: Number(row.duration_ms),
    details: JSON.parse(row.details) as unknown,
    hash: row.hash,
  }));
}

/** Every realm's clients: scopes, state, technical user, default workstation. Never the secret's hash. */
/** A page of every realm's clients, by realm and client id: `limit` rows from `offset` (the caller asks one more to know whether more follow). */
export async function listClientViews(db: Queryable, page: { limit: number; offset: number }) {
  const rows = await db
    .selectFrom('clients')
    .select(['realm', 'client_id', 'enabled', 'grants', 'scopes', 'technical_user', 'default_workstation', 'created_at', 'updated_at'])
    .orderBy('realm')
    .orderBy('client_id')
    .limit(page.limit)
    .offset(page.offset)
    .execute();
  return rows.map((row) => ({
    realm: row.realm,
    clientId: row.client_id,
    enabled: Number(row.enabled) === 1,
    grants: JSON.parse(row.grants) as string[],
    scopes: JSON.parse(row.scopes) as string[],
    technicalUser: row.technical_user,
    defaultWorkstation: row.default_workstation,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  }));
}

/** The outcomes a chart of operations shows: the operation states, and requests refused before one was recorded. */
export const minuteOutcomes = ['Executed', 'Rejected', 'Pending', 'Unknown', 'Refused'] as const;
const minutesShown = 60;

/**
 * Operations per minute by outcome over the last hour (a chart): operation records by status
 * (in flight counts as Unknown), and the audit trail's requests refused before an operation was
 * recorded (a bad token, a missing scope, an invalid body) as Refused.
 */
export async function operationsPerMinute(db: Queryable, nowEpochMs: number) {
  const firstMinuteMs = Math.floor(nowEpochMs / 60_000) * 60_000 - (minutesShown - 1) * 60_000;
  const series = Object.fromEntries(minuteOutcomes.map((outcome) => [outcome, new Array<number>(minutesShown).fill(0)])) as Record<(typeof minuteOutcomes)[number], number[]>;
  const add = (epochMs: number, outcome: (typeof minuteOutcomes)[number]) => {
    const index = Math.floor((epochMs - firstMinuteMs) / 60_000);
    if (index >= 0 && index < minutesShown) series[outcome][index] = (series[outcome][index] ?? 0) + 1;
  };
  const operations = await db
    .selectFrom('operations')
    .select(['created_epoch_ms', 'status'])
    .where('created_epoch_ms', '>=', BigInt(firstMinuteMs))
    .execute();
  for (const row of operations) {
    const status = row.status === 'InFlight' ? 'Unknown' : row.status;
    if ((minuteOutcomes as readonly string[]).includes(status)) add(Number(toBigInt(row.created_epoch_ms)), status as (typeof minuteOutcomes)[number]);
  }
  const refused = await db
    .selectFrom('audit_records')
    .select('recorded_at')
    .where('outcome', '=', 'Refused')
    .where('reference', 'is', null)
    .where('recorded_at', '>=', new Date(firstMinuteMs).toISOString())
    .execute();
  for (const row of refused) add(Date.parse(row.recorded_at), 'Refused');
  return { minutes: Array.from({ length: minutesShown }, (_, index) => new Date(firstMinuteMs + index * 60_000).toISOString()), series };
}
