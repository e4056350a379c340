/**
 * Operations the core refused with a refusal coregate cannot name (the catalogue's
 * unrecognisedCoreRefusal, `REJECTED_BY_CORE`, 422, docs/core-protocol.md "What the
 * API's adapter makes of it"), read from the operations table: unlike the log line and the metric
 * they survive restarts and are the same for every instance. `coregate check` reports them as a
 * finding, the operator API and the console show them.
 *
 * Only a look-back window is read, newest first: the operations stay in their history, but a core
 * that has been mended stops being a finding once its last such refusal is older than the window,
 * and the query reads the rejected operations of that window only (the index on status and
 * creation time).
 */
import { errorCatalogue, errorCode } from '../core/error-catalogue.js';
import type { Queryable } from './queryable.js';

/** How far back a refusal coregate could not name is a finding: a week, so that a weekly check sees each. */
export const unrecognisedRefusalLookbackMs = 7 * 24 * 60 * 60 * 1000;

export interface UnrecognisedCoreRefusal {
  reference: string;
  operation: string;
  correlationId: string;
  /** The error record's code, e.g. TD-422-091. */
  code: string;
  /** The client's message: it quotes the core's refusal name, code and message. */
  message: string;
  createdAt: string;
  /** When it was settled. */
  updatedAt: string;
}

export interface UnrecognisedCoreRefusals {
  /** Every such operation created since `sinceEpochMs`: exact. */
  count: number;
  /** The newest of them, at most `listedMax`. */
  operations: UnrecognisedCoreRefusal[];
}

const entry = errorCatalogue.unrecognisedCoreRefusal;
/** The error record's `errordetail[0].code`, in each family, as stored (JSON text): no wildcard character of LIKE in it. */
const storedCodes = (['TD', 'ML'] as const).map((family) => `%"code":"${errorCode(entry, family)}"%`);

export async function findUnrecognisedCoreRefusals(db: Queryable, sinceEpochMs: number, listedMax: number): Promise<UnrecognisedCoreRefusals> {
  const matching = () =>
    db
      .selectFrom('operations')
      .where('status', '=', 'Rejected')
      .where('created_epoch_ms', '>=', BigInt(sinceEpochMs))
      .where('http_status', '=', entry.status)
      .where((eb) => eb.or(storedCodes.map((pattern) => eb('error', 'like', pattern))));
  const counted = await matching()
    .select((eb) => eb.fn.countAll<string | number>().as('count'))
    .executeTakeFirst();
  const rows = await matching()
    .select(['reference', 'operation', 'correlation_id', 'error', 'created_at', 'updated_at'])
    .orderBy('created_epoch_ms', 'desc')
    .orderBy('reference', 'desc')
    .limit(listedMax)
    .execute();
  return {
    count: Number(counted?.count ?? 0),
    operations: rows.map((row) => {
      const detail = (JSON.parse(row.error ?? '{}') as { errordetail?: Array<{ code?: string; message?: string }> }).errordetail?.[0];
      return {
        reference: row.reference,
        operation: row.operation,
        correlationId: row.correlation_id,
        code: detail?.code ?? '',
        message: detail?.message ?? '',
        createdAt: row.created_at,
        updatedAt: row.updated_at,
      };
    }),
  };
}
