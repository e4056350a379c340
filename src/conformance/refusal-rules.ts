/**
 * Refusals are values (docs/core-port.md, "Refusals"): every business rule a core checks answers
 * `Rejected` with the catalogue entry of its family — a term deposit's `TD-...`, a loan's `ML-...`
 * (docs/errors.md) — moves nothing, and is final for its reference.
 *
 * A core may check its rules in any order (docs/core-protocol.md, "Outcomes": the API accepts any
 * refusal of the tables), so each case is built to break one rule only, and the kit never relies
 * on the reference core's order. Where the fixtures cannot make a case break one rule only (an
 * unknown customer's accounts are not its own either), the case accepts every refusal that applies
 * and says why. A case whose record the fixtures do not name is left out and said so.
 */
import { randomUUID } from 'node:crypto';
import { addDays, daysBetween } from '../core/calendar-date.js';
import { errorCatalogue as E, type ErrorEntry, type Family } from '../core/error-catalogue.js';
import type { LoanInstallmentExecution } from '../core/loans/execution-request.js';
import type { CoreLookup, CoreOutcome } from '../core/port.js';
import type { TermDepositInitiation } from '../core/term-deposits/initiation.js';
import { check, describeOutcome, rejectedWith, refusalName, same } from './checks.js';
import type { ConformanceContext, RuleAccount } from './conformance-context.js';
import { RuleFailure } from './conformance-errors.js';
import type { ConformanceRule } from './conformance-rule.js';

/** A command that breaks one rule (or, when the fixtures cannot do better, several: `also`, and why). */
interface BreakingCase<C> {
  /** The broken rule, in words. */
  rule: string;
  entry: ErrorEntry;
  /** Refusals that apply as well, which the core may answer instead. */
  also?: { entries: readonly ErrorEntry[]; why: string } | undefined;
  command: C;
  /** Commands tried next, in turn, while the core answers `on`: a holiday of its own the kit cannot know. */
  retries?: { on: ErrorEntry; commands: readonly C[] } | undefined;
}

/** A case the fixtures name no record for. */
interface MissingCase {
  rule: string;
  missing: string;
}

type RefusalCase<C> = BreakingCase<C> | MissingCase;

const unknown = (kind: string) => `CK-NO-SUCH-${kind}-${randomUUID().slice(0, 8)}`;
/** Currencies a product is unlikely to offer, for the currency refusal. */
const otherCurrencies = ['GBP', 'JPY', 'CHF', 'SEK', 'NOK'];
/** Days before the business date tried for a value date before it: the core's holidays are its own. */
const daysBeforeTried = 3;
/** Terms tried for two business days in a row (the term mismatch). */
const termTriesMax = 14;
/** An amount above any installment's outstanding, when the kit cannot read the outstanding. */
const aboveAnyOutstandingMinor = 10_000_000_000_000n;

