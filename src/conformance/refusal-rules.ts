/**
 * Refusals are values (docs/core-port.md, "Refusals"): every business rule a core checks answers
 * `Rejected` with the catalogue entry of its family — a term deposit's `TD-...`, a loan's `ML-...`
 * (docs/errors.md) — moves nothing, and is final for its reference. Each case needs a record that
 * breaks one rule; a case whose record the fixtures do not name is left out and said so.
 */
import { randomUUID } from 'node:crypto';
import { addDays } from '../core/calendar-date.js';
import { errorCatalogue as E, type ErrorEntry, type Family } from '../core/error-catalogue.js';
import type { LoanInstallmentExecution } from '../core/loans/execution-request.js';
import type { TermDepositInitiation } from '../core/term-deposits/initiation.js';
import { check, describeOutcome, rejectedWith, refusalName, same } from './checks.js';
import type { ConformanceContext } from './conformance-context.js';
import { RuleFailure } from './conformance-errors.js';
import type { ConformanceRule } from './conformance-rule.js';

interface RefusalCase<C> {
  /** The broken rule, in words. */
  rule: string;
  entry: ErrorEntry;
  /** The command that breaks it, or why the fixtures cannot make one. */
  command: C | { missing: string };
}

const unknown = (kind: string) => `CK-NO-SUCH-${kind}-${randomUUID().slice(0, 8)}`;
/** Currencies a product is unlikely to offer, for the currency refusal. */
const otherCurrencies = ['GBP', 'JPY', 'CHF', 'SEK', 'NOK'];

function depositCases(context: ConformanceContext): Array<RefusalCase<TermDepositInitiation>> {
  const { fixtures } = context;
  const { product, accounts } = fixtures;
  const deposit = (terms: Partial<TermDepositInitiation>) => context.deposit(terms);
  const weekendValueDate = context.weekendOnOrAfter(context.valueDate);
  const weekendMaturity = context.weekendOnOrAfter(addDays(context.valueDate, product.minDays));
  const otherOffered = product.currencies.find((currency) => currency !== context.currency);
  const notOffered = otherCurrencies.find((currency) => !product.currencies.includes(currency)) ?? 'XAU';
  return [
    { rule: 'an unknown customer', entry: E.customerNotFound, command: deposit({ customerReference: unknown('CUSTOMER') }) },
    { rule: 'an unknown source account', entry: E.sourceAccountNotFound, command: deposit({ sourceAccount: unknown('ACCOUNT') }) },
    { rule: 'an unknown interest settlement account', entry: E.interestAccountNotFound, command: deposit({ interestAccount: unknown('ACCOUNT') }) },
    {
      rule: 'a customer that is not active',
      entry: E.customerBlocked,
      command: fixtures.blockedCustomer
        ? deposit({ customerReference: fixtures.blockedCustomer.customer, sourceAccount: fixtures.blockedCustomer.account, interestAccount: fixtures.blockedCustomer.account })
        : { missing: 'the fixtures name no blockedCustomer' },
    },
    { rule: 'an unknown product', entry: E.productNotAvailable, command: deposit({ productCode: unknown('PRODUCT') }) },
    {
      rule: 'an inactive product',
      entry: E.productNotAvailable,
      command: fixtures.inactiveProduct ? deposit({ productCode: fixtures.inactiveProduct.productCode, componentCode: fixtures.inactiveProduct.componentCode }) : { missing: 'the fixtures name no inactiveProduct' },
    },
    { rule: `a currency the product does not offer (${notOffered})`, entry: E.currencyNotOffered, command: deposit({ currency: notOffered }) },
    {
      rule: 'a principal below the product\'s minimum',
      entry: E.amountOutsideProductLimits,
      command: product.minAmountMinor > 1n ? deposit({ principalMinor: product.minAmountMinor - 1n }) : deposit({ principalMinor: product.maxAmountMinor + 1n }),
    },
    { rule: 'a term beyond the product\'s maximum days', entry: E.termOutsideProductLimits, command: deposit({ numberOfDays: product.maxDays + 10 }) },
    { rule: 'a source account that is not active', entry: E.accountNotActive, command: accounts.blocked ? deposit({ sourceAccount: accounts.blocked }) : { missing: 'the fixtures name no accounts.blocked' } },
    { rule: 'another customer\'s source account', entry: E.accountNotCustomers, command: accounts.otherCustomers ? deposit({ sourceAccount: accounts.otherCustomers }) : { missing: 'the fixtures name no accounts.otherCustomers' } },
    {
      rule: `a principal in ${otherOffered ?? 'another currency the product offers'} from a ${context.currency} account`,
      entry: E.currencyMismatchSource,
      command: otherOffered ? deposit({ currency: otherOffered }) : { missing: 'the fixtures name one currency in product.currencies' },
    },
    {
      rule: `a value date on a weekend day (${weekendValueDate})`,
      entry: E.valueDateNotBusinessDay,
      command: context.isWeekend(weekendValueDate) ? deposit({ valueDate: weekendValueDate }) : { missing: 'the fixtures\' weekend has no day' },
    },
    { rule: `a value date before the business date (${addDays(context.businessDate, -1)})`, entry: E.valueDateBeforeBusinessDate, command: deposit({ valueDate: addDays(context.businessDate, -1) }) },
    {
      rule: `an explicit maturity on a weekend day (${weekendMaturity})`,
      entry: E.maturityNotBusinessDay,
      command: context.isWeekend(weekendMaturity) ? deposit({ numberOfDays: undefined, maturityDate: weekendMaturity }) : { missing: 'the fixtures\' weekend has no day' },
    },
    {
      rule: 'a principal the source account cannot cover',
      entry: E.insufficientFundsSource,
      command: accounts.insufficient ? deposit({ sourceAccount: accounts.insufficient.account, principalMinor: accounts.insufficient.amountMinor }) : { missing: 'the fixtures name no accounts.insufficient' },
    },
  ];
}

