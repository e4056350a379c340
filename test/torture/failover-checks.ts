/**
 * The failover torture's verdict (issue 24), read from the rows of the database that is primary at
 * the end: every operation a client was told happened is there exactly once and Executed, nothing
 * was executed twice, every operation a client was refused moved nothing, every operation left
 * unknown or accepted is settled (the reconciler and the pending worker drained within a bound),
 * `coregate check` passes, and money is conserved: the ledger balances, every currency's balances
 * sum to zero, and the source account lost exactly the principals of the deposits that executed.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../../src/store/schema.js';
import { runCli } from '../helpers/cli.js';
import { sleep } from '../helpers/wait.js';
import type { ClientOutcome } from './failover-client.js';
import { conservationAnomalies, movementAnomalies } from './ledger-checks.js';
import { embedded } from '../helpers/stores.js';

const unsettled = ['Pending', 'InFlight', 'Unknown'];

/** Waits until no operation is unsettled, for at most `boundMs`; answers those still unsettled. */
export async function waitUntilSettled(db: Kysely<Database>, boundMs: number): Promise<Array<{ reference: string; status: string }>> {
  const deadline = Date.now() + boundMs;
  for (;;) {
    let open: Array<{ reference: string; status: string }> | undefined;
    try {
      open = await db.selectFrom('operations').select(['reference', 'status']).where('status', 'in', unsettled).execute();
    } catch {
      // The checker's own connection may have met the last blip; ask again.
    }
    if (open?.length === 0) return [];
    if (Date.now() > deadline) return open ?? [{ reference: '(the database did not answer)', status: 'unreadable' }];
    await sleep(250);
  }
}

export interface LedgerExpectation {
  /** The deposits' source account, its opening balance in minor units. */
  sourceAccount: string;
  sourceOpeningMinor: bigint;
  /** The principal each term deposit request carried, by correlation id, in minor units. */
  principalMinorByCorrelation: ReadonlyMap<string, bigint>;
}

/** Every anomaly the rows show; an empty list is the run's pass. */
export async function checkAfterFailovers(options: {
  db: Kysely<Database>;
  dbUrl: string;
  outcomes: readonly ClientOutcome[];
  ledger: LedgerExpectation;
}): Promise<string[]> {
  const { db, outcomes } = options;
  const anomalies: string[] = [];
  const check = await runCli(['check', '--db', options.dbUrl, '--json'], { timeoutMs: 120_000 });
  if (check.code !== 0) anomalies.push(`coregate check failed (exit ${check.code}): ${(check.stdout + check.stderr).slice(0, 2_000)}`);

  const operations = await db.selectFrom('operations').select(['reference', 'correlation_id', 'client_key', 'operation', 'status']).execute();
  anomalies.push(...(await movementAnomalies(db, operations)));
  const byCorrelation = new Map<string, typeof operations>();
  for (const operation of operations) {
    const key = `${operation.client_key}\u0000${operation.correlation_id}`;
    byCorrelation.set(key, [...(byCorrelation.get(key) ?? []), operation]);
  }
  for (const [key, records] of byCorrelation) {
    if (records.length > 1) anomalies.push(`correlation id ${key.split('\u0000')[1]} has ${records.length} operations`);
  }
  const byClientCorrelation = new Map(operations.map((operation) => [operation.correlation_id, operation]));

  for (const outcome of outcomes) {
    const operation = byClientCorrelation.get(outcome.correlationId);
    switch (outcome.kind) {
      case 'executed':
        if (!operation) anomalies.push(`acknowledged ${outcome.operation} ${outcome.reference} (correlation ${outcome.correlationId}) is missing: lost`);
        else if (operation.reference !== outcome.reference || operation.status !== 'Executed') {
          anomalies.push(`acknowledged ${outcome.operation} ${outcome.reference} is ${operation.reference} ${operation.status}`);
        }
        break;
      case 'accepted':
        if (!operation) anomalies.push(`accepted ${outcome.reference} is missing: lost`);
        else if (operation.status !== 'Executed' && operation.status !== 'Rejected') anomalies.push(`accepted ${outcome.reference} is still ${operation.status}`);
        break;
      case 'refused':
        if (operation?.status === 'Executed') anomalies.push(`refused ${outcome.correlationId} (${outcome.status} ${outcome.code ?? ''}) is Executed`);
        break;
      case 'unknown':
        // Nothing was promised; whatever happened must be settled and consistent (checked above).
        if (operation && unsettled.includes(operation.status)) anomalies.push(`${outcome.correlationId}, unknown to its client, is still ${operation.status}`);
        break;
    }
  }

  anomalies.push(...(await conservationAnomalies(db)));

  const { sourceAccount, sourceOpeningMinor, principalMinorByCorrelation } = options.ledger;
  let executedPrincipalsMinor = 0n;
  for (const operation of operations) {
    if (operation.status !== 'Executed' || operation.operation !== 'initiateTermDeposit') continue;
    const principal = principalMinorByCorrelation.get(operation.correlation_id);
    if (principal === undefined) anomalies.push(`executed deposit ${operation.reference} has a correlation id no client sent`);
    else executedPrincipalsMinor += principal;
  }
  const source = await embedded(db).selectFrom('accounts').select('balance_minor').where('account_number', '=', sourceAccount).executeTakeFirst();
  const expectedMinor = sourceOpeningMinor - executedPrincipalsMinor;
  if (source === undefined || BigInt(source.balance_minor) !== expectedMinor) {
    anomalies.push(`source account ${sourceAccount} holds ${source?.balance_minor ?? 'nothing'} minor units, not ${expectedMinor} (opening less the executed deposits' principals)`);
  }
  return anomalies;
}

