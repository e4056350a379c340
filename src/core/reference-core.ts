/** coregate's reference core banking system: the CoreBankingPort over coregate's own store. */
import type { Store } from '../store/connect.js';
import { findTermDeposit, findTermDepositByReference } from '../store/banking.js';
import { findUserStatus, findWorkstationStatus } from '../store/directory.js';
import type { BusinessCalendar } from './business-calendar.js';
import type { CoreBankingPort, DirectoryStatus, TermDeposit, UnitOfWork } from './port.js';
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

  async userStatus(login: string): Promise<DirectoryStatus> {
    return (await findUserStatus(this.#store.db, login)) as DirectoryStatus;
  }

  async workstationStatus(id: string): Promise<DirectoryStatus> {
    return (await findWorkstationStatus(this.#store.db, id)) as DirectoryStatus;
  }
}
