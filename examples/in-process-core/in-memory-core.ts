/**
 * A core banking system in memory, written in TypeScript against coregate's port: an in-process
 * core (docs/core-port.md, "An in-process core"). A bank writes one like it in front of its own
 * core (calling that core where this one reads a Map); this one keeps its books in memory, to show
 * in one sitting what the port asks of a core:
 * - at most once per reference: a reference's outcome is kept, and the same reference again
 *   answers it, whatever the repeated command says;
 * - lookups by reference (NotFound only for a reference never executed) and fences;
 * - refusals as values, with the catalogue's entries (docs/core-protocol.md, "Refusals");
 * - money as bigint minor units, interest half-up, maturities rolled past weekends and holidays.
 * It serves term deposits, the directory, the business date with end of day, and events. It holds
 * no loan facilities (every installment is refused with facilityNotFound, ML-404-001), and it
 * implements neither optional side: no read side (the operator views answer 501) and no load side
 * (a data file with a core part is refused at start).
 *
 * Each method runs to its end without awaiting, so two calls for one reference cannot interleave:
 * the first records the outcome, the second answers it. A core behind a network must get the same
 * from its own store (a unique reference, a guarded debit).
 *
 * In a project of your own, import from 'coregate' instead of '../../src/index.js'.
 */
import { randomUUID } from 'node:crypto';
import {
  BusinessDateBackwards,
  BusinessRefusal,
  errorCatalogue,
  type CoreBankingPort,
  type CoreEvent,
  type CoreLookup,
  type CoreOutcome,
  type DirectoryStatus,
  type EndOfDayReport,
  type LoanInstallmentExecution,
  type LoanInstallmentResult,
  type TermDeposit,
  type TermDepositInitiation,
} from '../../src/index.js';

export interface InMemoryBooks {
  /** The open business day (YYYY-MM-DD). */
  businessDate: string;
  /** Days without end of day besides Saturdays and Sundays. */
  holidays: string[];
  customers: Record<string, { status: 'Active' | 'Blocked' }>;
  /** Customer accounts; currencies with two minor digits (USD, EUR) only, to keep this example short. */
  accounts: Record<string, { customerReference: string; currency: string; balanceMinor: bigint }>;
  /** By `productCode/componentCode`. */
  products: Record<string, { currencies: string[]; dayCount: 'ACT/360' | 'ACT/365'; minDays: number; maxDays: number }>;
  users: Record<string, DirectoryStatus>;
  workstations: Record<string, DirectoryStatus>;
}

const dayMs = 86_400_000;
const addDays = (date: string, days: number) => new Date(Date.parse(`${date}T00:00:00Z`) + days * dayMs).toISOString().slice(0, 10);
const daysBetween = (from: string, to: string) => Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / dayMs);
/** Two minor digits: 1327n → "13.27". */
const major = (minor: bigint) => `${minor / 100n}.${String(minor % 100n).padStart(2, '0')}`;

/** principal × rate / 100 × days / basis, half-up to the minor unit, in integers (the rate is the decimal the client sent). */
function interestMinor(principalMinor: bigint, ratePercent: string, days: number, basis: number): bigint {
  const [, whole = '0', fraction = '', exponent = '0'] = /^(\d+)(?:\.(\d+))?(?:e-(\d+))?$/.exec(ratePercent) ?? [];
  const numerator = principalMinor * BigInt(whole + fraction) * BigInt(days);
  const denominator = 10n ** BigInt(fraction.length + Number(exponent)) * 100n * BigInt(basis);
  return (2n * numerator + denominator) / (2n * denominator);
}

export class InMemoryCore implements CoreBankingPort {
  readonly #books: InMemoryBooks;
  readonly #deposits = new Map<string, CoreOutcome<TermDeposit>>();
  readonly #installments = new Map<string, CoreOutcome<LoanInstallmentResult>>();
  readonly #fenced = new Set<string>();
  readonly #contracts = new Map<string, TermDeposit>();
  readonly #events: CoreEvent[] = [];
  #contractsMade = 0;

  constructor(books: InMemoryBooks) {
    this.#books = books;
  }

  /** An account's balance in minor units (for tests and demos: the port itself never asks). */
  balanceOf(accountNumber: string): bigint | undefined {
    return this.#books.accounts[accountNumber]?.balanceMinor;
  }

