/**
 * The term deposit constitution in the reference core: reads the facts, locks and reads the source
 * account, lets the pure rules decide (src/core/term-deposits/constitution-rules.ts), and writes
 * the contract, its account and the balanced movement. The reference core runs it under the
 * reference's claim (src/reference-core/reference-core.ts).
 */
import { randomInt } from 'node:crypto';
import { timeOrderedUuid } from '../../core/time-ordered-uuid.js';
import type { BusinessCalendar } from '../../core/business-calendar.js';
import type { Decision } from '../../core/decision.js';
import { termDepositAccountKind } from '../../core/ledger/movement.js';
import type { TermDepositContract } from '../../core/domain.js';
import type { TermDeposit } from '../../core/port.js';
import { decideConstitution } from '../../core/term-deposits/constitution-rules.js';
import type { TermDepositInitiation } from '../../core/term-deposits/initiation.js';
import { operationHandler } from '../../reference-core/operation-handler.js';
import type { OperationRepository } from '../../reference-core/operation-repository.js';
import { withInterest } from '../../reference-core/term-deposit-interest.js';

export const handler = operationHandler<TermDepositInitiation, TermDeposit>({
  execute: async (repository, { calendar, clock }, reference, command) => {
    const decision = await constituteTermDeposit(repository, calendar, reference, command, clock.now());
    return decision.ok ? { ok: true, value: withInterest(decision.value) } : decision;
  },
  // Contracts made before outcomes were recorded (migration 0004) are found by their reference too.
  find: async (repository, reference) => {
    const contract = await repository.findTermDepositByReference(reference);
    return contract && withInterest(contract);
  },
  made: 'contract',
});

export async function constituteTermDeposit(
  repository: OperationRepository,
  businessCalendar: BusinessCalendar | Promise<BusinessCalendar>,
  reference: string,
  command: TermDepositInitiation,
  /** The core clock's time: the movement's id is ordered by it (src/core/time-ordered-uuid.ts). */
  nowMs: number,
): Promise<Decision<TermDepositContract>> {
  // The facts and the source account's lock are asked for together (on PostgreSQL one round
  // trip): the facts this operation does not change, and the locked row it does.
  const [calendar, customer, interestAccount, product, locked] = await Promise.all([
    businessCalendar,
    repository.findCustomer(command.customerReference),
    repository.findAccount(command.interestAccount),
    repository.findProduct(command.productCode, command.componentCode),
    repository.lockAccounts([command.sourceAccount]),
  ]);
  const source = locked.get(command.sourceAccount);
  const contractNumber = `TD${String(randomInt(0, 2 ** 47)).padStart(15, '0')}`;
  const decision = decideConstitution(reference, command, { customer, source, interestAccount, product, calendar, contractNumber });
  if (!decision.ok) return decision;
  const { contract, lines } = decision.value;
  // The writes, in the order they must run (the account before the postings and the contract
  // that refer to it), started together.
  await Promise.all([
    repository.openAccount({
      accountNumber: contract.contractNumber,
      customerReference: contract.customerReference,
      currency: contract.currency,
      status: contract.status,
      kind: termDepositAccountKind,
    }),
    repository.postMovement({
      id: timeOrderedUuid(nowMs),
      reference,
      kind: 'term_deposit_constitution',
      description: contract.description,
      businessDate: calendar.businessDate,
      lines,
    }),
    repository.insertTermDeposit(contract),
  ]);
  return { ok: true, value: contract };
}
