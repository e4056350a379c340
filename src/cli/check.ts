/**
 * `coregate check`: proves what must always hold, and exits non-zero on any finding.
 * - the ledger: every movement balances, every balance equals its postings, no customer account
 *   below zero; every term deposit's account agrees with its status (an Active contract's holds
 *   the principal, a Matured one's holds nothing: its maturity repaid it, docs/business-days.md).
 *   The core proves it through the port's read side (CoreRecords.checkLedger): the embedded core
 *   on the API's database, a remote one over its protocol (`--core-url`), never a copy;
 * - every Executed operation has its postings (by reference) and the audit record of its success;
 * - no operation has stayed unknown (or in flight) past the age limit;
 * - no operation of the last week was refused by the core with a refusal coregate cannot name
 *   (REJECTED_BY_CORE: settled as the core said, but the core answers outside its
 *   protocol, docs/core-protocol.md), read from the operations table, which every instance shares;
 * - the audit chain is valid.
 * And it lists, as a warning that does not fail the check, the clients whose secret is a demo one
 * (src/sandbox/demo-secrets.ts): expected in a sandbox, a hole in production, and a store cannot
 * tell which of the two it serves.
 */
import { extendAuditChain, isChainBusy, verifyAuditChain } from '../audit/chain.js';
import { systemClock } from '../clock/system-clock.js';
import type { Clock } from '../core/clock.js';
import { formatMinor } from '../core/money.js';
import type { CoreRecords, LedgerReport } from '../core/port.js';
import type { Store } from '../store/connect.js';
import { findAuditedSuccesses, listExecutedReferences, listUnsettledOperations } from '../store/operations.js';
import { secretHashKeySetting } from '../auth/secret-hash-key.js';
import { Vault } from '../auth/vault.js';
import { clientsWithDemoSecrets, demoSecretMarker, knownDemoSecrets } from '../sandbox/demo-secrets.js';
import { getSetting } from '../store/settings.js';
import { findUnrecognisedCoreRefusals, unrecognisedRefusalLookbackMs, type UnrecognisedCoreRefusal } from '../store/unrecognised-core-refusals.js';

/** References checked per query. */
const pageSize = 500;
/** Findings listed per kind: the count is always exact, the list is bounded. */
const findingsListedMax = 100;

export interface CheckReport {
  ok: boolean;
  ledger: LedgerReport & { ok: boolean };
  operations: {
    ok: boolean;
    executed: number;
    executedWithoutPostings: string[];
    executedWithoutAudit: string[];
    unsettledPastAgeLimit: Array<{ reference: string; status: string; createdAt: string }>;
    /**
     * Operations the core refused with a refusal coregate cannot name, created in the last
     * `lookbackDays` days: `count` exact, the newest listed.
     */
    unrecognisedCoreRefusals: { count: number; lookbackDays: number; operations: UnrecognisedCoreRefusal[] };
  };
  audit: Awaited<ReturnType<typeof verifyAuditChain>>;
  /**
   * Clients whose stored secret hash verifies a demo secret (`realm/clientId`). A warning: it does
   * not make `ok` false. `checked` is false when the store's secret-hash key could not be opened
   * (sealed, and COREGATE_MASTER_KEY missing or another), `note` says why.
   */
  clientSecrets: { checked: boolean; demoSecrets: string[]; note?: string };
}

export interface CheckOptions {
  /** Opens the sealed secret-hash key for the demo-secret warning: the command's COREGATE_MASTER_KEY (none: an unsealed key only). */
  masterKey: string | undefined;
  /** The time the age limit and the refusals' look-back count back from: the command's clock (default: the system's). */
  clock?: Clock;
}

