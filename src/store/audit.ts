/** The audit trail's rows: appended in business transactions, chained just after commit. */
import { sql, type Insertable, type Selectable } from 'kysely';
import { preparedInsert, preparedInsertRowsMax, preparedQuery } from './prepared.js';
import { toBigInt } from './bigint.js';
import type { Store } from './connect.js';
import type { Queryable } from './queryable.js';
import type { AuditRecordTable } from './schema.js';

export interface AuditEntry {
  id: string;
  recordedAt: string;
  clientId: string;
  backboneUser: string | null;
  workstation: string | null;
  operation: string;
  correlationId: string | null;
  reference: string | null;
  httpStatus: number;
  outcome: string;
  durationMs: number;
  details: Record<string, unknown>;
}

export interface ChainedAuditEntry extends AuditEntry {
  chainSeq: number | null;
  prevHash: string | null;
  hash: string | null;
}

export async function insertAuditEntry(db: Queryable, entry: AuditEntry): Promise<void> {
  await insertAuditEntries(db, [entry]);
}

/** Audit rows written by one statement, for a batch of refusals (src/audit/refusal-audit.ts). */
export const auditRowsPerStatementMax = 200;

const auditColumns = [
  'id',
  'recorded_at',
  'client_id',
  'backbone_user',
  'workstation',
  'operation',
  'correlation_id',
  'reference',
  'http_status',
  'outcome',
  'duration_ms',
  'details',
  'chain_seq',
  'prev_hash',
  'hash',
] as const satisfies ReadonlyArray<keyof AuditRecordTable>;

const auditInsert = preparedInsert<Insertable<AuditRecordTable>>(auditColumns, (db, rows) => db.insertInto('audit_records').values(rows));

export async function insertAuditEntries(db: Queryable, entries: readonly AuditEntry[], links?: readonly ChainLink[]): Promise<void> {
  if (entries.length === 0) return;
  if (entries.length > auditRowsPerStatementMax) throw new RangeError(`at most ${auditRowsPerStatementMax} audit rows per statement`);
  if (links !== undefined && links.length !== entries.length) throw new RangeError('one chain link per audit entry');
  // Prepared statements of up to 64 rows: Kysely built and compiled a batch's insert every time.
  if (entries.length === 1) {
    await auditInsert.execute(db, auditRow(entries[0] as AuditEntry, links?.[0]));
    return;
  }
  const rows = entries.map((entry, index) => auditRow(entry, links?.[index]));
  for (let start = 0; start < rows.length; start += preparedInsertRowsMax) await auditInsert.executeRows(db, rows.slice(start, start + preparedInsertRowsMax));
}

/**
 * Inserts records unchained, each at most once: a record whose id is stored already is left as it
 * is. For the audit spool's drain (src/audit/audit-spool-drain.ts), which appends a file's records
 * again after a crash between their commit and the file's removal.
 */
export async function insertAuditEntriesOnce(db: Queryable, entries: readonly AuditEntry[]): Promise<void> {
  if (entries.length === 0) return;
  if (entries.length > auditRowsPerStatementMax) throw new RangeError(`at most ${auditRowsPerStatementMax} audit rows per statement`);
  await db
    .insertInto('audit_records')
    .values(entries.map((entry) => auditRow(entry, undefined)))
    .onConflict((conflict) => conflict.column('id').doNothing())
    .execute();
}

/** The row as it is stored (an absent value is NULL), so that `toEntry` of it is the entry as it reads back. */
function auditRow(entry: AuditEntry, link: ChainLink | undefined): Insertable<AuditRecordTable> {
  return {
    id: entry.id,
    recorded_at: entry.recordedAt,
    client_id: entry.clientId,
    backbone_user: entry.backboneUser ?? null,
    workstation: entry.workstation ?? null,
    operation: entry.operation,
    correlation_id: entry.correlationId ?? null,
    reference: entry.reference ?? null,
    http_status: entry.httpStatus,
    outcome: entry.outcome,
    duration_ms: entry.durationMs,
    details: JSON.stringify(entry.details),
    chain_seq: link === undefined ? null : link.seq,
    prev_hash: link === undefined ? null : link.prevHash,
    hash: link === undefined ? null : link.hash,
  };
}

/** The entry as it reads back from the store (what its hash is computed and verified on). */
export function storedAuditEntry(entry: AuditEntry): AuditEntry {
  return toEntry(auditRow(entry, undefined) as Selectable<AuditRecordTable>);
}

const lastChainedRow = preparedQuery((db) =>
  db.selectFrom('audit_records').select(['chain_seq', 'hash']).where('chain_seq', 'is not', null).orderBy('chain_seq', 'desc').limit(1),
);
const anyUnchainedRow = preparedQuery((db) => db.selectFrom('audit_records').select('id').where('chain_seq', 'is', null).limit(1));

/** Whether some record still waits for the chainer. */
export async function hasUnchained(db: Queryable): Promise<boolean> {
  return (await anyUnchainedRow.first(db)) !== undefined;
}

export async function lastChained(db: Queryable): Promise<{ seq: number; hash: string } | undefined> {
  const row = await lastChainedRow.first(db);
  return row && { seq: Number(toBigInt(row.chain_seq)), hash: row.hash ?? '' };
}

export async function listUnchained(db: Queryable, limit: number): Promise<ChainedAuditEntry[]> {
  const rows = await db
    .selectFrom('audit_records')
    .selectAll()
    .where('chain_seq', 'is', null)
    .orderBy('recorded_at')
    .orderBy('id')
    .limit(limit)
    .execute();
  return rows.map(toEntry);
}

export interface ChainLink {
  id: string;
  seq: number;
  prevHash: string;
  hash: string;
}

/** Gives many records their chain links in one statement (one round trip, not one per record). */
export async function setChainLinks(db: Queryable, links: readonly ChainLink[]): Promise<void> {
  if (links.length === 0) return;
  const values = sql.join(links.map((link) => sql`(${link.id}, cast(${link.seq} as bigint), ${link.prevHash}, ${link.hash})`));
  await sql`with link (id, seq, prev_hash, hash) as (values ${values})
    update audit_records set chain_seq = link.seq, prev_hash = link.prev_hash, hash = link.hash
    from link where audit_records.id = link.id`.execute(db);
}

/** Chained records in chain order, a page at a time. */
export async function listChained(db: Queryable, afterSeq: number, limit: number): Promise<ChainedAuditEntry[]> {
  const rows = await db
    .selectFrom('audit_records')
    .selectAll()
    .where('chain_seq', '>', BigInt(afterSeq))
    .orderBy('chain_seq')
    .limit(limit)
    .execute();
  return rows.map(toEntry);
}

export async function countUnchained(db: Queryable): Promise<number> {
  const row = await db
    .selectFrom('audit_records')
    .select((eb) => eb.fn.countAll<string | number>().as('count'))
    .where('chain_seq', 'is', null)
    .executeTakeFirst();
  return Number(row?.count ?? 0);
}

function toEntry(row: Selectable<AuditRecordTable>): ChainedAuditEntry {
  return {
    id: row.id,
    recordedAt: row.recorded_at,
    clientId: row.client_id,
    backboneUser: row.backbone_user,
    workstation: row.workstation,
    operation: row.operation,
    correlationId: row.correlation_id,
    reference: row.reference,
    httpStatus: Number(row.http_status),
    outcome: row.outcome,
    durationMs: Number(row.duration_ms),
    details: JSON.parse(row.details) as Record<string, unknown>,
    chainSeq: row.chain_seq === null ? null : Number(toBigInt(row.chain_seq)),
    prevHash: row.prev_hash,
    hash: row.hash,
  };
}
