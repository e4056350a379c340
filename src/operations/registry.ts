/** Every business operation, by name: the pending worker and the reconciler find them here. */
import { loanInstallmentExecution } from './loan-installment-execution.js';
import { erase, type Operation } from './operation-definition.js';
import { termDepositInitiation } from './term-deposit-initiation.js';

export const termDepositInitiationOperation = erase(termDepositInitiation);
export const loanInstallmentExecutionOperation = erase(loanInstallmentExecution);

export const businessOperations: ReadonlyMap<string, Operation> = new Map(
  [termDepositInitiationOperation, loanInstallmentExecutionOperation].map((operation) => [operation.name, operation]),
);
