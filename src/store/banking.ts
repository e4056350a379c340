/** Repositories of the reference core's records: customers, accounts, products, term deposits. */
import type { Selectable } from 'kysely';
import { toBigInt } from './bigint.js';
import type { Queryable } from './realms.js';
import type { TermDepositProductTable, TermDepositTable } from './schema.js';

export interface CustomerRecord {
  customerReference: string;
  name: string | null;
  status: string;
}

export interface AccountRecord {
  accountNumber: string;
  customerReference: string | null;
  currency: string;
  status: string;
  kind: string;
  balanceMinor: bigint;
}

export interface ProductRecord {
  productCode: string;
  componentCode: string;
  active: boolean;
  currencies: string[];
  minAmount: string;
  maxAmount: string;
  minDays: number;
  maxDays: number;
  dayCount: 'ACT/360' | 'ACT/365';
}

export interface TermDepositRecord {
  contractNumber: string;
  customerReference: string;
  productCode: string;
  componentCode: string;
  principalMinor: bigint;
  currency: string;
  ratePercent: string;
  dayCount: 'ACT/360' | 'ACT/365';
  valueDate: string;
  maturityDate: string;
  numberOfDays: number;
  sourceAccount: string;
  interestAccount: string;
  description: string | null;
  operationReference: string;
  status: string;
  createdAt: string;
}

export async function findCustomer(db: Queryable, reference: string): Promise<CustomerRecord | undefined> {
  const row = await db.selectFrom('customers').selectAll().where('customer_reference', '=', reference).executeTakeFirst();
  return row && { customerReference: row.customer_reference, name: row.name, status: row.status };
}

export async function insertCustomerIfMissing(db: Queryable, customer: CustomerRecord): Promise<void> {
  await db
    .insertInto('customers')
    .values({ customer_reference: customer.customerReference, name: customer.name, status: customer.status })
    .onConflict((c) => c.column('customer_reference').doNothing())
    .execute();
}

export async function findAccount(db: Queryable, accountNumber: string): Promise<AccountRecord | undefined> {
  const row = await db.selectFrom('accounts').selectAll().where('account_number', '=', accountNumber).executeTakeFirst();
  return (
    row && {
      accountNumber: row.account_number,
      customerReference: row.customer_reference,
      currency: row.currency,
      status: row.status,
      kind: row.kind,
      balanceMinor: toBigInt(row.balance_minor),
    }
  );
}

/** Inserts an account with a zero balance; answers whether it was missing. */
export async function insertAccountIfMissing(db: Queryable, account: Omit<AccountRecord, 'balanceMinor'>): Promise<boolean> {
  const result = await db
    .insertInto('accounts')
    .values({
      account_number: account.accountNumber,
      customer_reference: account.customerReference,
      currency: account.currency,
      status: account.status,
      kind: account.kind,
      balance_minor: 0n,
      created_at: new Date().toISOString(),
    })
    .onConflict((c) => c.column('account_number').doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
}

export async function findProduct(db: Queryable, productCode: string, componentCode: string): Promise<ProductRecord | undefined> {
  const row = await db
    .selectFrom('term_deposit_products')
    .selectAll()
    .where('product_code', '=', productCode)
    .where('component_code', '=', componentCode)
    .executeTakeFirst();
  return row && toProduct(row);
}

export async function insertProductIfMissing(db: Queryable, product: ProductRecord): Promise<void> {
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

export async function insertTermDeposit(db: Queryable, record: TermDepositRecord): Promise<void> {
  await db
    .insertInto('term_deposits')
    .values({
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
      created_at: record.createdAt,
    })
    .execute();
}

export async function findTermDeposit(db: Queryable, contractNumber: string): Promise<TermDepositRecord | undefined> {
  const row = await db.selectFrom('term_deposits').selectAll().where('contract_number', '=', contractNumber).executeTakeFirst();
  return row && toTermDeposit(row);
}

export async function findTermDepositByReference(db: Queryable, reference: string): Promise<TermDepositRecord | undefined> {
  const row = await db.selectFrom('term_deposits').selectAll().where('operation_reference', '=', reference).executeTakeFirst();
  return row && toTermDeposit(row);
}

function toProduct(row: Selectable<TermDepositProductTable>): ProductRecord {
  return {
    productCode: row.product_code,
    componentCode: row.component_code,
    active: Number(row.active) === 1,
    currencies: JSON.parse(row.currencies) as string[],
    minAmount: row.min_amount,
    maxAmount: row.max_amount,
    minDays: Number(row.min_days),
    maxDays: Number(row.max_days),
    dayCount: row.day_count as ProductRecord['dayCount'],
  };
}

function toTermDeposit(row: Selectable<TermDepositTable>): TermDepositRecord {
  return {
    contractNumber: row.contract_number,
    customerReference: row.customer_reference,
    productCode: row.product_code,
    componentCode: row.component_code,
    principalMinor: toBigInt(row.principal_minor),
    currency: row.currency,
    ratePercent: row.rate_percent,
    dayCount: row.day_count as TermDepositRecord['dayCount'],
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