  async constituteTermDeposit(reference: string, command: TermDepositInitiation): Promise<CoreOutcome<TermDeposit>> {
    const known = this.#deposits.get(reference) ?? this.#fencedOutcome(reference);
    if (known) return known;
    const outcome = this.#constitute(reference, command);
    this.#deposits.set(reference, outcome);
    return outcome;
  }

  async findTermDepositConstitution(reference: string): Promise<CoreLookup<TermDeposit>> {
    return this.#deposits.get(reference) ?? this.#fencedOutcome(reference) ?? { status: 'NotFound' };
  }

  async executeLoanInstallment(reference: string, command: LoanInstallmentExecution): Promise<CoreOutcome<LoanInstallmentResult>> {
    const known = this.#installments.get(reference) ?? this.#fencedOutcome(reference);
    if (known) return known;
    const outcome = refused<LoanInstallmentResult>(errorCatalogue.facilityNotFound, `merchandising loan facility ${command.loanId} not found`);
    this.#installments.set(reference, outcome);
    return outcome;
  }

  async findLoanInstallmentExecution(reference: string): Promise<CoreLookup<LoanInstallmentResult>> {
    return this.#installments.get(reference) ?? this.#fencedOutcome(reference) ?? { status: 'NotFound' };
  }

  /** A reference that has not executed never will: from now on it answers Rejected notExecuted. */
  async fenceOperation(reference: string): Promise<void> {
    if (!this.#deposits.has(reference) && !this.#installments.has(reference)) this.#fenced.add(reference);
  }

  async retrieveTermDeposit(contractNumber: string): Promise<TermDeposit | undefined> {
    return this.#contracts.get(contractNumber);
  }

  async userStatus(login: string): Promise<DirectoryStatus> {
    return this.#books.users[login];
  }

  async workstationStatus(id: string): Promise<DirectoryStatus> {
    return this.#books.workstations[id];
  }

  async ping(): Promise<void> {}

  async businessDate(): Promise<string> {
    return this.#books.businessDate;
  }

  /** Closes every business day from the current date up to `to` (not included): maturities repay principal and interest. */
  async advanceBusinessDate(to: string): Promise<EndOfDayReport> {
    const from = this.#books.businessDate;
    if (to < from) throw new BusinessDateBackwards(from, to);
    const report: EndOfDayReport = { from, to, daysClosed: [], maturedDeposits: 0, overdueInstallments: 0 };
    for (let day = from; day < to; day = addDays(day, 1)) {
      if (!this.#isBusinessDay(day)) continue;
      for (const contract of this.#contracts.values()) {
        if (contract.status !== 'Active' || contract.maturityDate > day) continue;
        this.#credit(contract.sourceAccount, contract.principalMinor);
        this.#credit(contract.interestAccount, contract.expectedInterestMinor);
        contract.status = 'Matured';
        report.maturedDeposits += 1;
        this.#events.push({
          sequence: this.#events.length + 1,
          id: randomUUID(),
          type: 'termDeposit.matured',
          businessDate: day,
          operationReference: contract.operationReference,
          // The fields of docs/core-protocol.md, "Events": the API passes them on in the webhook's data.
          data: {
            contractNumber: contract.contractNumber,
            customerReference: contract.customerReference,
            maturityDate: contract.maturityDate,
            repaidOn: day,
            principal: { amount: major(contract.principalMinor), currency: contract.currency },
            interest: { amount: major(contract.expectedInterestMinor), currency: contract.currency },
            sourceAccount: contract.sourceAccount,
            interestAccount: contract.interestAccount,
            status: 'Matured',
          },
        });
      }
      report.daysClosed.push(day);
    }
    this.#books.businessDate = to;
    return report;
  }

  async eventsAfter(sequence: number, limit: number): Promise<CoreEvent[]> {
    return this.#events.filter((event) => event.sequence > sequence).slice(0, limit);
  }

