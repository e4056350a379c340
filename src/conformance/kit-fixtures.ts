/**
 * The kit's own records (docs/conformance.md, "Fixtures"), loaded through the core's load side
 * (POST /core/v1/data) under identifiers no earlier run used, so that the kit needs no reset and
 * never touches a bank's records. Each record is built so that a refusal case breaks one rule
 * only: an account in a currency the product does not offer, a facility of a reserved parameter
 * type, an installment whose outstanding the kit knows.
 *
 * The calendar and the business date are set on a new core only (docs/core-protocol.md, "The load
 * side"): the kit loads neither.
 */
import { randomBytes } from 'node:crypto';
import { addDays } from '../core/calendar-date.js';
import type { CoreDataDocument } from '../core/port.js';
import { kitAccountRoles, type ConformanceFixtures, type KitAccount, type KitAccountRole } from './conformance-fixtures.js';

/** A suffix no earlier run used: 8 characters of A-Z and 2-7. */
export function fixtureSuffix(): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  return [...randomBytes(8)].map((byte) => alphabet[byte % alphabet.length]).join('');
}

const usd = 'USD';
/** 100,000.00 USD: what each of the kit's single-use accounts opens with. */
const kitOpeningMinor = 10_000_000n;
/** What the kit's account that cannot pay opens with (10.00 USD), and what it is asked to pay (20.00 USD). */
const poorOpeningMinor = 1_000n;
const poorAskedMinor = 2_000n;
/** A currency the kit's product does not offer, and the account of the customer held in it. */
const notOfferedCurrency = 'GBP';
/** The kit's installment 4: its outstanding (50.00 USD), which nothing but the refusal case pays. */
const smallInstallmentMinor = 5_000n;

/**
 * The kit's own records under `suffix`, and the document that loads them (the data file's core
 * part, docs/sandbox.md): everything the rules need, a facility due on the business date (it
 * becomes overdue at the kit's end of day), a paid installment, a closed facility, a small limit,
 * a facility of a reserved parameter type.
 */
