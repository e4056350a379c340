/**
 * What the console reads (issue 11), straight from the store: the bank's records (customers,
 * accounts, postings, term deposits, loan facilities: the embedded core's tables) and the API's
 * own (operations, audit trail, clients). Read-only; amounts leave as exact decimal strings with
 * their currency, formatted from minor units. Never a secret or a secret's hash.
 */
import { formatMinor } from '../core/money.js';
import { interestAtMaturityMinor, type DayCount } from '../core/term-deposits/interest.js';
import { toBigInt } from './bigint.js';
import type { Queryable } from './realms.js';

/** An exact amount: a decimal string in the currency's major unit. */
export interface Money {
  amount: string;
  currency: string;
}

export function money(minor: bigint, currency: string): Money {
  return { amount: formatMinor(minor, currency), currency };
}

/** Rows answered per list at most (each list's own `limit` is bounded by it). */
export const listRowsMax = 500;
/** Postings a balance chart shows at most: the newest ones. */
export const balancePointsMax = 500;
/** How deep a postings page may start: the running balance sums every newer posting. */
export const postingsOffsetMax = 10_000;

export async function listCustomers(db: Queryable) {
  const customers = await db.selectFrom('customers').selectAll().orderBy('customer_reference').limit(listRowsMax).execute();
  const counts = await db
    .selectFrom('accounts')
    .select('customer_reference')
    .select((eb) => eb.fn.countAll<string | number>().as('count'))
    .where('kind', '=', 'customer')
    .groupBy('customer_reference')
    .execute();
  const countOf = new Map(counts.map((row) => [row.customer_reference, Number(row.count)]));
  return customers.map((row) => ({ customerReference: row.customer_reference, name: row.name, status: row.status, accounts: countOf.get(row.customer_reference) ?? 0 }));
}

export interface AccountView {
  accountNumber: string;
  customerReference: string | null;
  kind: string;
  status: string;
  currency: string;
  balance: Money;
  createdAt: string;
}

function accountView(row: { account_number: string; customer_reference: string | null; kind: string; status: string; currency: string; balance_minor: bigint | string | number; created_at: string }): AccountView {
  return {
    accountNumber: row.account_number,
    customerReference: row.customer_reference,
    kind: row.kind,
    status: row.status,
    currency: row.currency,
    balance: money(toBigInt(row.balance_minor), row.currency),
    createdAt: row.created_at,
  };
}

/** Customer accounts (and, with `kind`, term deposit or loan accounts) with their live balances. */
export async function listAccounts(db: Queryable, filter: { customerReference?: string | undefined; kind?: string | undefined }): Promise<AccountView[]> {
  let query = db.selectFrom('accounts').selectAll().where('kind', '=', filter.kind ?? 'customer');
  if (filter.customerReference !== undefined) query = query.where('customer_reference', '=', filter.customerReference);
  const rows = await query.orderBy('account_number').limit(listRowsMax).execute();
  return rows.map(accountView);
}

export async function findAccountView(db: Queryable, accountNumber: string): Promise<AccountView | undefined> {
  const row = await db.selectFrom('accounts').selectAll().where('account_number', '=', accountNumber).executeTakeFirst();
  return row && accountView(row);
}

interface PostingRow {
  movement_id: string;
  line: number;
  amount_minor: bigint | string | number;
  currency: string;
  reference: string;
  kind: string;
  description: string | null;
  business_date: string;
  created_at: string;
}

/** An account's postings, newest first (created, then movement id, then line: one total order). */
function postingsNewestFirst(db: Queryable, accountNumber: string) {
  return db
    .selectFrom('postings')
    .innerJoin('movements', 'movements.id', 'postings.movement_id')
    .select(['postings.movement_id', 'postings.line', 'postings.amount_minor', 'postings.currency', 'movements.reference', 'movements.kind', 'movements.description', 'movements.business_date', 'movements.created_at'])
    .where('postings.account_number', '=', accountNumber)
    .orderBy('movements.created_at', 'desc')
    .orderBy('postings.movement_id', 'desc')
    .orderBy('postings.line', 'desc');
}

/**
 * A page of an account's postings, newest first, each with the balance just after it: the live
 * balance minus every newer posting (exact, in minor units).
 */
export async function listPostings(db: Queryable, account: AccountView, limit: number, offset: number) {
  const currentMinor = toBigInt((await db.selectFrom('accounts').select('balance_minor').where('account_number', '=', account.accountNumber).executeTakeFirstOrThrow()).balance_minor);
  const newer = offset === 0 ? [] : await postingsNewestFirst(db, account.accountNumber).limit(offset).execute();
  let balanceMinor = currentMinor - newer.reduce((sum, row) => sum + toBigInt(row.amount_minor), 0n);
  const rows: PostingRow[] = await postingsNewestFirst(db, account.accountNumber).limit(limit + 1).offset(offset).execute();
  const page = rows.slice(0, limit).map((row) => {
    const amountMinor = toBigInt(row.amount_minor);
    const view = {
      movementId: row.movement_id,
      line: Number(row.line),
      reference: row.reference,
      kind: row.kind,
      description: row.description,
      businessDate: row.business_date,
      createdAt: row.created_at,
      amount: money(amountMinor, row.currency),
      balanceAfter: money(balanceMinor, row.currency),
    };
    balanceMinor -= amountMinor;
    return view;
  });
  return { postings: page, limit, offset, more: rows.length > limit };
}