  /** The rules of docs/term-deposits.md that need the core's records, in order. */
  #constitute(reference: string, command: TermDepositInitiation): CoreOutcome<TermDeposit> {
    const { customers, accounts, products, businessDate } = this.#books;
    const customer = customers[command.customerReference];
    const source = accounts[command.sourceAccount];
    const interestAccount = accounts[command.interestAccount];
    const product = products[`${command.productCode}/${command.componentCode}`];
    const E = errorCatalogue;
    if (!customer) return refused(E.customerNotFound, `customer ${command.customerReference} not found`);
    if (!source) return refused(E.sourceAccountNotFound, `source account ${command.sourceAccount} not found`);
    if (!interestAccount) return refused(E.interestAccountNotFound, `interest settlement account ${command.interestAccount} not found`);
    if (customer.status !== 'Active') return refused(E.customerBlocked, `customer ${command.customerReference} is blocked`);
    if (!product) return refused(E.productNotAvailable, `product ${command.productCode}/${command.componentCode} is unknown`);
    if (!product.currencies.includes(command.currency)) return refused(E.currencyNotOffered, `the product is not offered in ${command.currency}`);
    for (const [role, account] of [['source', source], ['interest settlement', interestAccount]] as const) {
      if (account.customerReference !== command.customerReference) return refused(E.accountNotCustomers, `${role} account does not belong to customer ${command.customerReference}`);
    }
    if (source.currency !== command.currency) return refused(E.currencyMismatchSource, `source account ${command.sourceAccount} is in ${source.currency}`);
    if (command.valueDate < businessDate) return refused(E.valueDateBeforeBusinessDate, `valueDate ${command.valueDate} is before the business date ${businessDate}`);
    if (!this.#isBusinessDay(command.valueDate)) return refused(E.valueDateNotBusinessDay, `valueDate ${command.valueDate} is not a business day`);
    if (command.maturityDate !== undefined && !this.#isBusinessDay(command.maturityDate)) return refused(E.maturityNotBusinessDay, `maturityDate ${command.maturityDate} is not a business day`);
    const maturityDate = command.maturityDate ?? this.#rollForward(addDays(command.valueDate, command.numberOfDays ?? 0));
    const numberOfDays = daysBetween(command.valueDate, maturityDate);
    if (numberOfDays < product.minDays || numberOfDays > product.maxDays) return refused(E.termOutsideProductLimits, `a term of ${numberOfDays} days is outside ${product.minDays}-${product.maxDays}`);
    if (source.balanceMinor < command.principalMinor) {
      return refused(E.insufficientFundsSource, `source account ${command.sourceAccount} cannot cover ${major(command.principalMinor)} ${command.currency}`);
    }
    this.#credit(command.sourceAccount, -command.principalMinor);
    this.#contractsMade += 1;
    const contractNumber = `TD${String(this.#contractsMade).padStart(15, '0')}`;
    const contract: TermDeposit = {
      contractNumber,
      customerReference: command.customerReference,
      productCode: command.productCode,
      componentCode: command.componentCode,
      principalMinor: command.principalMinor,
      currency: command.currency,
      ratePercent: command.ratePercent,
      dayCount: product.dayCount,
      valueDate: command.valueDate,
      maturityDate,
      numberOfDays,
      sourceAccount: command.sourceAccount,
      interestAccount: command.interestAccount,
      description: command.description ?? `Term deposit ${contractNumber}`,
      operationReference: reference,
      status: 'Active',
      expectedInterestMinor: interestMinor(command.principalMinor, command.ratePercent, numberOfDays, product.dayCount === 'ACT/360' ? 360 : 365),
    };
    this.#contracts.set(contractNumber, contract);
    return { status: 'Executed', result: contract };
  }

  /** A fenced reference's answer: Rejected notExecuted (TD-502-002 or ML-502-002 on the wire, by the operation that asks). */
  #fencedOutcome(reference: string): CoreOutcome<never> | undefined {
    if (!this.#fenced.has(reference)) return undefined;
    return refused(errorCatalogue.notExecuted, `operation ${reference} was closed before the core executed it; nothing was posted`);
  }

  #credit(accountNumber: string, amountMinor: bigint): void {
    const account = this.#books.accounts[accountNumber];
    if (!account) throw new Error(`no account ${accountNumber}`);
    account.balanceMinor += amountMinor;
  }

  #isBusinessDay(date: string): boolean {
    const weekday = new Date(`${date}T00:00:00Z`).getUTCDay();
    return weekday !== 0 && weekday !== 6 && !this.#books.holidays.includes(date);
  }

  #rollForward(date: string): string {
    let day = date;
    while (!this.#isBusinessDay(day)) day = addDays(day, 1);
    return day;
  }
}

function refused<T>(entry: (typeof errorCatalogue)[keyof typeof errorCatalogue], message: string): CoreOutcome<T> {
  return { status: 'Rejected', refusal: new BusinessRefusal(entry, message) };
}