function depositCases(context: ConformanceContext, source: string): Array<RefusalCase<TermDepositInitiation>> {
  const { fixtures, valueDate } = context;
  const { product, accounts } = fixtures;
  const deposit = (terms: Partial<TermDepositInitiation>) => context.deposit({ sourceAccount: source, ...terms });
  const weekendValueDate = context.weekendOnOrAfter(valueDate);
  const weekendMaturity = context.weekendOnOrAfter(addDays(valueDate, product.minDays));
  const maturityDays = daysBetween(valueDate, weekendMaturity);
  const otherOffered = product.currencies.find((currency) => currency !== context.currency);
  const notOffered = otherCurrencies.find((currency) => !product.currencies.includes(currency)) ?? 'XAU';
  const before = context.businessDaysBefore(context.businessDate, daysBeforeTried);
  const noWeekend = context.weekend.days.length === 0 ? 'the core has no weekend day' : undefined;
  // Two business days in a row, the first valueDate + days: that many days end on the first, never on the second.
  let mismatchDays: number | undefined;
  for (let days = context.termDays, step = 0; step < termTriesMax && days + 1 <= product.maxDays; days += 1, step += 1) {
    if (context.isBusinessDay(addDays(valueDate, days)) && context.isBusinessDay(addDays(valueDate, days + 1))) {
      mismatchDays = days;
      break;
    }
  }
  return [
    {
      rule: 'an unknown customer',
      entry: E.customerNotFound,
      also: { entries: [E.accountNotCustomers], why: 'its accounts are not an unknown customer\'s either' },
      command: deposit({ customerReference: unknown('CUSTOMER') }),
    },
    { rule: 'an unknown source account', entry: E.sourceAccountNotFound, command: deposit({ sourceAccount: unknown('ACCOUNT') }) },
    { rule: 'an unknown interest settlement account', entry: E.interestAccountNotFound, command: deposit({ interestAccount: unknown('ACCOUNT') }) },
    fixtures.blockedCustomer
      ? {
          rule: 'a customer that is not active',
          entry: E.customerBlocked,
          command: deposit({ customerReference: fixtures.blockedCustomer.customer, sourceAccount: fixtures.blockedCustomer.account, interestAccount: fixtures.blockedCustomer.account }),
        }
      : { rule: 'a customer that is not active', missing: 'the fixtures name no blockedCustomer' },
    { rule: 'an unknown product', entry: E.productNotAvailable, command: deposit({ productCode: unknown('PRODUCT') }) },
    fixtures.inactiveProduct
      ? {
          rule: 'an inactive product',
          entry: E.productNotAvailable,
          also: fixtures.inactiveProduct.open
            ? undefined
            : { entries: [E.currencyNotOffered, E.amountOutsideProductLimits, E.termOutsideProductLimits], why: 'the fixture file gives the inactive product\'s codes only: its own currencies, amounts and days may refuse the deposit too' },
          command: deposit({ productCode: fixtures.inactiveProduct.productCode, componentCode: fixtures.inactiveProduct.componentCode }),
        }
      : { rule: 'an inactive product', missing: 'the fixtures name no inactiveProduct' },
    accounts.notOffered
      ? {
          rule: `a currency the product does not offer (${accounts.notOffered.currency}), from an account in it`,
          entry: E.currencyNotOffered,
          command: deposit({ currency: accounts.notOffered.currency, sourceAccount: accounts.notOffered.account }),
        }
      : {
          rule: `a currency the product does not offer (${notOffered})`,
          entry: E.currencyNotOffered,
          also: { entries: [E.currencyMismatchSource], why: 'the fixtures name no account in a currency the product does not offer, so the source account\'s currency differs too' },
          command: deposit({ currency: notOffered }),
        },
    product.minAmountMinor > 1n
      ? { rule: 'a principal below the product\'s minimum', entry: E.amountOutsideProductLimits, command: deposit({ principalMinor: product.minAmountMinor - 1n }) }
      : {
          rule: 'a principal above the product\'s maximum',
          entry: E.amountOutsideProductLimits,
          also: { entries: [E.insufficientFundsSource], why: 'the product has no minimum to go below, and the source account may not hold its maximum' },
          command: deposit({ principalMinor: product.maxAmountMinor + 1n }),
        },
    { rule: 'a term beyond the product\'s maximum days', entry: E.termOutsideProductLimits, command: deposit({ numberOfDays: Math.min(product.maxDays + 10, 36_600) }) },
    accounts.blocked
      ? { rule: 'a source account that is not active', entry: E.accountNotActive, command: deposit({ sourceAccount: accounts.blocked }) }
      : { rule: 'a source account that is not active', missing: 'the fixtures name no accounts.blocked' },
    accounts.otherCustomers
      ? { rule: 'another customer\'s source account', entry: E.accountNotCustomers, command: deposit({ sourceAccount: accounts.otherCustomers }) }
      : { rule: 'another customer\'s source account', missing: 'the fixtures name no accounts.otherCustomers' },
    otherOffered
      ? { rule: `a principal in ${otherOffered} from a ${context.currency} account`, entry: E.currencyMismatchSource, command: deposit({ currency: otherOffered }) }
      : { rule: 'a principal in another currency the product offers', missing: 'the fixtures name one currency in product.currencies' },
    noWeekend
      ? { rule: 'a value date on a weekend day', missing: noWeekend }
      : { rule: `a value date on a weekend day (${weekendValueDate})`, entry: E.valueDateNotBusinessDay, command: deposit({ valueDate: weekendValueDate }) },
    before[0] === undefined
      ? { rule: 'a value date before the business date', missing: 'no business day in the week before the business date' }
      : {
          rule: `a value date before the business date (${before[0]}, a business day)`,
          entry: E.valueDateBeforeBusinessDate,
          command: deposit({ valueDate: before[0] }),
          retries: { on: E.valueDateNotBusinessDay, commands: before.slice(1).map((date) => deposit({ valueDate: date })) },
        },
    noWeekend
      ? { rule: 'an explicit maturity on a weekend day', missing: noWeekend }
      : {
          rule: `an explicit maturity on a weekend day (${weekendMaturity})`,
          entry: E.maturityNotBusinessDay,
          also: maturityDays > product.maxDays ? { entries: [E.termOutsideProductLimits], why: `no weekend day lies within the product's ${product.maxDays} days` } : undefined,
          command: deposit({ numberOfDays: undefined, maturityDate: weekendMaturity }),
        },
    mismatchDays === undefined
      ? { rule: 'numberOfDays and a maturityDate that disagree', missing: `no term of the product's ${product.minDays}-${product.maxDays} days ends on two business days in a row` }
      : {
          rule: `numberOfDays ${mismatchDays} and a maturityDate the day after (${addDays(valueDate, mismatchDays + 1)}), both business days`,
          entry: E.termMismatch,
          command: deposit({ numberOfDays: mismatchDays, maturityDate: addDays(valueDate, mismatchDays + 1) }),
        },
    accounts.insufficient
      ? { rule: 'a principal the source account cannot cover', entry: E.insufficientFundsSource, command: deposit({ sourceAccount: accounts.insufficient.account, principalMinor: accounts.insufficient.amountMinor }) }
      : { rule: 'a principal the source account cannot cover', missing: 'the fixtures name no accounts.insufficient' },
  ];
}

