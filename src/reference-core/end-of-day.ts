/**
 * End of day in the reference core (docs/business-days.md, "What the end of day of day b does"):
 * closes one business day in one transaction — the claim of the day first, then the maturities, the
 * overdue installments, their events (the outbox) and the business date moved past the day — so
 * that a day closes once, whoever tries and however often, and a crash loses a whole day or
 * nothing.
 */
import { sleep, type Clock } from '../core/clock.js';
import { randomUUID } from 'node:crypto';
import { dateAfterClosing } from '../core/end-of-day/days.js';
import {
  interestExpenseAccount,
  maturedStatus,
  maturityEventData,
  maturityMovementKind,
  maturityReference,
  planMaturity,
} from '../core/end-of-day/maturity.js';
import { overdueEventData } from '../core/end-of-day/overdue.js';
import { internalAccountKind } from '../core/ledger/movement.js';
import { timeOrderedUuid } from '../core/time-ordered-uuid.js';
import type { CoreRepository } from './repository.js';

export interface ClosedDay {
  maturedDeposits: number;
  overdueInstallments: number;
}

/**
 * TEST ONLY: COREGATE_TEST_EOD_DAY_DELAY_MS holds each day's transaction open that long before it
 * commits, so that a test can kill the process in the middle of an end of day. Never set it in a
 * deployment: it slows every end of day and holds the day's locks meanwhile.
 */
function testDayDelayMs(): number {
  const value = Number(process.env.COREGATE_TEST_EOD_DAY_DELAY_MS ?? '0');
  return Number.isInteger(value) && value > 0 ? Math.min(value, 60_000) : 0;
}

/** Closes `day` inside the caller's transaction; undefined when it was closed already. */
export async function closeBusinessDay(repository: CoreRepository, day: string, clock: Clock): Promise<ClosedDay | undefined> {
  if (!(await repository.claimBusinessDay(day))) return undefined;
  const maturedDeposits = await matureDeposits(repository, day, clock);
  const overdueInstallments = await markOverdueInstallments(repository, day);
  await repository.moveBusinessDateForward(dateAfterClosing(day));
  const counts = { maturedDeposits, overdueInstallments };
  await repository.recordBusinessDayCounts(day, counts);
  const delayMs = testDayDelayMs();
  if (delayMs > 0) await sleep(clock, delayMs);
  return counts;
}

async function matureDeposits(repository: CoreRepository, day: string, clock: Clock): Promise<number> {
  const contracts = await repository.listMaturingDeposits(day);
  if (contracts.length === 0) return 0;
  for (const currency of new Set(contracts.map((contract) => contract.currency))) {
    await repository.openAccount({ accountNumber: interestExpenseAccount(currency), customerReference: null, currency, status: 'Active', kind: internalAccountKind });
  }
  // Every account the day touches is locked at once, in one order, as every operation locks its own.
  const accounts = await repository.lockAccounts(
    contracts.flatMap((contract) => [contract.contractNumber, contract.sourceAccount, contract.interestAccount, interestExpenseAccount(contract.currency)]),
  );
  let matured = 0;
  for (const listed of contracts) {
    // Read again under the day's claim: a contract matured meanwhile is not repaid twice.
    if (!(await repository.markDepositMatured(listed.contractNumber))) continue;
    const contract = { ...listed, status: maturedStatus };
    const plan = planMaturity(contract, accounts.get(contract.contractNumber));
    await repository.postMovement({
      id: timeOrderedUuid(clock.now()),
      reference: maturityReference(contract.contractNumber),
      kind: maturityMovementKind,
      description: `Maturity of term deposit ${contract.contractNumber}`,
      businessDate: day,
      lines: plan.lines,
    });
    await repository.setAccountStatus(contract.contractNumber, 'Closed');
    await repository.appendEvent({
      id: randomUUID(),
      type: 'termDeposit.matured',
      businessDate: day,
      operationReference: contract.operationReference,
      data: maturityEventData(contract, plan, day),
    });
    matured += 1;
  }
  return matured;
}

async function markOverdueInstallments(repository: CoreRepository, day: string): Promise<number> {
  let overdue = 0;
  for (const installment of await repository.listInstallmentsPastDue(day)) {
    if (!(await repository.markInstallmentOverdue(installment.loanId, installment.sequence))) continue;
    await repository.appendEvent({
      id: randomUUID(),
      type: 'loanInstallment.overdue',
      businessDate: day,
      operationReference: null,
      data: overdueEventData(installment, installment.currency, day),
    });
    overdue += 1;
  }
  return overdue;
}
