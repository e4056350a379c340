/**
 * Money to the cent and dates rolled past non-business days (docs/term-deposits.md "Decisions",
 * docs/loans.md "The execution"): the expected interest is principal × rate/100 × days / basis,
 * half-up; a loan's charges are commission = max(amount × rate, minimum), fee, tax = (commission +
 * fee) × rate, each half-up; a maturity from numberOfDays rolls forward to a business day. The kit
 * picks amounts whose exact result ends in half a minor unit, so that truncating or rounding to
 * even is caught; it reads no calendar, and learns the core's own from the maturities it refuses.
 */
import { randomUUID } from 'node:crypto';
import { addDays, daysBetween } from '../core/calendar-date.js';
import { errorCatalogue as E, type ErrorEntry } from '../core/error-catalogue.js';
import { chargesFor, type ChargeTerms } from '../core/loans/charges.js';
import { decimalOf } from '../core/money.js';
import { interestAtMaturityMinor, type DayCount } from '../core/term-deposits/interest.js';
import { check, describeOutcome, executed, money, rejectedWith, same } from './checks.js';
import type { ConformanceContext } from './conformance-context.js';
import { RuleSkipped } from './conformance-errors.js';
import type { ConformanceRule } from './conformance-rule.js';
import { describeWeekend } from './core-weekend.js';

/** Candidates searched for an amount whose exact result ends in half a minor unit. */
const searchMax = 400_000;
/** A maturity rolls past at most this many non-business days (a weekend and a long holiday). */
const rollDaysMax = 15;
const ratePercent = '5.25';

const basisOf: Record<DayCount, bigint> = { 'ACT/360': 360n, 'ACT/365': 365n };

/**
 * A principal from `low` whose interest over `days` ends in exactly half a minor unit (so half-up,
 * half-even and truncation all differ), else one that ends in more than half (half-up and
 * truncation differ), within `high`.
 */
export function principalEndingInHalf(low: bigint, high: bigint, days: number, dayCount: DayCount): { principalMinor: bigint; exactHalf: boolean } {
  const rate = decimalOf(ratePercent);
  if (!rate) throw new Error('the kit\'s rate is not a decimal');
  const denominator = 100n * 10n ** BigInt(rate.scale) * basisOf[dayCount];
  let aboveHalf: bigint | undefined;
  for (let principal = low, step = 0; principal <= high && step < searchMax; principal += 1n, step += 1) {
    const left = (principal * rate.digits * BigInt(days) * 2n) % (denominator * 2n);
    if (left === denominator) return { principalMinor: principal, exactHalf: true };
    if (aboveHalf === undefined && left > denominator) aboveHalf = principal;
  }
  return { principalMinor: aboveHalf ?? low, exactHalf: false };
}

/** An installment amount whose commission ends in exactly half a minor unit and is above the minimum (and whose tax does too, when one exists). */
export function amountEndingInHalf(terms: ChargeTerms, high: bigint): { amountMinor: bigint; exactHalf: boolean } {
  const rate = decimalOf(terms.commissionRate);
  if (!rate || rate.digits === 0n) return { amountMinor: 1n, exactHalf: false };
  const scale = 10n ** BigInt(rate.scale);
  // The smallest amount whose commission reaches the minimum.
  const low = (terms.minimumCommissionMinor * scale) / rate.digits + 1n;
  let commissionHalf: bigint | undefined;
  for (let amount = low, step = 0; amount <= high && step < searchMax; amount += 1n, step += 1) {
    if ((amount * rate.digits * 2n) % (scale * 2n) !== scale) continue;
    commissionHalf ??= amount;
    const { commissionMinor, feeMinor } = chargesFor(amount, terms);
    const tax = decimalOf(terms.taxRate);
    const taxScale = tax ? 10n ** BigInt(tax.scale) : 1n;
    if (tax && ((commissionMinor + feeMinor) * tax.digits * 2n) % (taxScale * 2n) === taxScale) return { amountMinor: amount, exactHalf: true };
  }
  return commissionHalf === undefined ? { amountMinor: low <= high ? low : 1n, exactHalf: false } : { amountMinor: commissionHalf, exactHalf: true };
}

/** A term from `context.termDays` on that ends on a business day as far as the kit knows: no roll, so the interest's days are known before the deposit. */
function unrolledTermDays(context: ConformanceContext): number {
  const { maxDays } = context.fixtures.product;
  for (let days = context.termDays; days <= maxDays && days < context.termDays + 14; days += 1) if (context.isBusinessDay(addDays(context.valueDate, days))) return days;
  return context.termDays;
}

