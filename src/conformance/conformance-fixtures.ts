/**
 * The records the kit runs its rules on (docs/conformance.md, "Fixtures"): a customer, its
 * accounts, a term deposit product, a loan facility, directory entries — and how a fixture file
 * names them (`--fixtures FILE`), for a core without the load side whose test core already holds
 * them. The kit's own, loaded through the load side, are kit-fixtures.ts's.
 *
 * The calendar is not a fixture: the kit learns the core's weekend from its refusals
 * (core-weekend.ts) unless `--weekend` or the file's `weekend` gives it.
 */
import { readFileSync } from 'node:fs';
import { Type, type Static } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { weekdays, type Weekday } from '../core/business-calendar.js';
import { isCalendarDate } from '../core/calendar-date.js';
import { decimalOf, parseAmount } from '../core/money.js';
import type { DayCount } from '../core/term-deposits/interest.js';
import { ConformanceSetupError } from './conformance-errors.js';

export interface FixtureProduct {
  productCode: string;
  componentCode: string;
  /** The currencies it is offered in; the first is the deposits'. */
  currencies: string[];
  dayCount: DayCount;
  minAmountMinor: bigint;
  maxAmountMinor: bigint;
  minDays: number;
  maxDays: number;
}

export interface FixtureCharges {
  fixedFeeMinor: bigint;
  /** Decimal strings, as the data file writes rates: "0.0015". */
  commissionRate: string;
  minimumCommissionMinor: bigint;
  taxRate: string;
}

export interface FixtureFacility {
  loanId: string;
  loanType: string;
  parameterType: string;
  currency: string;
  finalMaturityDate: string;
  charges: FixtureCharges;
  /** An installment whose outstanding covers the run's partial payments. */
  installment: number;
}

/**
 * The accounts the kit loads, one or more per rule, each with the balance it was loaded with: when
 * the core serves no read side, the kit proves what moved by draining the account (a deposit of
 * one minor unit more than it should hold is refused, one of exactly that is executed).
 */
export const kitAccountRoles = [
  'onceDeposit',
  'oncePayment',
  'onceExpense',
  'raceDeposit',
  'racePayment',
  'raceExpense',
  'lookup',
  'fenceBefore',
  'fenceRace',
  'refusals',
  'refusalPayment',
  'refusalCharges',
  'refusalFinal',
  'loadSide',
  'endOfDaySource',
  'endOfDayInterest',
  'poor',
] as const;
export type KitAccountRole = (typeof kitAccountRoles)[number];

export interface KitAccount {
  accountNumber: string;
  openingMinor: bigint;
}

export interface ConformanceFixtures {
  /** `loaded`: the kit's own, through the load side; `file`: named by a fixture file. */
  origin: 'loaded' | 'file';
  /** An Active customer. */
  customer: string;
  accounts: {
    /** The customer's Active account in the product's currency: pays principals and installments. */
    source: string;
    /** The customer's Active account credited with interest. */
    interest: string;
    /** The customer's Active account in the facility's currency that pays the loan charges. */
    expense: string;
    /** The customer's account that is not Active. */
    blocked?: string | undefined;
    /** Another customer's Active account in the product's currency. */
    otherCustomers?: string | undefined;
    /** The customer's Active account holding less than `amountMinor`, which the product and the installment allow. */
    insufficient?: { account: string; amountMinor: bigint } | undefined;
    /** The customer's Active account in a currency the product does not offer (the kit's own only). */
    notOffered?: { account: string; currency: string } | undefined;
  };
  /** A customer that is not Active, and an Active account of theirs holding at least the product's minimum. */
  blockedCustomer?: { customer: string; account: string } | undefined;
  product: FixtureProduct;
  /** An inactive product; `open` when the kit knows its terms allow the kit's usual deposit (its own), so that only its status is wrong. */
  inactiveProduct?: { productCode: string; componentCode: string; open?: boolean | undefined } | undefined;
  facility: FixtureFacility;
  /** An installment of the facility paid in full already. */
  paidInstallment?: number | undefined;
  /** An installment the kit may pay in full (its whole outstanding). */
  payOffInstallment?: number | undefined;
  /** An installment of the facility whose outstanding the kit knows and nothing else pays (the kit's own only). */
  smallInstallment?: { installment: number; outstandingMinor: bigint } | undefined;
  /** A facility that is not Active, and one of its installments. */
  closedFacility?: { loanId: string; installment: number } | undefined;
  /** A facility whose approved limit is below `amountMinor`, which its installment's outstanding allows. */
  limitedFacility?: { loanId: string; installment: number; amountMinor: bigint } | undefined;
  /** A facility of a reserved parameter type (LetterOfCredit) the kit pays with its own type, and one of its installments. */
  reservedFacility?: { loanId: string; installment: number; parameterType: string } | undefined;
  users: { active: string; disabled: string };
  workstations: { active: string; disabled: string };
  /** The core's weekend days, when the fixture file gives them: the kit then learns none. */
  weekend?: Weekday[] | undefined;
  /** Loaded fixtures only: the accounts one rule each uses, with their opening balances. */
  kit?: Record<KitAccountRole, KitAccount> | undefined;
}