function loanCases(context: ConformanceContext): Array<RefusalCase<LoanInstallmentExecution>> {
  const { fixtures } = context;
  const { facility, accounts } = fixtures;
  const pay = (terms: Partial<LoanInstallmentExecution>) => context.installment(terms);
  const otherCurrency = facility.currency === 'EUR' ? 'USD' : 'EUR';
  return [
    { rule: 'an unknown facility', entry: E.facilityNotFound, command: pay({ loanId: unknown('FACILITY') }) },
    { rule: 'an unknown installment', entry: E.installmentNotFound, command: pay({ sequence: 999_999 }) },
    { rule: 'an unknown payment account', entry: E.paymentAccountNotFound, command: pay({ paymentAccount: unknown('ACCOUNT') }) },
    { rule: 'an unknown expense account', entry: E.expenseAccountNotFound, command: pay({ expenseAccount: unknown('ACCOUNT') }) },
    { rule: 'a loan maturity after the facility\'s final maturity', entry: E.maturityAfterFinalMaturity, command: pay({ maturityDate: addDays(facility.finalMaturityDate, 1) }) },
    {
      rule: 'a facility that is not active',
      entry: E.facilityClosed,
      command: fixtures.closedFacility ? pay({ loanId: fixtures.closedFacility.loanId, sequence: fixtures.closedFacility.installment }) : { missing: 'the fixtures name no closedFacility' },
    },
    { rule: 'an installment paid in full', entry: E.installmentPaid, command: fixtures.paidInstallment !== undefined ? pay({ sequence: fixtures.paidInstallment }) : { missing: 'the fixtures name no facility.paidInstallment' } },
    { rule: 'a reserved parameter type (LetterOfCredit)', entry: E.parameterTypeNotSupported, command: pay({ parameterType: 'LetterOfCredit' }) },
    { rule: 'another parameter type than the facility\'s', entry: E.parameterTypeMismatch, command: pay({ parameterType: facility.parameterType === 'CKOther' ? 'CKOther2' : 'CKOther' }) },
    { rule: 'another loan type than the facility\'s', entry: E.loanTypeMismatch, command: pay({ loanType: facility.loanType === 'XXXX' ? 'YYYY' : 'XXXX' }) },
    { rule: `an amount in ${otherCurrency}, not the facility's currency`, entry: E.loanCurrencyMismatch, command: pay({ currency: otherCurrency }) },
    { rule: 'a payment account that is not active', entry: E.loanAccountNotActive, command: accounts.blocked ? pay({ paymentAccount: accounts.blocked }) : { missing: 'the fixtures name no accounts.blocked' } },
    { rule: 'another customer\'s payment account', entry: E.loanAccountNotCustomers, command: accounts.otherCustomers ? pay({ paymentAccount: accounts.otherCustomers }) : { missing: 'the fixtures name no accounts.otherCustomers' } },
    { rule: 'an amount above the installment\'s outstanding', entry: E.amountAboveOutstanding, command: pay({ amountMinor: 10_000_000_000_000n }) },
    {
      rule: 'an execution above the facility\'s approved limit',
      entry: E.approvedLimitExceeded,
      command: fixtures.limitedFacility ? pay({ loanId: fixtures.limitedFacility.loanId, sequence: fixtures.limitedFacility.installment, amountMinor: fixtures.limitedFacility.amountMinor }) : { missing: 'a facility with a small approved limit is in the kit\'s own fixtures only' },
    },
    {
      rule: 'a payment account that cannot cover the amount',
      entry: E.insufficientFundsPayment,
      command: accounts.insufficient ? pay({ paymentAccount: accounts.insufficient.account, amountMinor: accounts.insufficient.amountMinor }) : { missing: 'the fixtures name no accounts.insufficient' },
    },
    {
      rule: 'an expense account that cannot cover the charges',
      entry: E.insufficientFundsExpense,
      command: fixtures.kit ? pay({ expenseAccount: fixtures.kit.poor.accountNumber }) : { missing: 'an account holding less than the charges is in the kit\'s own fixtures only' },
    },
  ];
}