/** `store`: the API's own (operations, audit); `core`: the core's records, through the port. */
export async function checkEverything(store: Store, core: CoreRecords, unknownAgeLimitSeconds: number, options: CheckOptions): Promise<CheckReport> {
  const ledgerCheck = await core.checkLedger(findingsListedMax);
  const ledgerOk =
    ledgerCheck.unbalancedMovements.length === 0 &&
    ledgerCheck.balanceMismatches.length === 0 &&
    ledgerCheck.negativeCustomerAccounts.length === 0 &&
    ledgerCheck.termDepositMismatches.length === 0;

  const withoutPostings: string[] = [];
  const withoutAudit: string[] = [];
  let executed = 0;
  for (let after = ''; ; ) {
    const page = await listExecutedReferences(store.db, after, pageSize);
    if (page.length === 0) break;
    executed += page.length;
    const posted = new Set(await core.postedReferences(page));
    const audited = await findAuditedSuccesses(store.db, page);
    for (const reference of page) {
      if (!posted.has(reference)) withoutPostings.push(reference);
      if (!audited.has(reference)) withoutAudit.push(reference);
    }
    after = page[page.length - 1] ?? after;
  }
  const nowMs = (options.clock ?? systemClock).now();
  const unsettled = await listUnsettledOperations(store.db, nowMs - unknownAgeLimitSeconds * 1000, findingsListedMax);
  const unrecognised = await findUnrecognisedCoreRefusals(store.db, nowMs - unrecognisedRefusalLookbackMs, findingsListedMax);

  try {
    await extendAuditChain(store);
  } catch (error) {
    // A running server holding the chain's lock (SQLite's write lock, or PostgreSQL's past its time-out) is chaining right now itself.
    if (!isChainBusy(error)) throw error;
  }
  const audit = await verifyAuditChain(store);
  const clientSecrets = await demoSecretClients(store, options.masterKey);
  const operationsOk = withoutPostings.length === 0 && withoutAudit.length === 0 && unsettled.length === 0 && unrecognised.count === 0;
  return {
    ok: ledgerOk && operationsOk && audit.ok,
    ledger: { ok: ledgerOk, ...ledgerCheck },
    operations: {
      ok: operationsOk,
      executed,
      executedWithoutPostings: withoutPostings.slice(0, findingsListedMax),
      executedWithoutAudit: withoutAudit.slice(0, findingsListedMax),
      unsettledPastAgeLimit: unsettled.map((record) => ({ reference: record.reference, status: record.status, createdAt: record.createdAt })),
      unrecognisedCoreRefusals: { count: unrecognised.count, lookbackDays: unrecognisedRefusalLookbackMs / 86_400_000, operations: unrecognised.operations },
    },
    audit,
    clientSecrets,
  };
}

/** The demo-secret warning's part of the report: read-only (the hash key is never created here). */
async function demoSecretClients(store: Store, masterKey: string | undefined): Promise<CheckReport['clientSecrets']> {
  const sealed = await getSetting(store.db, secretHashKeySetting);
  // No key: no client secret was ever hashed in this store.
  if (sealed === undefined) return { checked: true, demoSecrets: [] };
  let hashKey: Buffer;
  try {
    hashKey = Buffer.from(new Vault(masterKey).open(sealed), 'base64');
  } catch (error) {
    return { checked: false, demoSecrets: [], note: `the store's secret-hash key could not be opened (${(error as Error).message})` };
  }
  const clients = await clientsWithDemoSecrets(store.db, hashKey, knownDemoSecrets());
  return { checked: true, demoSecrets: clients.map((client) => `${client.realm}/${client.clientId}`) };
}

/**
 * The report in words, for the person at the terminal: each part OK in one line, or each finding
 * named (which movement, account, contract or operation, and what is wrong with it) followed by
 * what to do. `--json` prints the report itself for scripts.
 */
export function describeReport(report: CheckReport): string {
  const sections = [describeLedger(report.ledger), describeOperations(report.operations), describeAudit(report.audit), describeClientSecrets(report.clientSecrets)];
  if (!report.ok) sections.push('Run `coregate check --json` for the full report as JSON.');
  return sections.join('\n');
}

function describeLedger(ledger: CheckReport['ledger']): string {
  if (ledger.ok) {
    return `Ledger OK: ${ledger.movements} movements balance, ${ledger.accounts} account balances equal their postings.\nTerm deposits OK: every contract's account agrees with its status (Active: the principal; Matured: zero).`;
  }
  const findings = [
    ...ledger.unbalancedMovements.map((m) => `movement ${m.movementId} does not balance: its ${m.currency} postings sum to ${formatMinor(BigInt(m.totalMinor), m.currency)} ${m.currency} instead of zero`),
    ...ledger.balanceMismatches.map((a) => `account ${a.accountNumber}: its stored balance (${a.storedMinor} in minor units) is not the sum of its postings (${a.postedMinor})`),
    ...ledger.negativeCustomerAccounts.map((a) => `customer account ${a.accountNumber} is below zero (${a.balanceMinor} in minor units)`),
    ...ledger.termDepositMismatches.map(
      (d) => `term deposit ${d.contractNumber} is ${d.status}, but its account ${d.accountBalanceMinor === null ? 'does not exist' : `holds ${d.accountBalanceMinor} in minor units`} (${d.status === 'Matured' ? 'a Matured contract\'s holds zero' : `an Active contract's holds its principal, ${d.principalMinor} in minor units`})`,
    ),
  ];
  return section('Ledger BROKEN', findings, [
    [undefined, 'stop writes to the core\'s database and keep it as it is: these records were changed outside coregate and the core (every movement they write balances), by hand, a script or a partial restore. Compare with the audit trail (`coregate audit export`) and restore the core\'s database from a backup; do not correct balances by hand.'],
  ]);
}