/** Above the installment's outstanding, and nothing else: the kit's own installment, or the outstanding read from the read side. */
async function aboveOutstandingCase(context: ConformanceContext, pay: (terms: Partial<LoanInstallmentExecution>) => LoanInstallmentExecution): Promise<BreakingCase<LoanInstallmentExecution>> {
  const { fixtures, records } = context;
  const rule = 'an amount above the installment\'s outstanding';
  if (fixtures.smallInstallment) {
    const { installment, outstandingMinor } = fixtures.smallInstallment;
    return { rule: `${rule} (installment ${installment})`, entry: E.amountAboveOutstanding, command: pay({ sequence: installment, amountMinor: outstandingMinor + 1n }) };
  }
  const facility = records ? (await records.listLoanFacilities({ loanId: fixtures.facility.loanId }, { limit: 1, offset: 0 })).items[0] : undefined;
  const installment = facility?.installments.find((candidate) => candidate.sequence === fixtures.facility.installment);
  const payment = records ? await records.findAccount(fixtures.accounts.source) : undefined;
  if (facility && installment && payment) {
    const amountMinor = installment.amountMinor - installment.paidMinor + 1n;
    const within = facility.executedTotalMinor + amountMinor <= facility.approvedLimitMinor && payment.balanceMinor >= amountMinor;
    if (within) return { rule: `${rule} (installment ${installment.sequence}, read from the read side)`, entry: E.amountAboveOutstanding, command: pay({ amountMinor }) };
  }
  return {
    rule,
    entry: E.amountAboveOutstanding,
    also: { entries: [E.approvedLimitExceeded, E.insufficientFundsPayment], why: 'the kit cannot read the installment\'s outstanding with the approved limit and the payment account\'s balance above it, so it pays more than any installment' },
    command: pay({ amountMinor: aboveAnyOutstandingMinor }),
  };
}

