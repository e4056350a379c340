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
