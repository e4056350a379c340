/** coregate's reference core banking system: the CoreBankingPort over coregate's own store. */
import type { Store } from '../store/connect.js';
import { findTermDeposit, findTermDepositByReference } from '../store/banking.js';
import { findUserStatus, findWorkstationStatus } from '../store/directory.js';
import type { BusinessCalendar } from './business-calendar.js';
import type { CoreBankingPort, DirectoryStatus, LoanInstallmentResult, TermDeposit, UnitOfWork } from './port.js';
import { executeInstallment } from './loans/execute-installment.js';
import type { LoanInstallmentExecution } from './loans/execution-request.js';
import { findFacility, findLoanExecutionByReference, type LoanExecutionRecord } from '../store/loans.js';
import type { Queryable } from '../store/realms.js';
import { constituteTermDeposit, withInterest } from './term-deposits/constitute.js';
import type { TermDepositInitiation } from './term-deposits/initiation.js';

export class ReferenceCore implements CoreBankingPort {
  readonly #store: Store;
  readonly #calendar: BusinessCalendar;

  constructor(store: Store, calendar: BusinessCalendar) {
    this.#store = store;
    this.#calendar = calendar;
  }

  calendar(): BusinessCalendar {
    return this.#calendar;
  }

  initiateTermDeposit(uow: UnitOfWork, reference: string, command: TermDepositInitiation): Promise<TermDeposit> {
    return constituteTermDeposit(uow, this.#calendar, reference, command);
  }

  async retrieveTermDeposit(contractNumber: string): Promise<TermDeposit | undefined> {
    const record = await findTermDeposit(this.#store.db, contractNumber);
    return record && withInterest(record);
  }

  async findTermDepositByReference(reference: string): Promise<TermDeposit | undefined> {
    const record = await findTermDepositByReference(this.#store.db, reference);
    return record && withInterest(record);
  }

  async executeLoanInstallment(uow: UnitOfWork, reference: string, command: LoanInstallmentExecution, executedAt: Date): Promise<LoanInstallmentResult> {
    const execution = await executeInstallment(uow, this.#calendar, reference, command, executedAt);
    return toLoanResult(execution, await this.#currencyOf(uow, execution.loanId));
  }

  async findLoanExecutionByReference(reference: string): Promise<LoanInstallmentResult | undefined> {
    const execution = await findLoanExecutionByReference(this.#store.db, reference);
    return execution && toLoanResult(execution, await this.#currencyOf(this.#store.db, execution.loanId));
  }

  async #currencyOf(db: Queryable, loanId: string): Promise<string> {
    const facility = await findFacility(db, loanId);
    // An execution always references its facility (foreign key): a miss is a broken store.
    if (!facility) throw new Error(`loan execution of unknown facility ${loanId}`);
    return facility.currency;
  }

  async userStatus(login: string): Promise<DirectoryStatus> {
    return (await findUserStatus(this.#store.db, login)) as DirectoryStatus;
  }

  async workstationStatus(id: string): Promise<DirectoryStatus> {
    return (await findWorkstationStatus(this.#store.db, id)) as DirectoryStatus;
  }
}

function toLoanResult(execution: LoanExecutionRecord, currency: string): LoanInstallmentResult {
  return {
    merchandisingLoanOperationId: execution.operationId,
    executionReference: execution.executionReference,
    executionDateTime: execution.executedAt,
    facilityStatus: execution.facilityStatus as LoanInstallmentResult['facilityStatus'],
    loanId: execution.loanId,
    sequence: execution.sequence,
    currency,
    amountMinor: execution.amountMinor,
    commissionMinor: execution.commissionMinor,
    feeMinor: execution.feeMinor,
    taxMinor: execution.taxMinor,
  };
}