// ----- The fixture file (`--fixtures FILE`) -----

const Name = Type.String({ minLength: 1, maxLength: 128 });
const Money = Type.Number({ minimum: 0, description: 'an amount in the currency\'s major unit, as the data file writes it (25.00)' });
const Rate = Type.Number({ minimum: 0, description: 'a fraction, as the data file writes it (0.0015)' });
const FixtureFileSchema = Type.Object(
  {
    customer: Name,
    accounts: Type.Object({
      source: Name,
      interest: Name,
      expense: Name,
      blocked: Type.Optional(Name),
      otherCustomers: Type.Optional(Name),
      insufficient: Type.Optional(Type.Object({ account: Name, amount: Money })),
    }),
    blockedCustomer: Type.Optional(Type.Object({ customer: Name, account: Name })),
    product: Type.Object({
      productCode: Name,
      componentCode: Name,
      currencies: Type.Array(Type.String({ pattern: '^[A-Z]{3}$' }), { minItems: 1, maxItems: 32 }),
      dayCount: Type.Union([Type.Literal('ACT/360'), Type.Literal('ACT/365')]),
      minAmount: Money,
      maxAmount: Money,
      minDays: Type.Integer({ minimum: 1 }),
      maxDays: Type.Integer({ minimum: 1 }),
    }),
    inactiveProduct: Type.Optional(Type.Object({ productCode: Name, componentCode: Name })),
    facility: Type.Object({
      loanId: Name,
      loanType: Name,
      parameterType: Name,
      currency: Type.String({ pattern: '^[A-Z]{3}$' }),
      finalMaturityDate: Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$' }),
      charges: Type.Object({ fixedFee: Money, commissionRate: Rate, minimumCommission: Money, taxRate: Rate }),
      installment: Type.Integer({ minimum: 1 }),
      paidInstallment: Type.Optional(Type.Integer({ minimum: 1 })),
      payOffInstallment: Type.Optional(Type.Integer({ minimum: 1 })),
    }),
    closedFacility: Type.Optional(Type.Object({ loanId: Name, installment: Type.Integer({ minimum: 1 }) })),
    users: Type.Object({ active: Name, disabled: Name }),
    workstations: Type.Object({ active: Name, disabled: Name }),
    weekend: Type.Optional(Type.Array(Type.Union(weekdays.map((day) => Type.Literal(day))), { maxItems: 6, uniqueItems: true })),
  },
  { additionalProperties: false },
);
type FixtureFile = Static<typeof FixtureFileSchema>;
const checkFixtureFile = TypeCompiler.Compile(FixtureFileSchema);

/** Reads and checks a fixture file; every problem is one line naming the file and the field. */
export function readFixtureFile(file: string): ConformanceFixtures {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new ConformanceSetupError(`fixture file ${file} ${code === 'ENOENT' ? 'does not exist' : `cannot be read (${code ?? (error as Error).message})`}: --fixtures names a JSON file (docs/conformance.md, "Fixtures")`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ConformanceSetupError(`fixture file ${file} is not JSON: ${(error as Error).message}`);
  }
  return parseFixtures(value, file);
}

