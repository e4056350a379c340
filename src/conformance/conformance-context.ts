/**
 * What every rule of the kit works with (docs/conformance.md): the port under test, the sides it
 * serves, the fixtures, the core's business date and a value date it accepts, the exchange log,
 * and the ways to prove what money moved — the read side when the core serves it, otherwise
 * draining one of the kit's own single-use accounts.
 */
import { randomUUID } from 'node:crypto';
import type { Weekday } from '../core/business-calendar.js';
import { weekdays } from '../core/business-calendar.js';
import { addDays, toEpochDay } from '../core/calendar-date.js';
import type { Clock } from '../core/clock.js';
import { errorCatalogue as E } from '../core/error-catalogue.js';
import type { LoanInstallmentExecution } from '../core/loans/execution-request.js';
import { CoreSideNotServed, type CoreBankingPort, type CoreDataDocument, type CoreDataLoad, type CoreRecords } from '../core/port.js';
import type { TermDepositInitiation } from '../core/term-deposits/initiation.js';
import { check, describeOutcome, money, rejectedWith } from './checks.js';
import { RuleFailure } from './conformance-errors.js';
import type { ConformanceFixtures, KitAccountRole } from './conformance-fixtures.js';
import type { ExchangeLog } from './exchange-log.js';
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
  advance: boolean;
  wire: WireClient | undefined;
  exchanges: ExchangeLog;
  clock: Clock;
}

export class ConformanceContext {
  readonly port: CoreBankingPort;
  readonly records: CoreRecords | undefined;
  readonly dataLoad: CoreDataLoad | undefined;
  readonly fixtures: ConformanceFixtures;
  readonly loaded: CoreDataDocument | undefined;
  /** The core's business date when the kit started. */
  readonly businessDate: string;
  #valueDate: string;
  readonly advance: boolean;
  readonly wire: WireClient | undefined;
  readonly exchanges: ExchangeLog;
  readonly clock: Clock;
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
    this.advance = parts.advance;
    this.wire = parts.wire;
    this.exchanges = parts.exchanges;
    this.clock = parts.clock;
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

  /** A principal the product allows, for deposits whose amount is not the point. */
  get principalMinor(): bigint {
    const { minAmountMinor, maxAmountMinor } = this.fixtures.product;
    const wanted = 100_000n;
    return wanted < minAmountMinor ? minAmountMinor : wanted > maxAmountMinor ? maxAmountMinor : wanted;
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

  /** A valid installment payment of the fixtures' facility (a small partial amount unless told). */
  installment(terms: Partial<LoanInstallmentExecution> = {}): LoanInstallmentExecution {
    const { facility, accounts } = this.fixtures;
    return {
      loanId: facility.loanId,
      sequence: facility.installment,
      loanType: facility.loanType,
      parameterType: facility.parameterType,
      maturityDate: undefined,
      amountMinor: 100n,
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
      loadSide: accounts.source,
      endOfDaySource: accounts.source,
      endOfDayInterest: accounts.interest,
      poor: accounts.insufficient?.account,
    };
    return { accountNumber: fallback[role] ?? accounts.source, openingMinor: undefined };
  }

  /** Whether `date` is one of the fixtures' weekend days. */
  isWeekend(date: string): boolean {
    return this.fixtures.weekend.includes(weekdayOf(date));
  }

  /** The first weekend day on or after `date`. */
  weekendOnOrAfter(date: string): string {
    let day = date;
    for (let step = 0; step < 7 && !this.isWeekend(day); step += 1) day = addDays(day, 1);
    return day;
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
    const above = expectedMinor + 1n > minAmountMinor ? expectedMinor + 1n : minAmountMinor;
    if (above > maxAmountMinor) {
      this.note(`${what}: not proved (more than the product's maximum principal to drain)`);
      return;
    }
    const currency = this.currency;
    const more = await this.port.constituteTermDeposit(randomUUID(), this.deposit({ sourceAccount: account.accountNumber, principalMinor: above }));
    if (more.status === 'Executed') {
      throw new RuleFailure(`${what}: account ${account.accountNumber} should hold ${money(expectedMinor, currency)}, but a deposit of ${money(above, currency)} from it was executed: it holds more (money moved less than it should, or twice the other way)`);
    }
    rejectedWith(more, E.insufficientFundsSource, 'TD', `${what}: a deposit of ${money(above, currency)} from account ${account.accountNumber}, which should hold ${money(expectedMinor, currency)}`);
    if (expectedMinor < minAmountMinor) return;
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

/** A calendar date's weekday. */
export function weekdayOf(date: string): Weekday {
  return weekdays[(((toEpochDay(date) + 4) % 7) + 7) % 7] as Weekday; // 1970-01-01 was a Thursday.
}
