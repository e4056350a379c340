/**
 * What every rule of the kit works with (docs/conformance.md): the port under test, the sides it
 * serves, the fixtures, the core's business date, a value date it accepts and its weekend, the
 * last event it held when the kit started, and the ways to prove what money moved — the read side
 * when the core serves it, otherwise draining one of the kit's own single-use accounts.
 */
import { randomUUID } from 'node:crypto';
import { BusinessCalendar, weekdayOf } from '../core/business-calendar.js';
import { addDays } from '../core/calendar-date.js';
import { errorCatalogue as E } from '../core/error-catalogue.js';
import type { LoanInstallmentExecution } from '../core/loans/execution-request.js';
import { CoreSideNotServed, type CoreBankingPort, type CoreDataDocument, type CoreDataLoad, type CoreRecords } from '../core/port.js';
import type { TermDepositInitiation } from '../core/term-deposits/initiation.js';
import { check, describeOutcome, money, rejectedWith } from './checks.js';
import { RuleFailure } from './conformance-errors.js';
import type { ConformanceFixtures, KitAccountRole } from './conformance-fixtures.js';
import type { CoreWeekend } from './core-weekend.js';
import type { WireClient } from './wire-client.js';

/** An account a rule moves money on, and whether the kit may drain it to prove its balance. */
export interface RuleAccount {
  accountNumber: string;
  /** The balance the kit loaded it with (its own single-use accounts only). */
  openingMinor: bigint | undefined;
}

export interface ContextParts {
  port: CoreBankingPort;
  records: CoreRecords | undefined;
  dataLoad: CoreDataLoad | undefined;
  fixtures: ConformanceFixtures;
  /** What the kit loaded through the load side (loaded fixtures). */
  loaded: CoreDataDocument | undefined;
  businessDate: string;
  valueDate: string;
  weekend: CoreWeekend;
  /** The last event sequence the core held when the kit started (0: none). */
  eventsFrom: number;
  advance: boolean;
  wire: WireClient | undefined;
}

export class ConformanceContext {
  readonly port: CoreBankingPort;
  readonly records: CoreRecords | undefined;
  readonly dataLoad: CoreDataLoad | undefined;
  readonly fixtures: ConformanceFixtures;
  readonly loaded: CoreDataDocument | undefined;
  /** The core's business date when the kit started. */
  readonly businessDate: string;
  readonly weekend: CoreWeekend;
  /** The last event sequence the core held when the kit started: the kit reads events after it, never from the start. */
  readonly eventsFrom: number;
  readonly advance: boolean;
  readonly wire: WireClient | undefined;
  /** The kit's end of day: the reference of the deposit it matured, for the events rule. */
  maturedReference: string | undefined;
  #valueDate: string;
  readonly #calendar: BusinessCalendar;
  readonly #drained = new Set<string>();
  #notes: string[] = [];

  constructor(parts: ContextParts) {
    this.port = parts.port;
    this.records = parts.records;
    this.dataLoad = parts.dataLoad;
    this.fixtures = parts.fixtures;
    this.loaded = parts.loaded;
    this.businessDate = parts.businessDate;
    this.#valueDate = parts.valueDate;
    this.weekend = parts.weekend;
    this.eventsFrom = parts.eventsFrom;
    this.advance = parts.advance;
    this.wire = parts.wire;
    this.#calendar = new BusinessCalendar(parts.weekend.days, parts.weekend.holidays, parts.businessDate);
  }

  /** The first date from the business date on that the core accepted as a value date; after the kit's end of day, the new business date. */
  get valueDate(): string {
    return this.#valueDate;
  }

  /** The core's business date moved (the kit's end of day): deposits from now on are valued on `date`. */
  movedTo(date: string): void {
    this.#valueDate = date;
  }

  /** The product's first currency: the deposits' and (usually) the facility's. */
  get currency(): string {
    return this.fixtures.product.currencies[0] ?? 'USD';
  }

  /** A term the product allows, for deposits whose term is not the point. */
  get termDays(): number {
    const { minDays, maxDays } = this.fixtures.product;
    return Math.max(minDays, Math.min(30, maxDays));
  }

  /** The smallest principal the product allows: what a run consumes of a fixture file's source account is counted in it (docs/conformance.md). */
  get principalMinor(): bigint {
    const { minAmountMinor } = this.fixtures.product;
    return minAmountMinor > 0n ? minAmountMinor : 1n;
  }