export function kitFixtures(suffix: string, businessDate: string): { fixtures: ConformanceFixtures; document: CoreDataDocument } {
  const id = (name: string) => `CK-${suffix}-${name}`;
  const customer = id('C');
  const blockedCustomer = id('B');
  const opening = (role: KitAccountRole): bigint => (role === 'poor' ? poorOpeningMinor : role === 'endOfDayInterest' ? 10_000n : kitOpeningMinor);
  const kit = Object.fromEntries(kitAccountRoles.map((role) => [role, { accountNumber: id(role.toUpperCase()), openingMinor: opening(role) }])) as Record<KitAccountRole, KitAccount>;
  const account = (accountNumber: string, balanceMinor: bigint, options: { customer?: string; currency?: string; status?: string } = {}) => ({
    accountNumber,
    customerReference: options.customer ?? customer,
    currency: options.currency ?? usd,
    balance: Number(balanceMinor) / 100,
    status: options.status ?? 'Active',
  });
  const charges = { fixedFee: 25, commissionRate: 0.0015, minimumCommission: 10, taxRate: 0.15 };
  const facility = (loanId: string, status: string, approvedLimit: number, installments: Array<{ sequence: number; dueDate: string; amount: number; amountPaid?: number }>, parameterType = 'DocumentaryRemittance') => ({
    merchandisingLoanId: loanId,
    customerReference: customer,
    merchandisingLoanType: 'CRDE',
    merchandisingLoanFacilityParameterType: parameterType,
    currency: usd,
    approvedLimit,
    status,
    finalMaturityDate: addDays(businessDate, 365),
    charges,
    installments,
  });
  const fixtures: ConformanceFixtures = {
    origin: 'loaded',
    customer,
    accounts: {
      source: id('SRC'),
      interest: id('INT'),
      expense: id('EXP'),
      blocked: id('BLK'),
      otherCustomers: id('B1'),
      insufficient: { account: kit.poor.accountNumber, amountMinor: poorAskedMinor },
      notOffered: { account: id(notOfferedCurrency), currency: notOfferedCurrency },
    },
    blockedCustomer: { customer: blockedCustomer, account: id('B1') },
    product: { productCode: id('TD'), componentCode: 'CK1-400', currencies: [usd, 'EUR'], dayCount: 'ACT/360', minAmountMinor: 1_000n, maxAmountMinor: 100_000_000n, minDays: 1, maxDays: 400 },
    inactiveProduct: { productCode: id('TD'), componentCode: 'CK-OLD', open: true },
    facility: {
      loanId: id('L1'),
      loanType: 'CRDE',
      parameterType: 'DocumentaryRemittance',
      currency: usd,
      finalMaturityDate: addDays(businessDate, 365),
      charges: { fixedFeeMinor: 2_500n, commissionRate: '0.0015', minimumCommissionMinor: 1_000n, taxRate: '0.15' },
      installment: 1,
    },
    paidInstallment: 5,
    payOffInstallment: 2,
    smallInstallment: { installment: 4, outstandingMinor: smallInstallmentMinor },
    closedFacility: { loanId: id('L2'), installment: 1 },
    limitedFacility: { loanId: id('L3'), installment: 1, amountMinor: 20_000n },
    reservedFacility: { loanId: id('L4'), installment: 1, parameterType: 'LetterOfCredit' },
    users: { active: `ck-${suffix.toLowerCase()}-active`, disabled: `ck-${suffix.toLowerCase()}-disabled` },
    workstations: { active: id('WS-ACTIVE'), disabled: id('WS-DISABLED') },
    kit,
  };
  const document: CoreDataDocument = {
    users: [
      { login: fixtures.users.active, status: 'Active' },
      { login: fixtures.users.disabled, status: 'Disabled' },
    ],
    workstations: [
      { id: fixtures.workstations.active, status: 'Active' },
      { id: fixtures.workstations.disabled, status: 'Disabled' },
    ],
    customers: [
      { customerReference: customer, name: `Conformance kit ${suffix}`, status: 'Active' },
      { customerReference: blockedCustomer, name: `Conformance kit ${suffix} (blocked)`, status: 'Blocked' },
    ],
    accounts: [
      account(id('SRC'), 100_000_000n),
      account(id('INT'), 0n),
      account(id('EXP'), kitOpeningMinor),
      account(id(notOfferedCurrency), 100_000n, { currency: notOfferedCurrency }),
      account(id('BLK'), 100_000n, { status: 'Blocked' }),
      account(id('B1'), 100_000n, { customer: blockedCustomer }),
      ...kitAccountRoles.map((role) => account(kit[role].accountNumber, kit[role].openingMinor)),
    ],
    termDepositProducts: [
      { productCode: id('TD'), componentCode: 'CK1-400', active: true, currencies: [usd, 'EUR'], minAmount: 10, maxAmount: 1_000_000, minDays: 1, maxDays: 400, dayCount: 'ACT/360' },
      { productCode: id('TD'), componentCode: 'CK-OLD', active: false, currencies: [usd, 'EUR'], minAmount: 10, maxAmount: 1_000_000, minDays: 1, maxDays: 400, dayCount: 'ACT/360' },
    ],
    merchandisingLoans: [
      facility(id('L1'), 'Active', 1_000_000, [
        { sequence: 1, dueDate: addDays(businessDate, 60), amount: 100_000 },
        { sequence: 2, dueDate: addDays(businessDate, 90), amount: 50 },
        // Due on the business date: the kit's end of day makes it overdue.
        { sequence: 3, dueDate: businessDate, amount: 1_000 },
        { sequence: 4, dueDate: addDays(businessDate, 100), amount: Number(smallInstallmentMinor) / 100 },
        { sequence: 5, dueDate: addDays(businessDate, 120), amount: 10, amountPaid: 10 },
      ]),
      facility(id('L2'), 'Closed', 1_000_000, [{ sequence: 1, dueDate: addDays(businessDate, 60), amount: 1_000 }]),
      facility(id('L3'), 'Active', 100, [{ sequence: 1, dueDate: addDays(businessDate, 60), amount: 1_000 }]),
      facility(id('L4'), 'Active', 1_000_000, [{ sequence: 1, dueDate: addDays(businessDate, 60), amount: 1_000 }], 'LetterOfCredit'),
    ],
  };
  return { fixtures, document };
}
