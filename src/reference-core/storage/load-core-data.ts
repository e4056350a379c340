/**
 * The reference core's loading of its sections of a sandbox data file (its storage's, beside
 * core-data-load.ts, the port's load side that uses it): directory, calendar, business date, customers, accounts
 * with their opening balances, term deposit products. Only missing records are added; an account
 * that exists keeps its balance (docs/sandbox.md, "The data file": a restart must never reset money).
 */
import { randomUUID } from 'node:crypto';
import { insertAccountIfMissing, insertCustomerIfMissing, insertProductIfMissing } from './banking.js';
import { loanAccountKind } from '../../core/ledger/movement.js';
import { ensureInternalAccount, postMovement } from './ledger.js';
import { insertFacilityIfMissing, insertInstallment } from './loans.js';
import type { CoreDb } from './core-db.js';
import { getCoreSetting, getOrInitCoreSetting } from './core-settings.js';
import { businessDateSetting } from './end-of-day.js';
import { insertUserIfMissing, insertWorkstationIfMissing } from './directory.js';
import { interestExpenseAccount } from '../../core/end-of-day/maturity.js';
import { BusinessCalendar, type Weekday } from '../../core/business-calendar.js';
import { toMinorUnits } from '../../core/money.js';
import { todayUtc } from '../../core/calendar-date.js';
import { dateOf, type Clock } from '../../core/clock.js';
import type { CoreData } from '../core-data-file.js';

export const calendarSetting = 'core.calendar';
export { businessDateSetting };

/** The bank's side of every opening balance: an internal equity account per currency. */
export function equityAccount(currency: string): string {
  return `EQUITY-${currency}`;
}

/** `clock`: the core's; the records' creation time, and the business date of a store the file gives none. */
export async function loadCoreData(db: CoreDb, data: CoreData, clock: Clock): Promise<{ accountsAdded: number }> {
  const now = dateOf(clock);
  const createdAt = now.toISOString();
  for (const user of data.users ?? []) await insertUserIfMissing(db, user.login, user.status);
  for (const workstation of data.workstations ?? []) await insertWorkstationIfMissing(db, workstation.id, workstation.status);
  await getOrInitCoreSetting(db, calendarSetting, () =>
    JSON.stringify({ weekend: data.calendar?.weekend ?? ['SATURDAY', 'SUNDAY'], holidays: data.calendar?.holidays ?? [] }),
  );
  // The data file's date starts a new store only; afterwards the date moves by advances alone.
  if (data.businessDate !== undefined) await getOrInitCoreSetting(db, businessDateSetting, () => data.businessDate ?? todayUtc(now));
  for (const customer of data.customers ?? []) {
    await insertCustomerIfMissing(db, { customerReference: customer.customerReference, name: customer.name ?? null, status: customer.status });
  }
  let accountsAdded = 0;
  const businessDate = (await getCoreSetting(db, businessDateSetting)) ?? todayUtc(now);
  for (const account of data.accounts ?? []) {
    const added = await insertAccountIfMissing(db, {
      accountNumber: account.accountNumber,
      customerReference: account.customerReference,
      currency: account.currency,
      status: account.status,
      kind: 'customer',
    }, createdAt);
    if (!added) continue;
    accountsAdded += 1;
    const openingMinor = toMinorUnits(account.balance, account.currency);
    if (openingMinor === 0n) continue;
    await ensureInternalAccount(db, equityAccount(account.currency), account.currency, createdAt);
    await postMovement(db, {
      id: randomUUID(),
      reference: `opening-${account.accountNumber}`,
      kind: 'opening_balance',
      description: 'Opening balance from the sandbox data file',
      businessDate,
      lines: [
        { accountNumber: equityAccount(account.currency), amountMinor: -openingMinor, currency: account.currency },
        { accountNumber: account.accountNumber, amountMinor: openingMinor, currency: account.currency },
      ],
    }, createdAt);
  }
  for (const product of data.termDepositProducts ?? []) {
    await insertProductIfMissing(db, {
      productCode: product.productCode,
      componentCode: product.componentCode,
      active: product.active,
      currencies: product.currencies,
      minAmount: String(product.minAmount),
      maxAmount: String(product.maxAmount),
      minDays: product.minDays,
      maxDays: product.maxDays,
      dayCount: product.dayCount,
    });
    // The bank's side of every maturity's interest (docs/business-days.md).
    for (const currency of product.currencies) await ensureInternalAccount(db, interestExpenseAccount(currency), currency, createdAt);
  }
  for (const loan of data.merchandisingLoans ?? []) {
    if (await loadLoanFacility(db, loan, businessDate, createdAt)) accountsAdded += 1;
  }
  return { accountsAdded };
}

