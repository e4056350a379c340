/** Repositories of merchandising loan facilities, installments and executions. */
import { sql, type Insertable, type Selectable } from 'kysely';
import type { InstallmentStatus } from '../../core/end-of-day/overdue.js';
import { toBigInt } from '../../store/bigint.js';
import { type CoreDb, preparedInsert, preparedQuery } from './core-db.js';
import type { LoanExecutionTable, LoanFacilityTable, LoanInstallmentTable } from './core-schema.js';
import type { Installment, LoanExecution, LoanFacility } from '../../core/domain.js';

export type { LoanExecution as LoanExecutionRecord, LoanFacility as LoanFacilityRecord } from '../../core/domain.js';

/** An installment as stored, with its status (migration 0006): Pending, Overdue or Paid. */
export interface InstallmentRecord extends Installment {
  status: InstallmentStatus;
}

const facilityById = preparedQuery((db, loanId: string) => db.selectFrom('loan_facilities').selectAll().where('loan_id', '=', loanId));

export async function findFacility(db: CoreDb, loanId: string): Promise<LoanFacility | undefined> {
  const row = await facilityById.first(db, loanId);
  return row && toFacility(row);
}

export async function insertFacilityIfMissing(db: CoreDb, facility: LoanFacility): Promise<boolean> {
  const result = await db
    .insertInto('loan_facilities')
    .values({
      loan_id: facility.loanId,
      customer_reference: facility.customerReference,
      loan_type: facility.loanType,
      parameter_type: facility.parameterType,
      currency: facility.currency,
      approved_limit_minor: facility.approvedLimitMinor,
      executed_total_minor: facility.executedTotalMinor,
      status: facility.status,
      final_maturity_date: facility.finalMaturityDate,
      fixed_fee_minor: facility.fixedFeeMinor,
      commission_rate: facility.commissionRate,
      minimum_commission_minor: facility.minimumCommissionMinor,
      tax_rate: facility.taxRate,
    })
    .onConflict((c) => c.column('loan_id').doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
}

export async function insertInstallment(db: CoreDb, installment: Installment): Promise<void> {
  await db
    .insertInto('loan_installments')
    .values({
      loan_id: installment.loanId,
      sequence: installment.sequence,
      due_date: installment.dueDate,
      amount_minor: installment.amountMinor,
      paid_minor: installment.paidMinor,
      status: installment.paidMinor >= installment.amountMinor ? 'Paid' : 'Pending',
    })
    .execute();
}

/**
 * Takes the installment's row lock for the rest of the transaction (a no-op update works on both
 * dialects), so that what is read next is what concurrent executions committed: the outstanding
 * amount and the resulting status are then exact, not merely guarded.
 */
/** Locks the installment's row for the rest of the transaction and reads it, in one statement. */
const installmentLock = preparedQuery((db, loanId: string, sequence: number) =>
  db
    .updateTable('loan_installments')
    .set((eb) => ({ paid_minor: eb.ref('paid_minor') }))
    .where('loan_id', '=', loanId)
    .where('sequence', '=', sequence)
    .returningAll(),
);

export async function lockInstallment(db: CoreDb, loanId: string, sequence: number): Promise<InstallmentRecord | undefined> {
  const row = await installmentLock.first(db, loanId, sequence);
  return row && toInstallment(row);
}

export async function findInstallment(db: CoreDb, loanId: string, sequence: number): Promise<InstallmentRecord | undefined> {
  const row = await db.selectFrom('loan_installments').selectAll().where('loan_id', '=', loanId).where('sequence', '=', sequence).executeTakeFirst();
  return row && toInstallment(row);
}

function toInstallment(row: Selectable<LoanInstallmentTable>): InstallmentRecord {
  return {
    loanId: row.loan_id,
    sequence: Number(row.sequence),
    dueDate: row.due_date,
    amountMinor: toBigInt(row.amount_minor),
    paidMinor: toBigInt(row.paid_minor),
    status: row.status as InstallmentStatus,
  };
}

/** A facility's installments in sequence order, with their status. */
export async function listInstallments(db: CoreDb, loanId: string): Promise<InstallmentRecord[]> {
  const rows = await db.selectFrom('loan_installments').selectAll().where('loan_id', '=', loanId).orderBy('sequence').execute();
  return rows.map(toInstallment);
}

/** Pending installments due on or before `day` and not fully paid (index loan_installments_due), with their facility's currency. */
export async function listInstallmentsPastDue(db: CoreDb, day: string): Promise<Array<InstallmentRecord & { currency: string }>> {
  const rows = await db
    .selectFrom('loan_installments')
    .innerJoin('loan_facilities', 'loan_facilities.loan_id', 'loan_installments.loan_id')
    .selectAll('loan_installments')
    .select('loan_facilities.currency')
    .where('loan_installments.status', '=', 'Pending')
    .where('loan_installments.due_date', '<=', day)
    .whereRef('loan_installments.paid_minor', '<', 'loan_installments.amount_minor')
    .orderBy('loan_installments.due_date')
    .orderBy('loan_installments.loan_id')
    .orderBy('loan_installments.sequence')
    .execute();
  return rows.map((row) => ({ ...toInstallment(row), currency: row.currency }));
}

/** Pending → Overdue, guarded: false when it was paid in full or changed meanwhile. */
export async function markInstallmentOverdue(db: CoreDb, loanId: string, sequence: number): Promise<boolean> {
  const result = await db
    .updateTable('loan_installments')
    .set({ status: 'Overdue' })
    .where('loan_id', '=', loanId)
    .where('sequence', '=', sequence)
    .where('status', '=', 'Pending')
    .whereRef('paid_minor', '<', 'amount_minor')
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * Adds a payment to an installment only if it stays within the installment's amount; the check is
 * part of the update, so concurrent payments can never overpay. Answers whether it applied.
 */
const installmentPayment = preparedQuery((db, paidMinor: bigint, statusPaidMinor: bigint, loanId: string, sequence: number, guardMinor: bigint) =>
  db
    .updateTable('loan_installments')
    // SET expressions read the row as it was: fully paid by this payment makes it Paid, Overdue included.
    .set((eb) => ({ paid_minor: eb('paid_minor', '+', paidMinor), status: sql<string>`case when paid_minor + ${statusPaidMinor} >= amount_minor then 'Paid' else status end` }))
    .where('loan_id', '=', loanId)
    .where('sequence', '=', sequence)
    .where((eb) => eb(eb('paid_minor', '+', guardMinor), '<=', eb.ref('amount_minor'))),
);

export async function payInstallment(db: CoreDb, loanId: string, sequence: number, amountMinor: bigint): Promise<boolean> {
  const result = await installmentPayment.execute(db, amountMinor, amountMinor, loanId, sequence, amountMinor);
  return (result.numAffectedRows ?? 0n) > 0n;
}

/** Adds to the facility's executed total only within its approved limit (guarded like payInstallment). */
const executedAmountAddition = preparedQuery((db, amountMinor: bigint, loanId: string, guardMinor: bigint) =>
  db
    .updateTable('loan_facilities')
    .set((eb) => ({ executed_total_minor: eb('executed_total_minor', '+', amountMinor) }))
    .where('loan_id', '=', loanId)
    .where((eb) => eb(eb('executed_total_minor', '+', guardMinor), '<=', eb.ref('approved_limit_minor'))),
);

export async function addExecutedAmount(db: CoreDb, loanId: string, amountMinor: bigint): Promise<boolean> {
  const result = await executedAmountAddition.execute(db, amountMinor, loanId, amountMinor);
  return (result.numAffectedRows ?? 0n) > 0n;
}

const executionInsert = preparedInsert<Insertable<LoanExecutionTable>>(
  [
    'operation_id',
    'execution_reference',
    'loan_id',
    'sequence',
    'amount_minor',
    'commission_minor',
    'fee_minor',
    'tax_minor',
    'payment_account',
    'expense_account',
    'facility_status',
    'executed_at',
  ],
  (db, rows) => db.insertInto('loan_executions').values(rows),
);

export async function insertLoanExecution(db: CoreDb, execution: LoanExecution): Promise<void> {
  await executionInsert.execute(db, {
    operation_id: execution.operationId,
    execution_reference: execution.executionReference,
    loan_id: execution.loanId,
    sequence: execution.sequence,
    amount_minor: execution.amountMinor,
    commission_minor: execution.commissionMinor,
    fee_minor: execution.feeMinor,
    tax_minor: execution.taxMinor,
    payment_account: execution.paymentAccount,
    expense_account: execution.expenseAccount,
    facility_status: execution.facilityStatus,
    executed_at: execution.executedAt,
  });
}

export async function findLoanExecutionByReference(db: CoreDb, reference: string): Promise<LoanExecution | undefined> {
  const row = await db.selectFrom('loan_executions').selectAll().where('execution_reference', '=', reference).executeTakeFirst();
  return row && toExecution(row);
}

function toFacility(row: Selectable<LoanFacilityTable>): LoanFacility {
  return {
    loanId: row.loan_id,
    customerReference: row.customer_reference,
    loanType: row.loan_type,
    parameterType: row.parameter_type,
    currency: row.currency,
    approvedLimitMinor: toBigInt(row.approved_limit_minor),
    executedTotalMinor: toBigInt(row.executed_total_minor),
    status: row.status,
    finalMaturityDate: row.final_maturity_date,
    fixedFeeMinor: toBigInt(row.fixed_fee_minor),
    commissionRate: row.commission_rate,
    minimumCommissionMinor: toBigInt(row.minimum_commission_minor),
    taxRate: row.tax_rate,
  };
}

function toExecution(row: Selectable<LoanExecutionTable>): LoanExecution {
  return {
    operationId: row.operation_id,
    executionReference: row.execution_reference,
    loanId: row.loan_id,
    sequence: Number(row.sequence),
    amountMinor: toBigInt(row.amount_minor),
    commissionMinor: toBigInt(row.commission_minor),
    feeMinor: toBigInt(row.fee_minor),
    taxMinor: toBigInt(row.tax_minor),
    paymentAccount: row.payment_account,
    expenseAccount: row.expense_account,
    facilityStatus: row.facility_status as LoanExecution['facilityStatus'],
    executedAt: row.executed_at,
  };
}

/** Takes the facility's row lock (a no-op update, as lockInstallment): its executed total is then exact. */
/** Locks the facility's row for the rest of the transaction and reads it, in one statement. */
const facilityLock = preparedQuery((db, loanId: string) =>
  db
    .updateTable('loan_facilities')
    .set((eb) => ({ executed_total_minor: eb.ref('executed_total_minor') }))
    .where('loan_id', '=', loanId)
    .returningAll(),
);

export async function lockFacility(db: CoreDb, loanId: string): Promise<LoanFacility | undefined> {
  const row = await facilityLock.first(db, loanId);
  return row && toFacility(row);
}