export function parseFixtures(value: unknown, file: string): ConformanceFixtures {
  const problem = checkFixtureFile.Errors(value).First();
  if (problem) {
    const field = problem.path.split('/').slice(1).join('.') || '(the document)';
    throw new ConformanceSetupError(`fixture file ${file}: ${field}: ${problem.message}${problem.schema.description ? ` (${problem.schema.description})` : ''}`);
  }
  const data = value as FixtureFile;
  const [currency] = data.product.currencies as [string];
  const minor = (field: string, amount: number, inCurrency: string): bigint => {
    const parsed = amount === 0 ? { ok: true as const, minor: 0n } : parseAmount(amount, inCurrency);
    if (!parsed.ok) throw new ConformanceSetupError(`fixture file ${file}: ${field}: ${amount} is not an exact amount of ${inCurrency} (${parsed.problem})`);
    return parsed.minor;
  };
  const rate = (field: string, value: number): string => {
    const decimal = decimalOf(value);
    if (!decimal) throw new ConformanceSetupError(`fixture file ${file}: ${field}: ${value} is not a rate`);
    return String(value);
  };
  if (!isCalendarDate(data.facility.finalMaturityDate)) throw new ConformanceSetupError(`fixture file ${file}: facility.finalMaturityDate: "${data.facility.finalMaturityDate}" is not a calendar date`);
  if (data.product.minDays > data.product.maxDays) throw new ConformanceSetupError(`fixture file ${file}: product.minDays is above maxDays`);
  const { charges } = data.facility;
  return {
    origin: 'file',
    customer: data.customer,
    accounts: {
      source: data.accounts.source,
      interest: data.accounts.interest,
      expense: data.accounts.expense,
      blocked: data.accounts.blocked,
      otherCustomers: data.accounts.otherCustomers,
      insufficient: data.accounts.insufficient && { account: data.accounts.insufficient.account, amountMinor: minor('accounts.insufficient.amount', data.accounts.insufficient.amount, currency) },
    },
    blockedCustomer: data.blockedCustomer,
    product: {
      productCode: data.product.productCode,
      componentCode: data.product.componentCode,
      currencies: data.product.currencies,
      dayCount: data.product.dayCount,
      minAmountMinor: minor('product.minAmount', data.product.minAmount, currency),
      maxAmountMinor: minor('product.maxAmount', data.product.maxAmount, currency),
      minDays: data.product.minDays,
      maxDays: data.product.maxDays,
    },
    inactiveProduct: data.inactiveProduct,
    facility: {
      loanId: data.facility.loanId,
      loanType: data.facility.loanType,
      parameterType: data.facility.parameterType,
      currency: data.facility.currency,
      finalMaturityDate: data.facility.finalMaturityDate,
      charges: {
        fixedFeeMinor: minor('facility.charges.fixedFee', charges.fixedFee, data.facility.currency),
        commissionRate: rate('facility.charges.commissionRate', charges.commissionRate),
        minimumCommissionMinor: minor('facility.charges.minimumCommission', charges.minimumCommission, data.facility.currency),
        taxRate: rate('facility.charges.taxRate', charges.taxRate),
      },
      installment: data.facility.installment,
    },
    paidInstallment: data.facility.paidInstallment,
    payOffInstallment: data.facility.payOffInstallment,
    closedFacility: data.closedFacility,
    users: data.users,
    workstations: data.workstations,
    weekend: data.weekend,
  };
}

/** Every account a fixture names, with the field that names it: what the kit checks the core holds. */
export function namedAccounts(fixtures: ConformanceFixtures): Array<[field: string, account: string]> {
  const named: Array<[string, string | undefined]> = [
    ['accounts.source', fixtures.accounts.source],
    ['accounts.interest', fixtures.accounts.interest],
    ['accounts.expense', fixtures.accounts.expense],
    ['accounts.blocked', fixtures.accounts.blocked],
    ['accounts.otherCustomers', fixtures.accounts.otherCustomers],
    ['accounts.insufficient.account', fixtures.accounts.insufficient?.account],
    ['blockedCustomer.account', fixtures.blockedCustomer?.account],
  ];
  return named.filter((entry): entry is [string, string] => entry[1] !== undefined);
}