function describeOperations(operations: CheckReport['operations']): string {
  if (operations.ok) return `Operations OK: ${operations.executed} executed operations have their postings and audit records; none unknown past the age limit.`;
  const unrecognised = operations.unrecognisedCoreRefusals;
  const { lookbackDays } = unrecognised;
  const findings = [
    ...operations.executedWithoutPostings.map((reference) => `operation ${reference} is Executed, but the core holds no postings for it`),
    ...operations.executedWithoutAudit.map((reference) => `operation ${reference} is Executed, but the audit trail has no record of its success`),
    ...operations.unsettledPastAgeLimit.map((o) => `operation ${o.reference} has been ${o.status} since ${o.createdAt}, past the age limit (--unknown-age-limit)`),
    ...unrecognised.operations.map((o) => `operation ${o.reference} (${o.operation}, ${o.createdAt}) was refused by the core with a refusal coregate cannot name, settled Rejected ${o.code}: ${o.message}`),
  ];
  if (unrecognised.count > unrecognised.operations.length) findings.push(`and ${unrecognised.count - unrecognised.operations.length} more operations refused so in the last ${lookbackDays} days`);
  const remedies: Remedy[] = [];
  if (operations.executedWithoutPostings.length > 0) {
    remedies.push(['executed without postings', 'its client was told it succeeded, but the core has no movement for it. Do not repeat the operation; compare with the core\'s records of the account (`coregate accounts show ACCOUNT`) and with the core\'s operator.']);
  }
  if (operations.executedWithoutAudit.length > 0) {
    remedies.push(['executed without audit record', 'audit records were removed or never written. Run `coregate audit verify` and compare with an earlier `coregate audit export`.']);
  }
  if (operations.unsettledPastAgeLimit.length > 0) {
    remedies.push(['past the age limit', 'the reconciler settles it once the core answers. Check that a `coregate serve` runs on this database and reaches the core (GET /health/ready); `coregate operations get REFERENCE` shows where it stands.']);
  }
  if (unrecognised.count > 0) {
    remedies.push([
      'refused with a refusal coregate cannot name',
      `nothing to repair in the ledger: the core said Rejected, and coregate settled it so (its client got 422 REJECTED_BY_CORE quoting the core's refusal, and its operation.rejected webhook). But the core answers outside its protocol: it must name its refusals with the error catalogue's names and codes of the operation's family (docs/core-protocol.md lists them; docs/errors.md). The log line "core protocol violation" names the field and the value the core sent. Mend the core (or, for a rule the catalogue lacks, have an entry added to coregate's catalogue); the finding ends once the last such refusal is ${lookbackDays} days old.`,
    ]);
  }
  return section(`Operations BROKEN (of ${operations.executed} executed)`, findings, remedies);
}

function describeAudit(audit: CheckReport['audit']): string {
  if (audit.ok) return `Audit chain OK: ${audit.chained} records verified.`;
  const where = audit.problem === undefined ? 'the audit chain' : `audit record ${audit.problem.id} (chain position ${audit.problem.chainSeq})`;
  return section('Audit chain BROKEN', [`${where}: ${audit.problem?.issue ?? 'the chain does not verify'}`], [
    [undefined, 'a record was altered, removed or reordered after it was chained. Keep the database as it is for the investigation and compare with an earlier `coregate audit export`; `coregate audit verify` repeats this check alone.'],
  ]);
}

function describeClientSecrets(clientSecrets: CheckReport['clientSecrets']): string {
  if (!clientSecrets.checked) return `Client secrets not checked for demo secrets: ${clientSecrets.note ?? 'the secret-hash key could not be opened'}; set COREGATE_MASTER_KEY to check them.`;
  const count = clientSecrets.demoSecrets.length;
  if (count === 0) return 'Client secrets OK: no client has a demo secret.';
  return [
    `Client secrets WARNING: ${count} client${count === 1 ? ' has' : 's have'} a demo secret (sample data containing ${demoSecretMarker}), which does not fail the check.`,
    ...clientSecrets.demoSecrets.map((client) => `  - ${client}`),
    '  What to do: nothing in a sandbox (npm start, serve --sandbox), which is what they are for. In production anyone who has read the demo data can obtain their tokens: rotate each (`coregate clients rotate-secret --realm REALM --client-id CLIENT`) or disable it.',
  ].join('\n');
}

/** What to do, and the findings it is for when a part has several kinds. */
type Remedy = [findings: string | undefined, action: string];

/** A broken part: its findings one a line (each kind lists at most `findingsListedMax`, as --json does), then what to do. */
function section(title: string, findings: string[], remedies: Remedy[]): string {
  const count = `${findings.length} finding${findings.length === 1 ? '' : 's'}`;
  return [`${title}: ${count}.`, ...findings.map((finding) => `  - ${finding}`), ...remedies.map(([about, action]) => `  What to do${about === undefined ? '' : ` (${about})`}: ${action}`)].join('\n');
}
