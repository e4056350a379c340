/**
 * What every torture checks in the ledger once its run is over (torture.ts, failover-checks.ts):
 * the ledger's movements and the recorded operations agree — nothing executed twice, nothing
 * executed that no Executed operation records, no Executed operation without its movement, no
 * Rejected one with any — and money is conserved: the ledger balances, and every currency's
 * balances sum to zero.
 */
import type { Kysely } from 'kysely';
import { checkLedger } from '../../src/reference-core/storage/ledger.js';
import type { Database } from '../../src/store/schema.js';
import { coreTablesOf } from '../../src/reference-core/storage/core-db.js';
import { embedded } from '../helpers/stores.js';

/** How much of a ledger report an anomaly quotes. */
const reportCharsMax = 2_000;

/** Where the ledger and `operations` (the API's records) disagree; `ledger` is the core's database. */
export async function movementAnomalies(ledger: Kysely<Database>, operations: ReadonlyArray<{ reference: string; status: string }>): Promise<string[]> {
  const anomalies: string[] = [];
  const movements = await embedded(ledger).selectFrom('movements').select(['reference']).where('kind', '<>', 'opening_balance').execute();
  const movementsByReference = new Map<string, number>();
  for (const movement of movements) movementsByReference.set(movement.reference, (movementsByReference.get(movement.reference) ?? 0) + 1);
  const byReference = new Map(operations.map((operation) => [operation.reference, operation]));
  for (const [reference, count] of movementsByReference) {
    if (count > 1) anomalies.push(`reference ${reference} executed ${count} times`);
    const operation = byReference.get(reference);
    if (!operation) anomalies.push(`the ledger holds ${reference}, which no operation records`);
    else if (operation.status !== 'Executed') anomalies.push(`the ledger holds ${reference}, which is ${operation.status}`);
  }
  for (const operation of operations) {
    const count = movementsByReference.get(operation.reference) ?? 0;
    if (operation.status === 'Executed' && count !== 1) anomalies.push(`operation ${operation.reference} is Executed with ${count} movements`);
    if (operation.status === 'Rejected' && count !== 0) anomalies.push(`operation ${operation.reference} is Rejected with ${count} movements`);
  }
  return anomalies;
}

/** Money made or lost: an unbalanced ledger (coregate's own check), or a currency whose balances do not sum to zero. */
export async function conservationAnomalies(ledger: Kysely<Database>): Promise<string[]> {
  const anomalies: string[] = [];
  const report = await checkLedger(coreTablesOf(ledger));
  if (report.unbalancedMovements.length + report.balanceMismatches.length + report.negativeCustomerAccounts.length > 0) {
    anomalies.push(`ledger: ${JSON.stringify(report).slice(0, reportCharsMax)}`);
  }
  const sums = await embedded(ledger)
    .selectFrom('accounts')
    .select('currency')
    .select((eb) => eb.fn.sum<string>('balance_minor').as('total'))
    .groupBy('currency')
    .execute();
  for (const sum of sums) if (BigInt(sum.total) !== 0n) anomalies.push(`balances in ${sum.currency} sum to ${sum.total}, not 0: money was made or lost`);
  return anomalies;
}