async function loanCases(context: ConformanceContext, payment: string, expense: string): Promise<Array<RefusalCase<LoanInstallmentExecution>>> {
  const { fixtures } = context;
  const { facility, accounts } = fixtures;
  const pay = (terms: Partial<LoanInstallmentExecution>) => context.installment({ paymentAccount: payment, expenseAccount: expense, ...terms });
  const otherCurrency = facility.currency === 'EUR' ? 'USD' : 'EUR';
  const reserved = 'LetterOfCredit';
  return [
    { rule: 'an unknown facility', entry: E.facilityNotFound, command: pay({ loanId: unknown('FACILITY') }) },
    { rule: 'an unknown installment', entry: E.installmentNotFound, command: pay({ sequence: 999_999 }) },
    { rule: 'an unknown payment account', entry: E.paymentAccountNotFound, command: pay({ paymentAccount: unknown('ACCOUNT') }) },
    { rule: 'an unknown expense account', entry: E.expenseAccountNotFound, command: pay({ expenseAccount: unknown('ACCOUNT') }) },
    { rule: 'a loan maturity after the facility\'s final maturity', entry: E.maturityAfterFinalMaturity, command: pay({ maturityDate: addDays(facility.finalMaturityDate, 1) }) },
    fixtures.closedFacility
      ? { rule: 'a facility that is not active', entry: E.facilityClosed, command: pay({ loanId: fixtures.closedFacility.loanId, sequence: fixtures.closedFacility.installment }) }
      : { rule: 'a facility that is not active', missing: 'the fixtures name no closedFacility' },
    fixtures.paidInstallment !== undefined
      ? // The amount omitted: the whole outstanding, which is nothing, so no amount is above it.
        { rule: 'an installment paid in full (the amount omitted)', entry: E.installmentPaid, command: pay({ sequence: fixtures.paidInstallment, amountMinor: undefined, currency: undefined }) }
      : { rule: 'an installment paid in full', missing: 'the fixtures name no facility.paidInstallment' },
    fixtures.reservedFacility
      ? {
          rule: `a reserved parameter type (${fixtures.reservedFacility.parameterType}), the facility's own`,
          entry: E.parameterTypeNotSupported,
          command: pay({ loanId: fixtures.reservedFacility.loanId, sequence: fixtures.reservedFacility.installment, parameterType: fixtures.reservedFacility.parameterType }),
        }
      : {
          rule: `a reserved parameter type (${reserved})`,
          entry: E.parameterTypeNotSupported,
          also: facility.parameterType === reserved ? undefined : { entries: [E.parameterTypeMismatch], why: `the fixtures name no facility of a reserved parameter type, so ${reserved} is not the facility's either` },
          command: pay({ parameterType: reserved }),
        },
    { rule: 'another parameter type than the facility\'s', entry: E.parameterTypeMismatch, command: pay({ parameterType: facility.parameterType === 'CKOther' ? 'CKOther2' : 'CKOther' }) },
    { rule: 'another loan type than the facility\'s', entry: E.loanTypeMismatch, command: pay({ loanType: facility.loanType === 'XXXX' ? 'YYYY' : 'XXXX' }) },
    { rule: `an amount in ${otherCurrency}, not the facility's currency`, entry: E.loanCurrencyMismatch, command: pay({ currency: otherCurrency }) },
    accounts.blocked
      ? { rule: 'a payment account that is not active', entry: E.loanAccountNotActive, command: pay({ paymentAccount: accounts.blocked }) }
      : { rule: 'a payment account that is not active', missing: 'the fixtures name no accounts.blocked' },
    accounts.otherCustomers
      ? { rule: 'another customer\'s payment account', entry: E.loanAccountNotCustomers, command: pay({ paymentAccount: accounts.otherCustomers }) }
      : { rule: 'another customer\'s payment account', missing: 'the fixtures name no accounts.otherCustomers' },
    await aboveOutstandingCase(context, pay),
    fixtures.limitedFacility
      ? {
          rule: 'an execution above the facility\'s approved limit',
          entry: E.approvedLimitExceeded,
          command: pay({ loanId: fixtures.limitedFacility.loanId, sequence: fixtures.limitedFacility.installment, amountMinor: fixtures.limitedFacility.amountMinor }),
        }
      : { rule: 'an execution above the facility\'s approved limit', missing: 'a facility with a small approved limit is in the kit\'s own fixtures only' },
    accounts.insufficient
      ? { rule: 'a payment account that cannot cover the amount', entry: E.insufficientFundsPayment, command: pay({ paymentAccount: accounts.insufficient.account, amountMinor: accounts.insufficient.amountMinor }) }
      : { rule: 'a payment account that cannot cover the amount', missing: 'the fixtures name no accounts.insufficient' },
    fixtures.kit
      ? { rule: 'an expense account that cannot cover the charges', entry: E.insufficientFundsExpense, command: pay({ expenseAccount: fixtures.kit.poor.accountNumber }) }
      : { rule: 'an expense account that cannot cover the charges', missing: 'an account holding less than the charges is in the kit\'s own fixtures only' },
  ];
}