  /** Something the rule could not verify against this core, said beside its result. */
  note(text: string): void {
    this.#notes.push(text);
  }

  /** The notes written since the last call (the runner's, per rule). */
  takeNotes(): string[] {
    const notes = this.#notes;
    this.#notes = [];
    return notes;
  }

  /** A valid constitution for the fixtures' customer, source and product. */
  deposit(terms: Partial<TermDepositInitiation> = {}): TermDepositInitiation {
    const { fixtures } = this;
    return {
      customerReference: fixtures.customer,
      productCode: fixtures.product.productCode,
      componentCode: fixtures.product.componentCode,
      principalMinor: this.principalMinor,
      currency: this.currency,
      ratePercent: '5.25',
      numberOfDays: this.termDays,
      maturityDate: undefined,
      valueDate: this.valueDate,
      sourceAccount: fixtures.accounts.source,
      interestAccount: fixtures.accounts.interest,
      description: 'coregate conformance kit',
      ...terms,
    };
  }

  /** A valid installment payment of the fixtures' facility: one minor unit unless told. */
  installment(terms: Partial<LoanInstallmentExecution> = {}): LoanInstallmentExecution {
    const { facility, accounts } = this.fixtures;
    return {
      loanId: facility.loanId,
      sequence: facility.installment,
      loanType: facility.loanType,
      parameterType: facility.parameterType,
      maturityDate: undefined,
      amountMinor: 1n,
      currency: facility.currency,
      paymentAccount: accounts.source,
      expenseAccount: accounts.expense,
      ...terms,
    };
  }

  /**
   * The account a rule uses for `role`: with loaded fixtures one of the kit's own, used by that
   * rule alone (so that its balance can be drained); with a fixture file, the file's.
   */
  account(role: KitAccountRole): RuleAccount {
    const kit = this.fixtures.kit?.[role];
    if (kit) return { accountNumber: kit.accountNumber, openingMinor: kit.openingMinor };
    const { accounts } = this.fixtures;
    const fallback: Record<KitAccountRole, string | undefined> = {
      onceDeposit: accounts.source,
      oncePayment: accounts.source,
      onceExpense: accounts.expense,
      raceDeposit: accounts.source,
      racePayment: accounts.source,
      raceExpense: accounts.expense,
      lookup: accounts.source,
      fenceBefore: accounts.source,
      fenceRace: accounts.source,
      refusals: accounts.source,
      refusalPayment: accounts.source,
      refusalCharges: accounts.expense,
      refusalFinal: accounts.source,
      loadSide: accounts.source,
      endOfDaySource: accounts.source,
      endOfDayInterest: accounts.interest,
      poor: accounts.insufficient?.account,
    };
    return { accountNumber: fallback[role] ?? accounts.source, openingMinor: undefined };
  }

  /** Whether `date` is one of the core's weekend days (learned or given). */
  isWeekend(date: string): boolean {
    return this.weekend.days.includes(weekdayOf(date));
  }

  /** Whether `date` is a business day as far as the kit knows: not a weekend day, nor a holiday it saw the core refuse. */
  isBusinessDay(date: string): boolean {
    return this.#calendar.isBusinessDay(date);
  }

  /** The first weekend day on or after `date`. */
  weekendOnOrAfter(date: string): string {
    let day = date;
    for (let step = 0; step < 7 && !this.isWeekend(day); step += 1) day = addDays(day, 1);
    return day;
  }

  /** The last `count` days before `date` that are business days as far as the kit knows, latest first: a core's holiday among them is its own to know. */
  businessDaysBefore(date: string, count: number): string[] {
    const days: string[] = [];
    for (let day = addDays(date, -1), step = 0; days.length < count && step < 7 * count; day = addDays(day, -1), step += 1) {
      if (this.isBusinessDay(day)) days.push(day);
    }
    return days;
  }

  /** Starts watching accounts: what moved on them is proved later by `expectMoved`. */
  async watch(accounts: readonly RuleAccount[]): Promise<MoneyWatch> {
    const before = new Map<string, bigint>();
    if (this.records) {
      for (const account of accounts) {
        const found = await this.records.findAccount(account.accountNumber);
        if (!found) throw new RuleFailure(`the read side knows no account ${account.accountNumber}, which the rule moves money on`);
        before.set(account.accountNumber, found.balanceMinor);
      }
    }
    return new MoneyWatch(this, before);
  }

