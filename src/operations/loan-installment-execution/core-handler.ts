/**
 * The loan installment execution in the reference core: locks the installment, the facility and
 * the accounts, reads the facts, lets the pure rules decide (src/core/loans/installment-rules.ts),
 * and writes the payment, the execution and the balanced movement. The reference core runs it
 * under the reference's claim (src/reference-core/reference-core.ts).
 */
import { randomInt } from 'node:crypto';
import { dateOf } from '../../core/clock.js';
import { timeOrderedUuid } from '../../core/time-ordered-uuid.js';
import type { BusinessCalendar } from '../../core/business-calendar.js';
import type { Decision } from '../../core/decision.js';
import type { LoanExecution } from '../../core/domain.js';
import { internalAccountKind } from '../../core/ledger/movement.js';
import type { LoanInstallmentExecution } from '../../core/loans/execution-request.js';
import { decideInstallment } from '../../core/loans/installment-rules.js';
import type { LoanInstallmentResult } from '../../core/port.js';
import { operationHandler } from '../../reference-core/operation-handler.js';
import type { OperationRepository } from '../../reference-core/operation-repository.js';

export const handler = operationHandler<LoanInstallmentExecution, LoanInstallmentResult>({
  execute: async (repository, { calendar, clock }, reference, command) => {
    const decision = await executeLoanInstallment(repository, calendar, reference, command, dateOf(clock));
    if (!decision.ok) return decision;
    return { ok: true, value: await loanResult(repository, decision.value) };
  },
  find: async (repository, reference) => {
    const execution = await repository.findLoanExecutionByReference(reference);
    return execution && loanResult(repository, execution);
  },
  made: 'execution',
});

/** An execution with its facility's currency: the port's result. */
async function loanResult(repository: OperationRepository, execution: LoanExecution): Promise<LoanInstallmentResult> {
  const facility = await repository.findFacility(execution.loanId);
  // An execution always references its facility (foreign key): a miss is a broken store.
  if (!facility) throw new Error(`loan execution of unknown facility ${execution.loanId}`);
  return { ...execution, currency: facility.currency };
}

export async function executeLoanInstallment(
  repository: OperationRepository,
  businessCalendar: BusinessCalendar | Promise<BusinessCalendar>,
  reference: string,
  command: LoanInstallmentExecution,
  executedAt: Date,
): Promise<Decision<LoanExecution>> {
  // The installment's and facility's locks, then the accounts' (in account order), asked for together.
  const [calendar, { facility, installment }, accounts] = await Promise.all([
    businessCalendar,
    repository.lockInstallment(command.loanId, command.sequence),
    repository.lockAccounts([command.paymentAccount, command.expenseAccount, command.loanId]),
  ]);
  const payment = accounts.get(command.paymentAccount);
  const expense = accounts.get(command.expenseAccount);
  const decision = decideInstallment(command, { facility, installment, payment, expense });
  if (!decision.ok) return decision;
  const plan = decision.value;
  const { loanId, sequence, currency } = plan;
  const execution: LoanExecution = {
    operationId: `MLO${String(randomInt(0, 2 ** 47)).padStart(15, '0')}`,
    executionReference: reference,
    loanId,
    sequence,
    amountMinor: plan.amountMinor,
    commissionMinor: plan.commissionMinor,
    feeMinor: plan.feeMinor,
    taxMinor: plan.taxMinor,
    paymentAccount: command.paymentAccount,
    expenseAccount: command.expenseAccount,
    facilityStatus: plan.facilityStatus,
    executedAt: executedAt.toISOString(),
  };
  // The writes, in the order they must run (income accounts before the postings to them),
  // started together.
  await Promise.all([
    ...plan.incomeAccounts.map((account) => repository.openAccount({ accountNumber: account, customerReference: null, currency, status: 'Active', kind: internalAccountKind })),
    repository.recordInstallmentPayment(loanId, sequence, plan.amountMinor),
    repository.postMovement({
      id: timeOrderedUuid(executedAt.getTime()),
      reference,
      kind: 'loan_installment_execution',
      description: `Installment ${sequence} of merchandising loan ${loanId}`,
      businessDate: calendar.businessDate,
      lines: plan.lines,
    }),
    repository.insertLoanExecution(execution),
  ]);
  return { ok: true, value: execution };
}