type Answer = CoreOutcome<unknown> | CoreLookup<unknown>;

/**
 * Sends every case; collects every wrong answer rather than stopping at the first, so that one run
 * lists all of a core's refusals to mend. `send` answers the outcome of one command.
 */
async function checkCases<C>(context: ConformanceContext, family: Family, cases: Array<RefusalCase<C>>, send: (reference: string, command: C) => Promise<Answer>): Promise<void> {
  const wrong: string[] = [];
  const missing: string[] = [];
  let sent = 0;
  for (const refusal of cases) {
    if ('missing' in refusal) {
      missing.push(`${refusal.rule} (${refusal.missing})`);
      continue;
    }
    sent += 1;
    let outcome = await send(randomUUID(), refusal.command);
    for (const next of refusal.retries?.commands ?? []) {
      if (outcome.status !== 'Rejected' || outcome.refusal.entry !== refusal.retries?.on) break;
      outcome = await send(randomUUID(), next);
    }
    const accepted = [refusal.entry, ...(refusal.also?.entries ?? [])];
    const expected = `Rejected ${accepted.map((entry) => refusalName(entry, family)).join(' or ')}${refusal.also ? ` (all apply: ${refusal.also.why})` : ''}`;
    if (outcome.status !== 'Rejected' || !accepted.includes(outcome.refusal.entry)) {
      wrong.push(`${refusal.rule}: expected ${expected}, got ${describeOutcome(outcome, family)}`);
    } else if (outcome.refusal.message.length === 0) {
      wrong.push(`${refusal.rule}: ${refusalName(outcome.refusal.entry, family)} says no reason (an empty message)`);
    }
  }
  if (missing.length > 0) context.note(`not checked: ${missing.join('; ')}`);
  if (wrong.length > 0) throw new RuleFailure(`${wrong.length} of ${sent} refusals are wrong:\n${wrong.map((line) => `  - ${line}`).join('\n')}`);
}

/** Nothing moved on `accounts`: read from the read side, or proved by draining the kit's own; otherwise said not verified. */
async function nothingMoved(context: ConformanceContext, accounts: readonly RuleAccount[], work: () => Promise<void>): Promise<void> {
  const watch = await context.watch(accounts);
  await work();
  for (const account of accounts) await watch.expectMoved(account, 0n, `no refusal moves money on account ${account.accountNumber}`);
}

