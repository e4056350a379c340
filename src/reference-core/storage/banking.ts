/** Repositories of the reference core's records: customers, accounts, products, term deposits. */
import { SqliteAdapter, type Insertable, type Selectable } from 'kysely';
import { toBigInt } from '../../store/bigint.js';
import { type CoreDb, preparedInsert, preparedQuery } from './core-db.js';
import type { AccountTable, TermDepositProductTable, TermDepositTable } from './core-schema.js';
import type { Account, Customer, DayCount, TermDepositContract, TermDepositProduct } from '../../core/domain.js';

export type { Account as AccountRecord, Customer as CustomerRecord, TermDepositProduct as ProductRecord } from '../../core/domain.js';

/** A term deposit contract as stored, with the instant it was made. */
export interface TermDepositRecord extends TermDepositContract {
  createdAt: string;
}

const customerByReference = preparedQuery((db, reference: string) => db.selectFrom('customers').selectAll().where('customer_reference', '=', reference));

export async function findCustomer(db: CoreDb, reference: string): Promise<Customer | undefined> {
  const row = await customerByReference.first(db, reference);
  return row && { customerReference: row.customer_reference, name: row.name, status: row.status };
}

export async function insertCustomerIfMissing(db: CoreDb, customer: Customer): Promise<void> {
  await db
    .insertInto('customers')
    .values({ customer_reference: customer.customerReference, name: customer.name, status: customer.status })
    .onConflict((c) => c.column('customer_reference').doNothing())
    .execute();
}

/** Whether `db`'s transactions hold the whole database's write lock (SQLite's, taken at `begin immediate`). */
export function holdsWriteLock(db: CoreDb): boolean {
  return db.getExecutor().adapter instanceof SqliteAdapter;
}

const accountByNumber = preparedQuery((db, accountNumber: string) => db.selectFrom('accounts').selectAll().where('account_number', '=', accountNumber));

export async function findAccount(db: CoreDb, accountNumber: string): Promise<Account | undefined> {
  const row = await accountByNumber.first(db, accountNumber);
  return row && toAccount(row);
}

/**
 * Locks an account's row for the rest of the transaction and reads it. On PostgreSQL in one
 * statement, a no-op update that takes the row lock: one round trip less than a lock and a read.
 * On SQLite every transaction of coregate's holds the database's write lock from its first
 * statement (`begin immediate`, sqlite-driver.ts), so a read is enough: the no-op update wrote
 * the row again for nothing.
 */
const accountLock = preparedQuery((db, accountNumber: string) =>
  db
    .updateTable('accounts')
    .set((eb) => ({ balance_minor: eb.ref('balance_minor') }))
    .where('account_number', '=', accountNumber)
    .returningAll(),
);

export async function lockAccount(db: CoreDb, accountNumber: string): Promise<Account | undefined> {
  const row = await (holdsWriteLock(db) ? accountByNumber : accountLock).first(db, accountNumber);
  return row && toAccount(row);
}

function toAccount(row: Selectable<AccountTable>): Account {
  return {
    accountNumber: row.account_number,
    customerReference: row.customer_reference,
    currency: row.currency,
    status: row.status,
    kind: row.kind,
    balanceMinor: toBigInt(row.balance_minor),
  };
}

/** Inserts an account with a zero balance; answers whether it was missing. */
const accountInsert = preparedInsert<Insertable<AccountTable>>(
  ['account_number', 'customer_reference', 'currency', 'status', 'kind', 'balance_minor', 'created_at'],
  (db, rows) => db.insertInto('accounts').values(rows).onConflict((c) => c.column('account_number').doNothing()),
);

/** `createdAt`: the core's clock's time (ISO 8601), the row's creation time. */
export async function insertAccountIfMissing(db: CoreDb, account: Omit<Account, 'balanceMinor'>, createdAt: string): Promise<boolean> {
  const result = await accountInsert.execute(db, {
    account_number: account.accountNumber,
    customer_reference: account.customerReference,
    currency: account.currency,
    status: account.status,
    kind: account.kind,
    balance_minor: 0n,
    created_at: createdAt,
  });
  return Number(result.numAffectedRows ?? 0n) > 0;
}

const productByCodes = preparedQuery((db, productCode: string, componentCode: string) =>
  db.selectFrom('term_deposit_products').selectAll().where('product_code', '=', productCode).where('component_code', '=', componentCode),
);

export async function findProduct(db: CoreDb, productCode: string, componentCode: string): Promise<TermDepositProduct | undefined> {
  const row = await productByCodes.first(db, productCode, componentCode);
  return row && toProduct(row);
}

export async function insertProductIfMissing(db: CoreDb, product: TermDepositProduct): Promise<void> {
  await db
    .insertInto('term_deposit_products')
    .values({
      product_code: product.productCode,
      component_code: product.componentCode,
      active: product.active ? 1 : 0,
      currencies: JSON.stringify(product.currencies),
      min_amount: product.minAmount,
      max_amount: product.maxAmount,
      min_days: product.minDays,
      max_days: product.maxDays,
      day_count: product.dayCount,
    })
    .onConflict((c) => c.columns(['product_code', 'component_code']).doNothing())
    .execute();
}

