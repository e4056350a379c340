/**
 * Loan installments at end of day (docs/business-days.md, "What the end of day of day b does"): an
 * installment due on or before the closed day and not fully paid becomes Overdue. Paying it in full
 * afterwards makes it Paid.
 */
import { toEpochDay } from '../calendar-date.js';
import type { Installment } from '../domain.js';
import { formatMinor } from '../money.js';

/** Pending: not fully paid, not past due. Overdue: past due at an end of day. Paid: fully paid. */
export type InstallmentStatus = 'Pending' | 'Overdue' | 'Paid';

export function becomesOverdue(installment: Installment & { status: InstallmentStatus }, closedDay: string): boolean {
  return installment.status === 'Pending' && installment.paidMinor < installment.amountMinor && toEpochDay(installment.dueDate) <= toEpochDay(closedDay);
}

export function overdueEventData(installment: Installment, currency: string, closedDay: string): Record<string, unknown> {
  return {
    loanId: installment.loanId,
    sequence: installment.sequence,
    dueDate: installment.dueDate,
    overdueOn: closedDay,
    amount: { amount: formatMinor(installment.amountMinor, currency), currency },
    paid: { amount: formatMinor(installment.paidMinor, currency), currency },
    outstanding: { amount: formatMinor(installment.amountMinor - installment.paidMinor, currency), currency },
    status: 'Overdue',
  };
}