/** The kit's account that cannot pay, in both families' cases: watched once, by the loan rule, when the kit must drain it (no read side). */
function poorAccount(context: ConformanceContext): RuleAccount[] {
  return context.fixtures.accounts.insufficient ? [context.account('poor')] : [];
}

const oneRuleOnly =
  'each case breaks one rule only, as a core may check its rules in any order; where the fixtures cannot make it so (an unknown customer\'s accounts are not its own either), every refusal that applies is accepted';

export const refusalRules: ConformanceRule[] = [
  {
    id: 'refusals.term-deposit',
    title: `refusals are values: every rule a term deposit breaks is Rejected with its catalogue name and its TD- code (e.g. insufficientFundsSource TD-422-002), and nothing moves; ${oneRuleOnly}`,
    async run(context) {
      const source = context.account('refusals');
      const watched = context.records ? [source, ...poorAccount(context)] : [source];
      await nothingMoved(context, watched, () =>
        checkCases(context, 'TD', depositCases(context, source.accountNumber), (reference, command) => context.port.constituteTermDeposit(reference, command)),
      );
    },
  },
  {
    id: 'refusals.loan',
    title: `refusals are values: every rule a loan installment payment breaks is Rejected with its catalogue name and its ML- code (e.g. insufficientFundsPayment ML-422-007), and nothing moves; ${oneRuleOnly}`,
    async run(context) {
      const payment = context.account('refusalPayment');
      const expense = context.account('refusalCharges');
      const watched = payment.accountNumber === expense.accountNumber ? [payment] : [payment, expense];
      const cases = await loanCases(context, payment.accountNumber, expense.accountNumber);
      // The account that cannot pay took part in both families' refusals (and in learning the weekend): it still holds what it was loaded with.
      await nothingMoved(context, [...watched, ...poorAccount(context).filter((poor) => !watched.some((account) => account.accountNumber === poor.accountNumber))], () =>
        checkCases(context, 'ML', cases, (reference, command) => context.port.executeLoanInstallment(reference, command)),
      );
    },
  },
  {
    id: 'refusals.final',
    title: 'a refusal is final for its reference: the same reference with a valid command answers the same refusal and moves nothing (term deposits and loan installments)',
    async run(context) {
      const { port } = context;
      const account = context.account('refusalFinal');
      await nothingMoved(context, [account], async () => {
        const reference = randomUUID();
        const deposit = (terms: Partial<TermDepositInitiation> = {}) => context.deposit({ sourceAccount: account.accountNumber, ...terms });
        const first = rejectedWith(await port.constituteTermDeposit(reference, deposit({ sourceAccount: unknown('ACCOUNT') })), E.sourceAccountNotFound, 'TD', 'a constitution from an unknown source account');
        const again = await port.constituteTermDeposit(reference, deposit());
        check(again.status === 'Rejected', `the same reference with a valid command: expected the refusal again, got ${describeOutcome(again, 'TD')} (a refusal is final for its reference)`);
        same(rejectedWith(again, E.sourceAccountNotFound, 'TD', 'the same reference with a valid command').message, first.message, 'the refusal\'s message again');

        const loanReference = randomUUID();
        const pay = (terms: Partial<LoanInstallmentExecution> = {}) => context.installment({ paymentAccount: account.accountNumber, expenseAccount: account.accountNumber, ...terms });
        const loanFirst = rejectedWith(await port.executeLoanInstallment(loanReference, pay({ sequence: 999_999 })), E.installmentNotFound, 'ML', 'a payment of an unknown installment');
        const loanAgain = await port.executeLoanInstallment(loanReference, pay());
        check(loanAgain.status === 'Rejected', `the same loan reference with a valid command: expected the refusal again, got ${describeOutcome(loanAgain, 'ML')}`);
        same(rejectedWith(loanAgain, E.installmentNotFound, 'ML', 'the same loan reference with a valid command').message, loanFirst.message, 'the loan refusal\'s message again');
      });
    },
  },
];