/** The API's warning for a request that met an outage (src/api/plugin.ts): its correlation id and whether its 503 is audited. */
export interface OutageLine {
  correlationId: string | undefined;
  refusalAudited: boolean;
}

/** The outage warnings among a process's log lines (JSON, one per line); other lines are ignored. */
export function outageLinesOf(text: string): OutageLine[] {
  const found: OutageLine[] = [];
  for (const line of text.split('\n')) {
    if (!line.includes('business API request met a database outage')) continue;
    try {
      const parsed = JSON.parse(line) as { msg?: string; correlationId?: string; refusalAudited?: boolean };
      if (parsed.msg === 'business API request met a database outage') found.push({ correlationId: parsed.correlationId, refusalAudited: parsed.refusalAudited === true });
    } catch {
      // A line cut by the output's bound: not one of ours.
    }
  }
  return found;
}

export interface UnavailableAudit {
  /** 503s the clients received for operations. */
  answered: number;
  /** Of those, the ones the API refused before authentication had finished (its warning says so): no record is owed. */
  beforeAuthentication: number;
  /** Audit records of 503s for the clients' correlation ids. */
  audited: number;
  anomalies: string[];
}

/**
 * The audit rule through the outages (docs/api.md "Audit"): every 503 a client received for an
 * operation that passed authentication ends as an audit record with its correlation id and status
 * 503, once the database is back; those kept in an instance's audit spool meanwhile are appended
 * by its drain within seconds, so this waits for them up to `boundMs`. A 503 the API answered
 * before authentication had finished (the token's realm could not be read) owes no record: the
 * instance's warning for it says so (`refusalAudited: false`), and it is not counted.
 */
export async function checkUnavailableAudited(options: {
  db: Kysely<Database>;
  /** 503s received, per correlation id. */
  received: ReadonlyMap<string, number>;
  /** The API processes' outage warnings. */
  outageLines: readonly OutageLine[];
  boundMs: number;
}): Promise<UnavailableAudit> {
  const excused = new Map<string, number>();
  for (const line of options.outageLines) {
    if (line.refusalAudited || line.correlationId === undefined) continue;
    excused.set(line.correlationId, (excused.get(line.correlationId) ?? 0) + 1);
  }
  const answered = [...options.received.values()].reduce((sum, count) => sum + count, 0);
  let beforeAuthentication = 0;
  const owed = new Map<string, number>();
  for (const [correlationId, count] of options.received) {
    const unowed = Math.min(count, excused.get(correlationId) ?? 0);
    beforeAuthentication += unowed;
    if (count > unowed) owed.set(correlationId, count - unowed);
  }
  const deadline = Date.now() + options.boundMs;
  for (;;) {
    let audited: Map<string, number> | undefined;
    try {
      const rows = await options.db.selectFrom('audit_records').select('correlation_id').where('http_status', '=', 503).execute();
      audited = new Map();
      for (const row of rows) {
        if (row.correlation_id !== null && options.received.has(row.correlation_id)) audited.set(row.correlation_id, (audited.get(row.correlation_id) ?? 0) + 1);
      }
    } catch {
      // The checker's own connection may have met the last blip; ask again.
    }
    const short = audited === undefined ? [...owed.keys()] : [...owed].filter(([correlationId, count]) => (audited.get(correlationId) ?? 0) < count).map(([correlationId]) => correlationId);
    if (short.length === 0 || Date.now() > deadline) {
      const auditedCount = audited === undefined ? 0 : [...audited.values()].reduce((sum, count) => sum + count, 0);
      const anomalies = short
        .slice(0, 20)
        .map((correlationId) => `503 for correlation ${correlationId} answered ${owed.get(correlationId)} time(s) after authentication, audited ${audited?.get(correlationId) ?? 0} time(s) ${options.boundMs / 1000} s after the load: an unaudited refusal`);
      if (short.length > 20) anomalies.push(`... and ${short.length - 20} more unaudited 503s`);
      return { answered, beforeAuthentication, audited: auditedCount, anomalies };
    }
    await sleep(500);
  }
}