/**
 * Sends every case; collects every wrong answer rather than stopping at the first, so that one run
 * lists all of a core's refusals to mend. `send` answers the outcome of one command.
 */
async function checkCases<C>(
  context: ConformanceContext,
  family: Family,
  cases: Array<RefusalCase<C>>,
  send: (reference: string, command: C) => Promise<Parameters<typeof describeOutcome>[0]>,
): Promise<void> {
  const wrong: string[] = [];
  const missing: string[] = [];
  for (const refusal of cases) {
    if ('missing' in (refusal.command as object) && (refusal.command as { missing?: unknown }).missing !== undefined) {
      missing.push(`${refusal.rule} (${(refusal.command as { missing: string }).missing})`);
      continue;
    }
    const outcome = await send(randomUUID(), refusal.command as C);
    if (outcome.status !== 'Rejected' || outcome.refusal.entry !== refusal.entry) {
      wrong.push(`${refusal.rule}: expected Rejected ${refusalName(refusal.entry, family)}, got ${describeOutcome(outcome, family)}`);
    } else if (outcome.refusal.message.length === 0) {
      wrong.push(`${refusal.rule}: ${refusalName(refusal.entry, family)} says no reason (an empty message)`);
    }
  }
  if (missing.length > 0) context.note(`not checked: ${missing.join('; ')}`);
  if (wrong.length > 0) throw new RuleFailure(`${wrong.length} of ${cases.length - missing.length} refusals are wrong:\n${wrong.map((line) => `  - ${line}`).join('\n')}`);
}

export const refusalRules: ConformanceRule[] = [
  {
    id: 'refusals.term-deposit',
    title: 'refusals are values: every rule a term deposit breaks is Rejected with its catalogue name and its TD- code (e.g. insufficientFundsSource TD-422-002), and nothing moves',
    async run(context) {
      const watched = [{ accountNumber: context.fixtures.accounts.source, openingMinor: undefined }];
      const watch = await context.watch(context.records ? watched : []);
      await checkCases(context, 'TD', depositCases(context), (reference, command) => context.port.constituteTermDeposit(reference, command));
      if (context.records) await watch.expectMoved(watched[0] as (typeof watched)[0], 0n, 'no refusal moves money');
    },
  },
  {
    id: 'refusals.loan',
    title: 'refusals are values: every rule a loan installment payment breaks is Rejected with its catalogue name and its ML- code (e.g. insufficientFundsPayment ML-422-007), and nothing moves',
    async run(context) {
      const watched = [context.fixtures.accounts.source, context.fixtures.accounts.expense].map((accountNumber) => ({ accountNumber, openingMinor: undefined }));
      const watch = await context.watch(context.records ? watched : []);
      await checkCases(context, 'ML', loanCases(context), (reference, command) => context.port.executeLoanInstallment(reference, command));
      if (context.records) for (const account of watched) await watch.expectMoved(account, 0n, 'no refusal moves money');
      // The kit's account that cannot pay took part in the refusals of both families: it still holds what it was loaded with.
      const poor = context.fixtures.kit?.poor;
      if (poor && !context.records) await context.drain({ accountNumber: poor.accountNumber, openingMinor: poor.openingMinor }, poor.openingMinor, 'the account refused for insufficient funds kept its balance');
    },
  },
  {
    id: 'refusals.final',
    title: 'a refusal is final for its reference: the same reference with a valid command answers the same refusal and moves nothing (term deposits and loan installments)',
    async run(context) {
      const { port } = context;
      const reference = randomUUID();
      const first = rejectedWith(await port.constituteTermDeposit(reference, context.deposit({ customerReference: unknown('CUSTOMER') })), E.customerNotFound, 'TD', 'a constitution for an unknown customer');
      const again = await port.constituteTermDeposit(reference, context.deposit());
      check(again.status === 'Rejected', `the same reference with a valid command: expected the refusal again, got ${describeOutcome(again, 'TD')} (a refusal is final for its reference)`);
      same(rejectedWith(again, E.customerNotFound, 'TD', 'the same reference with a valid command').message, first.message, 'the refusal\'s message again');

      const loanReference = randomUUID();
      const loanFirst = rejectedWith(await port.executeLoanInstallment(loanReference, context.installment({ sequence: 999_999 })), E.installmentNotFound, 'ML', 'a payment of an unknown installment');
      const loanAgain = await port.executeLoanInstallment(loanReference, context.installment());
      check(loanAgain.status === 'Rejected', `the same loan reference with a valid command: expected the refusal again, got ${describeOutcome(loanAgain, 'ML')}`);
      same(rejectedWith(loanAgain, E.installmentNotFound, 'ML', 'the same loan reference with a valid command').message, loanFirst.message, 'the loan refusal\'s message again');
    },
  },
];