const termDepositInsert = preparedInsert<Insertable<TermDepositTable>>(
  [
    'contract_number',
    'customer_reference',
    'product_code',
    'component_code',
    'principal_minor',
    'currency',
    'rate_percent',
    'day_count',
    'value_date',
    'maturity_date',
    'number_of_days',
    'source_account',
    'interest_account',
    'description',
    'operation_reference',
    'status',
    'created_at',
  ],
  (db, rows) => db.insertInto('term_deposits').values(rows),
);

export async function insertTermDeposit(db: CoreDb, record: TermDepositContract, createdAt: string): Promise<void> {
  await termDepositInsert.execute(db, {
    contract_number: record.contractNumber,
    customer_reference: record.customerReference,
    product_code: record.productCode,
    component_code: record.componentCode,
    principal_minor: record.principalMinor,
    currency: record.currency,
    rate_percent: record.ratePercent,
    day_count: record.dayCount,
    value_date: record.valueDate,
    maturity_date: record.maturityDate,
    number_of_days: record.numberOfDays,
    source_account: record.sourceAccount,
    interest_account: record.interestAccount,
    description: record.description,
    operation_reference: record.operationReference,
    status: record.status,
    created_at: createdAt,
  });
}

const termDepositByContract = preparedQuery((db, contractNumber: string) => db.selectFrom('term_deposits').selectAll().where('contract_number', '=', contractNumber));

export async function findTermDeposit(db: CoreDb, contractNumber: string): Promise<TermDepositRecord | undefined> {
  const row = await termDepositByContract.first(db, contractNumber);
  return row && toTermDeposit(row);
}

export async function findTermDepositByReference(db: CoreDb, reference: string): Promise<TermDepositRecord | undefined> {
  const row = await db.selectFrom('term_deposits').selectAll().where('operation_reference', '=', reference).executeTakeFirst();
  return row && toTermDeposit(row);
}

function toProduct(row: Selectable<TermDepositProductTable>): TermDepositProduct {
  return {
    productCode: row.product_code,
    componentCode: row.component_code,
    active: Number(row.active) === 1,
    currencies: JSON.parse(row.currencies) as string[],
    minAmount: row.min_amount,
    maxAmount: row.max_amount,
    minDays: Number(row.min_days),
    maxDays: Number(row.max_days),
    dayCount: row.day_count as DayCount,
  };
}

export function toTermDeposit(row: Selectable<TermDepositTable>): TermDepositRecord {
  return {
    contractNumber: row.contract_number,
    customerReference: row.customer_reference,
    productCode: row.product_code,
    componentCode: row.component_code,
    principalMinor: toBigInt(row.principal_minor),
    currency: row.currency,
    ratePercent: row.rate_percent,
    dayCount: row.day_count as DayCount,
    valueDate: row.value_date,
    maturityDate: row.maturity_date,
    numberOfDays: Number(row.number_of_days),
    sourceAccount: row.source_account,
    interestAccount: row.interest_account,
    description: row.description,
    operationReference: row.operation_reference,
    status: row.status,
    createdAt: row.created_at,
  };
}

/** Active contracts maturing on or before `day`, in maturity order (index term_deposits_maturing). */
export async function listMaturingDeposits(db: CoreDb, day: string): Promise<TermDepositRecord[]> {
  const rows = await db
    .selectFrom('term_deposits')
    .selectAll()
    .where('status', '=', 'Active')
    .where('maturity_date', '<=', day)
    .orderBy('maturity_date')
    .orderBy('contract_number')
    .execute();
  return rows.map(toTermDeposit);
}

/** Active → Matured, guarded: false when the contract was not Active (matured already). */
export async function markDepositMatured(db: CoreDb, contractNumber: string): Promise<boolean> {
  const result = await db.updateTable('term_deposits').set({ status: 'Matured' }).where('contract_number', '=', contractNumber).where('status', '=', 'Active').executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function setAccountStatus(db: CoreDb, accountNumber: string, status: string): Promise<void> {
  await db.updateTable('accounts').set({ status }).where('account_number', '=', accountNumber).execute();
}

/**
 * Term deposits whose account disagrees with their status: an Active contract's account holds its
 * principal, a Matured contract's account holds nothing (the maturity repaid it). For `coregate check`.
 */
export async function findTermDepositAccountMismatches(
  db: CoreDb,
  listedMax: number,
): Promise<{ count: number; listed: Array<{ contractNumber: string; status: string; principalMinor: string; accountBalanceMinor: string | null }> }> {
  const rows = await db
    .selectFrom('term_deposits')
    .leftJoin('accounts', 'accounts.account_number', 'term_deposits.contract_number')
    .select(['term_deposits.contract_number', 'term_deposits.status', 'term_deposits.principal_minor', 'accounts.balance_minor'])
    .execute();
  const mismatches = rows.filter((row) => {
    if (row.balance_minor === null) return true;
    const balance = toBigInt(row.balance_minor);
    if (row.status === 'Matured') return balance !== 0n;
    return balance !== toBigInt(row.principal_minor);
  });
  return {
    count: mismatches.length,
    listed: mismatches.slice(0, listedMax).map((row) => ({
      contractNumber: row.contract_number,
      status: row.status,
      principalMinor: toBigInt(row.principal_minor).toString(),
      accountBalanceMinor: row.balance_minor === null ? null : toBigInt(row.balance_minor).toString(),
    })),
  };
}