type SandboxLoan = NonNullable<CoreData['merchandisingLoans']>[number];

/**
 * A facility is an account of kind loan whose balance is the customer's outstanding debt
 * (negative), opened against the bank's equity; repayments credit it toward zero.
 */
async function loadLoanFacility(db: CoreDb, loan: SandboxLoan, businessDate: string, createdAt: string): Promise<boolean> {
  const { currency } = loan;
  const added = await insertAccountIfMissing(db, {
    accountNumber: loan.merchandisingLoanId,
    customerReference: loan.customerReference,
    currency,
    status: loan.status === 'Active' ? 'Active' : loan.status,
    kind: loanAccountKind,
  }, createdAt);
  if (!added) return false;
  const installments = loan.installments.map((installment) => ({
    sequence: installment.sequence,
    dueDate: installment.dueDate,
    amountMinor: toMinorUnits(installment.amount, currency),
    paidMinor: toMinorUnits(installment.amountPaid ?? 0, currency),
  }));
  const paidMinor = installments.reduce((sum, installment) => sum + installment.paidMinor, 0n);
  await insertFacilityIfMissing(db, {
    loanId: loan.merchandisingLoanId,
    customerReference: loan.customerReference,
    loanType: loan.merchandisingLoanType,
    parameterType: loan.merchandisingLoanFacilityParameterType,
    currency,
    approvedLimitMinor: toMinorUnits(loan.approvedLimit, currency),
    executedTotalMinor: paidMinor,
    status: loan.status,
    finalMaturityDate: loan.finalMaturityDate,
    fixedFeeMinor: toMinorUnits(loan.charges.fixedFee, currency),
    commissionRate: String(loan.charges.commissionRate),
    minimumCommissionMinor: toMinorUnits(loan.charges.minimumCommission, currency),
    taxRate: String(loan.charges.taxRate),
  });
  for (const installment of installments) await insertInstallment(db, { loanId: loan.merchandisingLoanId, ...installment });
  const outstandingMinor = installments.reduce((sum, installment) => sum + installment.amountMinor - installment.paidMinor, 0n);
  if (outstandingMinor > 0n) {
    await ensureInternalAccount(db, equityAccount(currency), currency, createdAt);
    await postMovement(db, {
      id: randomUUID(),
      reference: `opening-${loan.merchandisingLoanId}`,
      kind: 'opening_balance',
      description: 'Outstanding loan from the sandbox data file',
      businessDate,
      lines: [
        { accountNumber: loan.merchandisingLoanId, amountMinor: -outstandingMinor, currency },
        { accountNumber: equityAccount(currency), amountMinor: outstandingMinor, currency },
      ],
    }, createdAt);
  }
  return true;
}


/**
 * The core's calendar as stored, on the stored business date. `--business-date` (initialDate) is
 * the business date of a new store only (when neither an earlier start nor the data file set one):
 * the date lives in the store and moves by advances alone (docs/business-days.md), so that every
 * instance on one database and a remote core agree. A different flag on an existing store is
 * ignored with a warning.
 */
export async function readBusinessCalendar(db: CoreDb, initialDate: string | undefined, clock: Clock): Promise<BusinessCalendar> {
  const stored = await getCoreSetting(db, calendarSetting);
  const calendar = stored ? (JSON.parse(stored) as { weekend: Weekday[]; holidays: string[] }) : { weekend: ['SATURDAY', 'SUNDAY'] as Weekday[], holidays: [] };
  const businessDate = await getOrInitCoreSetting(db, businessDateSetting, () => initialDate ?? todayUtc(dateOf(clock)));
  if (initialDate !== undefined && initialDate !== businessDate) {
    process.emitWarning(
      `--business-date ${initialDate} is ignored: the store's business date is ${businessDate} and moves only by \`coregate core advance\``,
      'CoregateWarning',
    );
  }
  return new BusinessCalendar(calendar.weekend, calendar.holidays, businessDate);
}
