/**
 * The reference core's read side for operators (CoreRecords in src/core/port.ts) over its own
 * tables: customers, accounts with balances and postings, term deposits, loan facilities with
 * installments, the ledger's proof. Domain values only (bigint minor units): formatting for a
 * screen is the operator layer's. Read-only, outside any transaction of an operation.
 */
import type { Kysely } from 'kysely';
import type {
  AccountKind,
  AccountRecord,
  CoreRecords,
  CustomerRecord,
  InstallmentRecord,
  LedgerReport,
  LoanFacilityRecord,
  Page,
  PageRequest,
  PostingRecord,
  TermDepositRecord,
  UserRecord,
  WorkstationRecord,
} from '../../core/port.js';
import { interestAtMaturityMinor } from '../../core/term-deposits/interest.js';
import { toBigInt } from '../../store/bigint.js';
import { findTermDepositAccountMismatches, toTermDeposit } from './banking.js';
import { checkLedger, findPostedReferences } from './ledger.js';
import type { CoreTables } from './core-schema.js';

/** Rows a page answers at most, whatever `limit` asks: a list is for a screen, not an export. */
export const pageRowsMax = 500;

/** One row more than the page, to tell whether more follow. */
function paged<T>(rows: T[], page: PageRequest): Page<T> {
  return { items: rows.slice(0, page.limit), more: rows.length > page.limit };
}

function bounded(page: PageRequest): PageRequest {
  return { limit: Math.max(1, Math.min(page.limit, pageRowsMax)), offset: Math.max(0, page.offset) };
}

type AccountRow = { account_number: string; customer_reference: string | null; kind: string; status: string; currency: string; balance_minor: bigint | string | number; created_at: string };

function toAccountRecord(row: AccountRow): AccountRecord {
  return {
    accountNumber: row.account_number,
    customerReference: row.customer_reference,
    kind: row.kind,
    status: row.status,
    currency: row.currency,
    balanceMinor: toBigInt(row.balance_minor),
    createdAt: row.created_at,
  };
}

/**
 * An installment's status as the port names it (Paid, Due or Overdue): the core's own when end of
 * day marked one (Overdue), otherwise Paid or Due from what was paid. The table's word for an
 * installment neither paid nor overdue is Pending (end of day's guarded update matches on it), and
 * it reached the console as such: it is Due to every reader.
 */
function installmentStatus(stored: string | null | undefined, amountMinor: bigint, paidMinor: bigint): string {
  if (typeof stored === 'string' && stored !== '' && stored !== 'Pending') return stored;
  return paidMinor >= amountMinor ? 'Paid' : 'Due';
}