export const moneyAndDateRules: ConformanceRule[] = [
  {
    id: 'money.interest',
    title: 'money to the cent: a deposit\'s expected interest is principal × rate/100 × days / basis (the product\'s ACT/360 or ACT/365), half-up to the minor unit, on a principal whose exact interest ends in half a minor unit',
    async run(context) {
      const { product } = context.fixtures;
      const days = unrolledTermDays(context);
      const high = product.maxAmountMinor < context.principalMinor + BigInt(searchMax) ? product.maxAmountMinor : context.principalMinor + BigInt(searchMax);
      const { principalMinor } = principalEndingInHalf(context.principalMinor, high, days, product.dayCount);
      const deposit = executed(await context.port.constituteTermDeposit(randomUUID(), context.deposit({ ratePercent, principalMinor, numberOfDays: days })), 'TD', 'a constitution');
      const expected = interestAtMaturityMinor(deposit.principalMinor, deposit.ratePercent, deposit.numberOfDays, product.dayCount);
      // The core rolled the maturity past a holiday of its own: the interest is checked on its days, exactly half or not.
      const { exactHalf } = principalEndingInHalf(principalMinor, principalMinor, deposit.numberOfDays, product.dayCount);
      check(
        deposit.expectedInterestMinor === expected,
        `the expected interest of ${money(deposit.principalMinor, deposit.currency)}${exactHalf ? ', exactly half a minor unit before rounding,' : ''}: ${money(deposit.principalMinor, deposit.currency)} × ${deposit.ratePercent} % × ${deposit.numberOfDays} / ${product.dayCount.slice(4)} is ${money(expected, deposit.currency)} half-up, the core answered ${money(deposit.expectedInterestMinor, deposit.currency)}`,
      );
      if (!exactHalf) context.note('no principal within the product\'s limits and the kit\'s search gives exactly half a minor unit: checked one above half');
      const retrieved = await context.port.retrieveTermDeposit(deposit.contractNumber);
      same(retrieved?.expectedInterestMinor, deposit.expectedInterestMinor, 'the retrieve\'s expected interest');
    },
  },
  {
    id: 'money.loan-charges',
    title: 'money to the cent: commission = max(amount × rate, minimum), fee, tax = (commission + fee) × rate, each half-up, on an amount whose commission ends in half a minor unit and on one minor unit (the minimum); a partial payment is PartiallyExecuted, the whole outstanding (amount omitted) Executed',
    async run(context) {
      const { facility } = context.fixtures;
      const terms: ChargeTerms = facility.charges;
      const expect = (paid: { amountMinor: bigint; commissionMinor: bigint; feeMinor: bigint; taxMinor: bigint; currency: string }, what: string) => {
        const charges = chargesFor(paid.amountMinor, terms);
        const got = { commission: paid.commissionMinor, fee: paid.feeMinor, tax: paid.taxMinor };
        const wanted = { commission: charges.commissionMinor, fee: charges.feeMinor, tax: charges.taxMinor };
        const wrong = (Object.keys(wanted) as Array<keyof typeof wanted>).filter((name) => got[name] !== wanted[name]);
        check(
          wrong.length === 0,
          `${what} (${money(paid.amountMinor, facility.currency)} at commission ${terms.commissionRate}, minimum ${money(terms.minimumCommissionMinor, facility.currency)}, fee ${money(terms.fixedFeeMinor, facility.currency)}, tax ${terms.taxRate}): ` +
            wrong.map((name) => `${name} ${money(got[name], facility.currency)}, expected ${money(wanted[name], facility.currency)}`).join('; '),
        );
      };
      const { amountMinor, exactHalf } = amountEndingInHalf(terms, 1_000_000n);
      const partialOutcome = await context.port.executeLoanInstallment(randomUUID(), context.installment({ amountMinor }));
      if (context.fixtures.origin === 'file' && partialOutcome.status === 'Rejected' && (await unaffordable(context, partialOutcome.refusal.entry, amountMinor))) {
        // A fixture file's installment is the bank's, paid down run after run (docs/conformance.md, "What a run consumes").
        context.note(`the charges of ${money(amountMinor, facility.currency)}, the smallest amount whose commission ends in half a minor unit: not checked (${describeOutcome(partialOutcome, 'ML')}: the fixture file's installment ${facility.installment} no longer covers it)`);
      } else {
        const partial = executed(partialOutcome, 'ML', 'a partial payment');
        same(partial.amountMinor, amountMinor, 'the amount paid');
        expect(partial, `the charges of a commission ${exactHalf ? 'ending in half a minor unit' : 'above the minimum'}`);
        same(partial.facilityStatus, 'PartiallyExecuted', 'a partial payment\'s facilityStatus');
      }

      const small = executed(await context.port.executeLoanInstallment(randomUUID(), context.installment({ amountMinor: 1n })), 'ML', 'a payment of one minor unit');
      expect(small, 'the minimum commission');
      same(small.facilityStatus, 'PartiallyExecuted', 'a payment of one minor unit: facilityStatus');

      const payOff = context.fixtures.payOffInstallment;
      if (payOff === undefined) {
        context.note('the whole outstanding (amount omitted) is not paid: the fixtures name no facility.payOffInstallment');
        return;
      }
      const whole = executed(await context.port.executeLoanInstallment(randomUUID(), context.installment({ sequence: payOff, amountMinor: undefined, currency: undefined })), 'ML', 'the whole outstanding');
      same(whole.facilityStatus, 'Executed', 'paying the whole outstanding: facilityStatus');
      check(whole.amountMinor > 0n, 'paying the whole outstanding paid nothing');
      expect(whole, 'the charges of the whole outstanding');
      // The amount omitted again: nothing is outstanding, so installmentPaid is the one rule it breaks.
      rejectedWith(await context.port.executeLoanInstallment(randomUUID(), context.installment({ sequence: payOff, amountMinor: undefined, currency: undefined })), E.installmentPaid, 'ML', 'paying it again');
    },
  },
  {
    id: 'dates.maturity-roll',
    title: 'dates: a maturity from numberOfDays that falls on a non-business day rolls forward to the next business day, numberOfDays counts the days to it, and an explicit maturity on a business day is kept',
    async run(context) {
      const { product } = context.fixtures;
      const from = context.valueDate;
      const weekend = context.weekendOnOrAfter(addDays(from, product.minDays));
      const days = daysBetween(from, weekend);
      if (!context.isWeekend(weekend) || days + rollDaysMax > product.maxDays) {
        throw new RuleSkipped(`no weekend day within the product's ${product.minDays}-${product.maxDays} days from ${from} (${describeWeekend(context.weekend)})`);
      }
      const rolled = executed(await context.port.constituteTermDeposit(randomUUID(), context.deposit({ numberOfDays: days })), 'TD', `a constitution of ${days} days, ending on ${weekend} (a weekend day)`);
      const maturity = rolled.maturityDate;
      check(maturity !== weekend, `${from} + ${days} days is ${weekend}, a weekend day: the maturity must roll forward to a business day, the core kept ${maturity}`);
      check(maturity > weekend, `${from} + ${days} days is ${weekend}: the maturity rolls forward, the core answered ${maturity}, before it`);
      check(daysBetween(weekend, maturity) <= rollDaysMax, `the maturity ${maturity} is more than ${rollDaysMax} days after ${weekend}`);
      check(!context.isWeekend(maturity), `the rolled maturity ${maturity} is a weekend day`);
      same(rolled.numberOfDays, daysBetween(from, maturity), `numberOfDays: the days from ${from} to the rolled maturity ${maturity}`);
      // Every day it rolled past is one the core itself refuses as a maturity: its own calendar agrees.
      for (let day = weekend; day < maturity; day = addDays(day, 1)) {
        const outcome = await context.port.constituteTermDeposit(randomUUID(), context.deposit({ numberOfDays: undefined, maturityDate: day }));
        check(outcome.status === 'Rejected', `the core rolled the maturity past ${day}, yet accepts it as an explicit maturity: ${describeOutcome(outcome, 'TD')}`);
        rejectedWith(outcome, E.maturityNotBusinessDay, 'TD', `an explicit maturity on ${day}, a day the maturity rolled past`);
      }
      const kept = executed(await context.port.constituteTermDeposit(randomUUID(), context.deposit({ numberOfDays: undefined, maturityDate: maturity })), 'TD', `an explicit maturity on ${maturity}`);
      same(kept.maturityDate, maturity, 'an explicit maturity on a business day is kept');
      same(kept.numberOfDays, daysBetween(from, maturity), 'numberOfDays of an explicit maturity');
    },
  },
];

/**
 * Whether a refusal of a fixture file's payment says the file's records are used up rather than a
 * rule broken: above the outstanding, the approved limit, the payment account's funds — checked
 * against the read side when the core serves it.
 */
async function unaffordable(context: ConformanceContext, entry: ErrorEntry, amountMinor: bigint): Promise<boolean> {
  if (entry !== E.amountAboveOutstanding && entry !== E.approvedLimitExceeded && entry !== E.insufficientFundsPayment) return false;
  const { records, fixtures } = context;
  if (!records) return true;
  const facility = (await records.listLoanFacilities({ loanId: fixtures.facility.loanId }, { limit: 1, offset: 0 })).items[0];
  const installment = facility?.installments.find((candidate) => candidate.sequence === fixtures.facility.installment);
  if (!facility || !installment) return false;
  if (entry === E.amountAboveOutstanding) return installment.amountMinor - installment.paidMinor < amountMinor;
  if (entry === E.approvedLimitExceeded) return facility.executedTotalMinor + amountMinor > facility.approvedLimitMinor;
  const payment = await records.findAccount(fixtures.accounts.source);
  return payment !== undefined && payment.balanceMinor < amountMinor;
}