/** The account's balance after each of its newest postings, oldest first: the points of a chart. */
export async function balanceHistory(db: Queryable, account: AccountView) {
  const currentMinor = toBigInt((await db.selectFrom('accounts').select('balance_minor').where('account_number', '=', account.accountNumber).executeTakeFirstOrThrow()).balance_minor);
  const rows = await postingsNewestFirst(db, account.accountNumber).limit(balancePointsMax).execute();
  let balanceMinor = currentMinor;
  const points = rows.map((row) => {
    const point = { at: row.created_at, businessDate: row.business_date, reference: row.reference, balance: money(balanceMinor, account.currency) };
    balanceMinor -= toBigInt(row.amount_minor);
    return point;
  });
  return { accountNumber: account.accountNumber, currency: account.currency, points: points.reverse(), truncated: rows.length === balancePointsMax };
}

/** Term deposits, newest first, with the interest expected at maturity as the retrieve computes it. */
export async function listTermDeposits(db: Queryable, filter: { status?: string | undefined; contractNumber?: string | undefined; limit: number }) {
  let query = db.selectFrom('term_deposits').selectAll();
  if (filter.status !== undefined) query = query.where('status', '=', filter.status);
  if (filter.contractNumber !== undefined) query = query.where('contract_number', '=', filter.contractNumber);
  const rows = await query.orderBy('created_at', 'desc').orderBy('contract_number', 'desc').limit(filter.limit).execute();
  return rows.map((row) => {
    const principalMinor = toBigInt(row.principal_minor);
    return {
      termDepositAccount: row.contract_number,
      customerReference: row.customer_reference,
      product: { productCode: row.product_code, componentCode: row.component_code },
      principal: money(principalMinor, row.currency),
      ratePercent: row.rate_percent,
      dayCount: row.day_count,
      valueDate: row.value_date,
      maturityDate: row.maturity_date,
      numberOfDays: Number(row.number_of_days),
      expectedInterest: money(interestAtMaturityMinor(principalMinor, row.rate_percent, Number(row.number_of_days), row.day_count as DayCount), row.currency),
      sourceAccount: row.source_account,
      interestSettlementAccount: row.interest_account,
      operationReference: row.operation_reference,
      status: row.status,
      createdAt: row.created_at,
    };
  });
}

/**
 * An installment's status: the core's own when its table keeps one (end of day marks `Overdue`,
 * issue 11), otherwise Paid or Due from what was paid.
 */
function installmentStatus(row: Record<string, unknown>, amountMinor: bigint, paidMinor: bigint): string {
  if (typeof row.status === 'string' && row.status !== '') return row.status;
  return paidMinor >= amountMinor ? 'Paid' : 'Due';
}

/** Loan facilities with their installments, outstanding and how much of the limit is used. */
export async function listLoanFacilities(db: Queryable) {
  const facilities = await db.selectFrom('loan_facilities').selectAll().orderBy('loan_id').limit(listRowsMax).execute();
  if (facilities.length === 0) return [];
  const installments = await db
    .selectFrom('loan_installments')
    .selectAll()
    .where('loan_id', 'in', facilities.map((facility) => facility.loan_id))
    .orderBy('loan_id')
    .orderBy('sequence')
    .execute();
  return facilities.map((facility) => {
    const currency = facility.currency;
    const own = installments.filter((row) => row.loan_id === facility.loan_id);
    let outstandingMinor = 0n;
    const views = own.map((row) => {
      const amountMinor = toBigInt(row.amount_minor);
      const paidMinor = toBigInt(row.paid_minor);
      outstandingMinor += amountMinor - paidMinor;
      return {
        sequence: Number(row.sequence),
        dueDate: row.due_date,
        amount: money(amountMinor, currency),
        paid: money(paidMinor, currency),
        outstanding: money(amountMinor - paidMinor, currency),
        status: installmentStatus(row as unknown as Record<string, unknown>, amountMinor, paidMinor),
      };
    });
    const limitMinor = toBigInt(facility.approved_limit_minor);
    const usedMinor = toBigInt(facility.executed_total_minor);
    return {
      merchandisingLoanId: facility.loan_id,
      customerReference: facility.customer_reference,
      loanType: facility.loan_type,
      parameterType: facility.parameter_type,
      status: facility.status,
      finalMaturityDate: facility.final_maturity_date,
      approvedLimit: money(limitMinor, currency),
      limitUsed: money(usedMinor, currency),
      /** Percent of the approved limit executed, two decimals, rounded down (exact integer arithmetic). */
      limitUsedPercent: limitMinor === 0n ? '0.00' : formatMinor((usedMinor * 10_000n) / limitMinor, 'USD'),
      outstanding: money(outstandingMinor, currency),
      installments: views,
    };
  });
}

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
  };
}

const operationColumns = ['reference', 'client_key', 'correlation_id', 'correlation_supplied', 'operation', 'path', 'status', 'http_status', 'result', 'error', 'actor', 'created_at', 'updated_at', 'attempts'] as const;

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
export async function listClientViews(db: Queryable) {
  const rows = await db
    .selectFrom('clients')
    .select(['realm', 'client_id', 'enabled', 'grants', 'scopes', 'technical_user', 'default_workstation', 'created_at', 'updated_at'])
    .orderBy('realm')
    .orderBy('client_id')
    .limit(listRowsMax)
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
export async function operationsPerMinute(db: Queryable, nowEpochMs = Date.now()) {
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
