/**
 * The reference core's repository (src/reference-core/repository.ts) over coregate's store: the
 * core's tables live in the same database as the API's when the core is embedded, or in a
 * database of its own when it runs as `coregate core serve`.
 */
import { sql } from 'kysely';
import { LedgerInvariantError } from '../../core/ledger/movement.js';
import type { Account } from '../../core/domain.js';
import { dateOf, type Clock } from '../../core/clock.js';
import type { DirectoryStatus } from '../../core/port.js';
import type { UnitOfWork } from '../../core/unit-of-work.js';
import type { CoreRepository, CoreStorage } from '../repository.js';
import {
  findAccount,
  findCustomer,
  lockAccount,
  findProduct,
  findTermDeposit,
  findTermDepositByReference,
  insertAccountIfMissing,
  insertTermDeposit,
  listMaturingDeposits,
  markDepositMatured,
  setAccountStatus,
} from './banking.js';
import {
  claimBusinessDay,
  insertCoreEvent,
  listCoreEventsAfter,
  moveBusinessDateForward,
  readBusinessDate,
  recordBusinessDayCounts,
} from './end-of-day.js';
import type { Store } from '../../store/connect.js';
import { findCoreOperation, recordCoreOperation } from './core-operations.js';
import { findUserStatus, findWorkstationStatus } from './directory.js';
import { postMovement } from './ledger.js';
import {
  addExecutedAmount,
  findFacility,
  findInstallment,
  findLoanExecutionByReference,
  insertLoanExecution,
  listInstallmentsPastDue,
  lockFacility,
  lockInstallment,
  markInstallmentOverdue,
  payInstallment,
} from './loans.js';
import { type CoreDb, coreTablesOf } from './core-db.js';
import { deferWrite } from '../../store/engine/unit-of-work.js';
import { transactionOf } from '../../store/unit-of-work.js';

/**
 * `clock`: the core's (src/core/clock.ts); the time each row records it was written (a movement's
 * `created_at`, a reference's `recorded_at`, a closed day's `closed_at`), never the machine's.
 */
export function coreRepository(db: CoreDb, clock: Clock): CoreRepository {
  const now = () => dateOf(clock).toISOString();
  return {
    async lockAccounts(accountNumbers) {
      // One order for every transaction, so that two never wait on each other's rows: the locks
      // are taken in the order issued (together, on PostgreSQL in one round trip).
      const ordered = [...new Set(accountNumbers)].sort();
      const accounts = await Promise.all(ordered.map((accountNumber) => lockAccount(db, accountNumber)));
      const locked = new Map<string, Account>();
      ordered.forEach((accountNumber, index) => {
        const account = accounts[index];
        if (account !== undefined) locked.set(accountNumber, account);
      });
      return locked;
    },
    findCustomer: (reference) => findCustomer(db, reference),
    findAccount: (accountNumber) => findAccount(db, accountNumber),
    // The core's writes answer nothing it reads: deferred, so that what the caller writes next
    // (the settlement) goes with them (statement-queue.ts); a failure still fails the unit of work.
    openAccount: (account) =>
      deferWrite(db, async () => {
        await insertAccountIfMissing(db, account, now());
      }),
    findProduct: (productCode, componentCode) => findProduct(db, productCode, componentCode),
    postMovement: (movement) => {
      const createdAt = now();
      return deferWrite(db, () => postMovement(db, movement, createdAt));
    },
    insertTermDeposit: (contract) => {
      const createdAt = now();
      return deferWrite(db, () => insertTermDeposit(db, contract, createdAt));
    },
    findTermDeposit: (contractNumber) => findTermDeposit(db, contractNumber),
    findTermDepositByReference: (reference) => findTermDepositByReference(db, reference),
    async lockInstallment(loanId, sequence) {
      // The installment's lock, then the facility's: issued in that order, together.
      const [installment, facility] = await Promise.all([lockInstallment(db, loanId, sequence), lockFacility(db, loanId)]);
      return { installment, facility };
    },
    findFacility: (loanId) => findFacility(db, loanId),
    findInstallment: (loanId, sequence) => findInstallment(db, loanId, sequence),
    recordInstallmentPayment: (loanId, sequence, amountMinor) =>
      deferWrite(db, async () => {
        // The rules decided on locked rows: a guard that trips here is a broken invariant.
        const [added, paid] = await Promise.all([addExecutedAmount(db, loanId, amountMinor), payInstallment(db, loanId, sequence, amountMinor)]);
        if (!added) throw new LedgerInvariantError(`facility ${loanId} would exceed its approved limit`);
        if (!paid) throw new LedgerInvariantError(`installment ${sequence} of ${loanId} would be overpaid`);
      }),
    insertLoanExecution: (execution) => deferWrite(db, () => insertLoanExecution(db, execution)),
    findLoanExecutionByReference: (reference) => findLoanExecutionByReference(db, reference),
    recordOperation: (record) => recordCoreOperation(db, record, now()),
    findOperation: (reference) => findCoreOperation(db, reference),
    userStatus: async (login) => (await findUserStatus(db, login)) as DirectoryStatus,
    workstationStatus: async (id) => (await findWorkstationStatus(db, id)) as DirectoryStatus,
    async ping() {
      await sql`select 1`.execute(db);
    },
    businessDate: () => readBusinessDate(db),
    moveBusinessDateForward: (to) => moveBusinessDateForward(db, to),
    claimBusinessDay: (day) => claimBusinessDay(db, day, now()),
    recordBusinessDayCounts: (day, counts) => recordBusinessDayCounts(db, day, counts),
    listMaturingDeposits: (day) => listMaturingDeposits(db, day),
    markDepositMatured: (contractNumber) => markDepositMatured(db, contractNumber),
    setAccountStatus: (accountNumber, status) => setAccountStatus(db, accountNumber, status),
    listInstallmentsPastDue: (day) => listInstallmentsPastDue(db, day),
    markInstallmentOverdue: (loanId, sequence) => markInstallmentOverdue(db, loanId, sequence),
    appendEvent: (event) => insertCoreEvent(db, event, now()),
    eventsAfter: (sequence, limit) => listCoreEventsAfter(db, sequence, limit),
  };
}

export function coreStorage(store: Store, clock: Clock): CoreStorage {
  return {
    // Readiness asks the store itself: a database that answers `select 1` but takes no writes (a
    // standby, a read-only session) cannot execute anything, so the core is not ready (issue 24).
    reader: { ...coreRepository(coreTablesOf(store.db), clock), ping: () => store.ping() },
    transaction: (work) => store.transaction((trx) => work(coreRepository(coreTablesOf(trx), clock))),
    within: (unitOfWork: UnitOfWork) => coreRepository(coreTablesOf(transactionOf(unitOfWork, store)), clock),
  };
}