  /**
   * Proves that `account` holds exactly `expectedMinor` without a read side, once per account: a
   * deposit of one minor unit more is refused (insufficient funds), a deposit of exactly that is
   * executed. The account is empty afterwards.
   */
  async drain(account: RuleAccount, expectedMinor: bigint, what: string): Promise<void> {
    check(!this.#drained.has(account.accountNumber), `the kit drained account ${account.accountNumber} twice (a bug of the kit)`);
    this.#drained.add(account.accountNumber);
    const { minAmountMinor, maxAmountMinor } = this.fixtures.product;
    if (expectedMinor < minAmountMinor || expectedMinor + 1n > maxAmountMinor) {
      this.note(`${what}: not verified (the account should hold ${money(expectedMinor, this.currency)}, which no deposit within the product's limits proves)`);
      return;
    }
    const currency = this.currency;
    const above = expectedMinor + 1n;
    const more = await this.port.constituteTermDeposit(randomUUID(), this.deposit({ sourceAccount: account.accountNumber, principalMinor: above }));
    if (more.status === 'Executed') {
      throw new RuleFailure(`${what}: account ${account.accountNumber} should hold ${money(expectedMinor, currency)}, but a deposit of ${money(above, currency)} from it was executed: it holds more (money moved less than it should, or twice the other way)`);
    }
    rejectedWith(more, E.insufficientFundsSource, 'TD', `${what}: a deposit of ${money(above, currency)} from account ${account.accountNumber}, which should hold ${money(expectedMinor, currency)}`);
    const exact = await this.port.constituteTermDeposit(randomUUID(), this.deposit({ sourceAccount: account.accountNumber, principalMinor: expectedMinor }));
    if (exact.status !== 'Executed') {
      throw new RuleFailure(`${what}: account ${account.accountNumber} should hold ${money(expectedMinor, currency)}, but a deposit of exactly that from it answered ${describeOutcome(exact, 'TD')}: it holds less (money moved twice?)`);
    }
  }

  /** Runs `work`; a side the core does not serve (404 NO_ROUTE) is said as such. */
  async served<T>(work: () => Promise<T>): Promise<T | typeof notServed> {
    try {
      return await work();
    } catch (error) {
      if (error instanceof CoreSideNotServed) return notServed;
      throw error;
    }
  }
}

export const notServed = Symbol('notServed');

/** Balances read before a rule's work, to compare with after it. */
export class MoneyWatch {
  constructor(
    private readonly context: ConformanceContext,
    private readonly before: ReadonlyMap<string, bigint>,
  ) {}

  /**
   * Each account moved by the sum of its deltas: with a fixture file one account may play two
   * roles (the source that pays a deposit also pays an installment).
   */
  async expectMoves(moves: ReadonlyArray<readonly [account: RuleAccount, deltaMinor: bigint, what: string]>): Promise<void> {
    const byAccount = new Map<string, { account: RuleAccount; deltaMinor: bigint; what: string[] }>();
    for (const [account, deltaMinor, what] of moves) {
      const entry = byAccount.get(account.accountNumber);
      if (entry) {
        entry.deltaMinor += deltaMinor;
        entry.what.push(what);
      } else byAccount.set(account.accountNumber, { account, deltaMinor, what: [what] });
    }
    for (const { account, deltaMinor, what } of byAccount.values()) await this.expectMoved(account, deltaMinor, what.join(', and '));
  }

  /**
   * The account moved by exactly `deltaMinor` since the watch began: read from the read side, or
   * proved by draining one of the kit's own accounts; otherwise noted as not verified.
   */
  async expectMoved(account: RuleAccount, deltaMinor: bigint, what: string): Promise<void> {
    const { context } = this;
    const currency = context.currency;
    const before = this.before.get(account.accountNumber);
    if (context.records && before !== undefined) {
      const after = (await context.records.findAccount(account.accountNumber))?.balanceMinor;
      check(after !== undefined, `${what}: the read side no longer knows account ${account.accountNumber}`);
      const moved = after - before;
      check(moved === deltaMinor, `${what}: account ${account.accountNumber} moved by ${money(moved, currency)}, expected ${money(deltaMinor, currency)}`);
      return;
    }
    if (account.openingMinor !== undefined) {
      await context.drain(account, account.openingMinor + deltaMinor, what);
      return;
    }
    context.note(`${what}: not verified (the core serves no read side, and account ${account.accountNumber} is not one the kit loaded)`);
  }
}
