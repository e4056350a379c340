/**
 * `coregate check`: proves what must always hold, and exits non-zero on any finding.
 * - the ledger: every movement balances, every balance equals its postings, no customer account
 *   below zero; every term deposit's account agrees with its status (an Active contract's holds
 *   the principal, a Matured one's holds nothing: its maturity repaid it, docs/business-days.md).
 *   The core proves it through the port's read side (CoreRecords.checkLedger): the embedded core
 *   on the API's database, a remote one over its protocol (`--core-url`), never a copy;
 * - every Executed operation has its postings (by reference) and the audit record of its success;
 * - no operation has stayed unknown (or in flight) past the age limit;
 * - the audit chain is valid.
 */
import { extendAuditChain, isChainBusy, verifyAuditChain } from '../audit/chain.js';
import type { CoreRecords, LedgerReport } from '../core/port.js';
import type { Store } from '../store/connect.js';
import { findAuditedSuccesses, listExecutedReferences, listUnsettledOperations } from '../store/operations.js';

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
  };
  audit: Awaited<ReturnType<typeof verifyAuditChain>>;
}

/** `store`: the API's own (operations, audit); `core`: the core's records, through the port. */
export async function checkEverything(store: Store, core: CoreRecords, unknownAgeLimitSeconds: number): Promise<CheckReport> {
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
  const unsettled = await listUnsettledOperations(store.db, Date.now() - unknownAgeLimitSeconds * 1000, findingsListedMax);

  try {
    await extendAuditChain(store);
  } catch (error) {
    // A running server holding the chain's lock (SQLite's write lock, or PostgreSQL's past its time-out) is chaining right now itself.
    if (!isChainBusy(error)) throw error;
  }
  const audit = await verifyAuditChain(store);
  const operationsOk = withoutPostings.length === 0 && withoutAudit.length === 0 && unsettled.length === 0;
  return {
    ok: ledgerOk && operationsOk && audit.ok,
    ledger: { ok: ledgerOk, ...ledgerCheck },
    operations: {
      ok: operationsOk,
      executed,
      executedWithoutPostings: withoutPostings.slice(0, findingsListedMax),
      executedWithoutAudit: withoutAudit.slice(0, findingsListedMax),
      unsettledPastAgeLimit: unsettled.map((record) => ({ reference: record.reference, status: record.status, createdAt: record.createdAt })),
    },
    audit,
  };
}

export function describeReport(report: CheckReport): string {
  const lines = [
    report.ledger.ok
      ? `Ledger OK: ${report.ledger.movements} movements balance, ${report.ledger.accounts} account balances equal their postings.\nTerm deposits OK: every contract's account agrees with its status (Active: the principal; Matured: zero).`
      : `Ledger BROKEN: ${JSON.stringify({ unbalancedMovements: report.ledger.unbalancedMovements, balanceMismatches: report.ledger.balanceMismatches, negativeCustomerAccounts: report.ledger.negativeCustomerAccounts, termDepositMismatches: report.ledger.termDepositMismatches }, null, 2)}`,
    report.operations.ok
      ? `Operations OK: ${report.operations.executed} executed operations have their postings and audit records; none unknown past the age limit.`
      : `Operations BROKEN: ${JSON.stringify(report.operations, null, 2)}`,
    report.audit.ok ? `Audit chain OK: ${report.audit.chained} records verified.` : `Audit chain BROKEN: ${JSON.stringify(report.audit.problem)}`,
  ];
  return lines.join('\n');
}