export function coreRecords(db: Kysely<CoreTables>): CoreRecords {
  /** An account's postings, newest first (created, then movement id, then line: one total order). */
  const postingsNewestFirst = (accountNumber: string) =>
    db
      .selectFrom('postings')
      .innerJoin('movements', 'movements.id', 'postings.movement_id')
      .select(['postings.movement_id', 'postings.line', 'postings.amount_minor', 'postings.currency', 'movements.reference', 'movements.kind', 'movements.description', 'movements.business_date', 'movements.created_at'])
      .where('postings.account_number', '=', accountNumber)
      .orderBy('movements.created_at', 'desc')
      .orderBy('postings.movement_id', 'desc')
      .orderBy('postings.line', 'desc');

  const findAccount = async (accountNumber: string): Promise<AccountRecord | undefined> => {
    const row = await db.selectFrom('accounts').selectAll().where('account_number', '=', accountNumber).executeTakeFirst();
    return row && toAccountRecord(row);
  };

  return {
    async listUsers(request): Promise<Page<UserRecord>> {
      const page = bounded(request);
      const rows = await db.selectFrom('directory_users').select(['login', 'status']).orderBy('login').limit(page.limit + 1).offset(page.offset).execute();
      return paged(rows, page);
    },

    async listWorkstations(request): Promise<Page<WorkstationRecord>> {
      const page = bounded(request);
      const rows = await db.selectFrom('workstations').select(['id', 'status']).orderBy('id').limit(page.limit + 1).offset(page.offset).execute();
      return paged(rows, page);
    },

    async listCustomers(request) {
      const page = bounded(request);
      const rows = await db.selectFrom('customers').selectAll().orderBy('customer_reference').limit(page.limit + 1).offset(page.offset).execute();
      const references = rows.map((row) => row.customer_reference);
      const counts =
        references.length === 0
          ? []
          : await db
              .selectFrom('accounts')
              .select('customer_reference')
              .select((eb) => eb.fn.countAll<string | number>().as('count'))
              .where('kind', '=', 'customer')
              .where('customer_reference', 'in', references)
              .groupBy('customer_reference')
              .execute();
      const countOf = new Map(counts.map((row) => [row.customer_reference, Number(row.count)]));
      const customers: CustomerRecord[] = rows.map((row) => ({ customerReference: row.customer_reference, name: row.name, status: row.status, accounts: countOf.get(row.customer_reference) ?? 0 }));
      return paged(customers, page);
    },

    async listAccounts(filter: { customerReference?: string | undefined; kind?: AccountKind | undefined }, request) {
      const page = bounded(request);
      let query = db.selectFrom('accounts').selectAll().where('kind', '=', filter.kind ?? 'customer');
      if (filter.customerReference !== undefined) query = query.where('customer_reference', '=', filter.customerReference);
      const rows = await query.orderBy('account_number').limit(page.limit + 1).offset(page.offset).execute();
      return paged(rows.map(toAccountRecord), page);
    },

    findAccount,

    /** The balance after each posting: the live balance minus every newer posting (exact, in minor units). */
    async listPostings(accountNumber, request) {
      const page = bounded(request);
      const account = await findAccount(accountNumber);
      if (!account) return undefined;
      const newer = page.offset === 0 ? [] : await postingsNewestFirst(accountNumber).limit(page.offset).execute();
      let balanceMinor = account.balanceMinor - newer.reduce((sum, row) => sum + toBigInt(row.amount_minor), 0n);
      const rows = await postingsNewestFirst(accountNumber).limit(page.limit + 1).offset(page.offset).execute();
      const postings: PostingRecord[] = rows.map((row) => {
        const amountMinor = toBigInt(row.amount_minor);
        const posting = {
          movementId: row.movement_id,
          line: Number(row.line),
          reference: row.reference,
          kind: row.kind,
          description: row.description,
          businessDate: row.business_date,
          createdAt: row.created_at,
          amountMinor,
          balanceAfterMinor: balanceMinor,
          currency: row.currency,
        };
        balanceMinor -= amountMinor;
        return posting;
      });
      return paged(postings, page);
    },

    async listTermDeposits(filter, request) {
      const page = bounded(request);
      let query = db.selectFrom('term_deposits').selectAll();
      if (filter.status !== undefined) query = query.where('status', '=', filter.status);
      if (filter.contractNumber !== undefined) query = query.where('contract_number', '=', filter.contractNumber);
      const rows = await query.orderBy('created_at', 'desc').orderBy('contract_number', 'desc').limit(page.limit + 1).offset(page.offset).execute();
      const deposits: TermDepositRecord[] = rows.map((row) => {
        const contract = toTermDeposit(row);
        return { ...contract, expectedInterestMinor: interestAtMaturityMinor(contract.principalMinor, contract.ratePercent, contract.numberOfDays, contract.dayCount) };
      });
      return paged(deposits, page);
    },

    async listLoanFacilities(filter, request) {
      const page = bounded(request);
      let query = db.selectFrom('loan_facilities').selectAll();
      if (filter.loanId !== undefined) query = query.where('loan_id', '=', filter.loanId);
      const facilities = await query.orderBy('loan_id').limit(page.limit + 1).offset(page.offset).execute();
      if (facilities.length === 0) return { items: [], more: false };
      const installments = await db
        .selectFrom('loan_installments')
        .selectAll()
        .where('loan_id', 'in', facilities.map((facility) => facility.loan_id))
        .orderBy('loan_id')
        .orderBy('sequence')
        .execute();
      const records: LoanFacilityRecord[] = facilities.map((facility) => ({
        loanId: facility.loan_id,
        customerReference: facility.customer_reference,
        loanType: facility.loan_type,
        parameterType: facility.parameter_type,
        status: facility.status,
        finalMaturityDate: facility.final_maturity_date,
        currency: facility.currency,
        approvedLimitMinor: toBigInt(facility.approved_limit_minor),
        executedTotalMinor: toBigInt(facility.executed_total_minor),
        installments: installments
          .filter((row) => row.loan_id === facility.loan_id)
          .map((row): InstallmentRecord => {
            const amountMinor = toBigInt(row.amount_minor);
            const paidMinor = toBigInt(row.paid_minor);
            return { sequence: Number(row.sequence), dueDate: row.due_date, amountMinor, paidMinor, status: installmentStatus(row.status, amountMinor, paidMinor) };
          }),
      }));
      return paged(records, page);
    },

    async checkLedger(listedMax): Promise<LedgerReport> {
      const ledger = await checkLedger(db);
      const deposits = await findTermDepositAccountMismatches(db, listedMax);
      return {
        movements: ledger.movements,
        accounts: ledger.accounts,
        unbalancedMovements: ledger.unbalancedMovements.slice(0, listedMax),
        balanceMismatches: ledger.balanceMismatches.slice(0, listedMax),
        negativeCustomerAccounts: ledger.negativeCustomerAccounts.slice(0, listedMax),
        termDepositMismatches: deposits.listed,
      };
    },

    async postedReferences(references) {
      return [...(await findPostedReferences(db, references))];
    },
  };
}
