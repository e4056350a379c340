/**
 * The core's part of a data file (docs/sandbox.md, "The data file"): the directory, the calendar and
 * business date, customers, accounts, term deposit products and merchandising loans. The reference
 * core owns this format: it loads it into its own tables (storage/load-core-data.ts), and its load
 * side checks a document with it (storage/core-data-load.ts). The sandbox's data file
 * (src/sandbox/data-file.ts) is these sections and the API's own (realms, webhooks). Every error
 * names its field.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { isCalendarDate } from '../core/calendar-date.js';
import { currencyExponent } from '../core/currencies.js';
import { parseAmount } from '../core/money.js';

export const Identifier = (description: string) => Type.String({ minLength: 1, maxLength: 128, description });
export const IsoDate = Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'YYYY-MM-DD' });
export const Status = Type.Union([Type.Literal('Active'), Type.Literal('Disabled'), Type.Literal('Blocked')]);
export const Amount = Type.Number({ minimum: 0 });
export const CurrencyCode = Type.String({ pattern: '^[A-Z]{3}$' });

const Charges = Type.Object({
  fixedFee: Amount,
  commissionRate: Type.Number({ minimum: 0 }),
  minimumCommission: Amount,
  taxRate: Type.Number({ minimum: 0 }),
});

const Installment = Type.Object({
  sequence: Type.Integer({ minimum: 1 }),
  dueDate: IsoDate,
  amount: Amount,
  amountPaid: Type.Optional(Amount),
});

/** The core's sections of a data file, every one optional. */
export const coreDataSections = {
  businessDate: Type.Optional(IsoDate),
  calendar: Type.Optional(
    Type.Object({
      weekend: Type.Optional(
        Type.Array(
          Type.Union(['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY', 'SUNDAY'].map((d) => Type.Literal(d))),
        ),
      ),
      holidays: Type.Optional(Type.Array(IsoDate)),
    }),
  ),
  users: Type.Optional(Type.Array(Type.Object({ login: Identifier('user login'), status: Status }))),
  workstations: Type.Optional(Type.Array(Type.Object({ id: Identifier('workstation id'), status: Status }))),
  customers: Type.Optional(
    Type.Array(Type.Object({ customerReference: Identifier('customer number'), name: Type.Optional(Type.String()), status: Status })),
  ),
  accounts: Type.Optional(
    Type.Array(
      Type.Object({
        accountNumber: Identifier('account number'),
        customerReference: Identifier('owner'),
        currency: CurrencyCode,
        balance: Amount,
        status: Status,
      }),
    ),
  ),
  termDepositProducts: Type.Optional(
    Type.Array(
      Type.Object({
        productCode: Identifier('product code'),
        componentCode: Identifier('component code'),
        active: Type.Boolean(),
        currencies: Type.Array(CurrencyCode),
        minAmount: Amount,
        maxAmount: Amount,
        minDays: Type.Integer({ minimum: 1 }),
        maxDays: Type.Integer({ minimum: 1 }),
        dayCount: Type.Union([Type.Literal('ACT/360'), Type.Literal('ACT/365')]),
      }),
    ),
  ),
  merchandisingLoans: Type.Optional(
    Type.Array(
      Type.Object({
        merchandisingLoanId: Identifier('facility id'),
        customerReference: Identifier('facility customer'),
        merchandisingLoanType: Type.String({ minLength: 1 }),
        merchandisingLoanFacilityParameterType: Type.String({ minLength: 1 }),
        currency: CurrencyCode,
        approvedLimit: Amount,
        status: Type.String({ minLength: 1 }),
        finalMaturityDate: IsoDate,
        charges: Charges,
        installments: Type.Array(Installment),
      }),
    ),
  ),
};

export const CoreDataFile = Type.Object(coreDataSections);
export type CoreData = Static<typeof CoreDataFile>;

const compiled = TypeCompiler.Compile(CoreDataFile);

export class DataFileError extends Error {
  constructor(
    readonly file: string,
    readonly field: string,
    problem: string,
  ) {
    super(field === '' ? `data file ${file}: ${problem}` : `${file}: ${field}: ${problem}`);
    this.name = 'DataFileError';
  }
}

/** A document of the core's sections only, checked as the data file checks them (shape, dates, unique ids, money and owners). */
export function parseCoreData(value: unknown, file: string): CoreData {
  const first = compiled.Errors(value).First();
  if (first) throw new DataFileError(file, toFieldName(first.path), describe(first.schema, first.message));
  const data = value as CoreData;
  checkCoreDates(data, file);
  checkCoreUniques(data, file);
  checkCoreMoneyAndOwners(data, file);
  return data;
}

export function checkCoreDates(data: CoreData, file: string): void {
  const dates: Array<[string, string | undefined]> = [['businessDate', data.businessDate]];
  (data.calendar?.holidays ?? []).forEach((d, i) => dates.push([`calendar.holidays[${i}]`, d]));
  (data.merchandisingLoans ?? []).forEach((loan, i) => {
    dates.push([`merchandisingLoans[${i}].finalMaturityDate`, loan.finalMaturityDate]);
    loan.installments.forEach((inst, j) => dates.push([`merchandisingLoans[${i}].installments[${j}].dueDate`, inst.dueDate]));
  });
  for (const [field, date] of dates) {
    if (date !== undefined && !isCalendarDate(date)) throw new DataFileError(file, field, `"${date}" is not a calendar date`);
  }
}

/** The core's records are unique by their identifiers. */
export function checkCoreUniques(data: CoreData, file: string): void {
  checkUnique(file, 'users', (data.users ?? []).map((u) => u.login), 'login');
  checkUnique(file, 'workstations', (data.workstations ?? []).map((w) => w.id), 'id');
  checkUnique(file, 'customers', (data.customers ?? []).map((c) => c.customerReference), 'customerReference');
  checkUnique(file, 'accounts', (data.accounts ?? []).map((a) => a.accountNumber), 'accountNumber');
  checkUnique(file, 'merchandisingLoans', (data.merchandisingLoans ?? []).map((l) => l.merchandisingLoanId), 'merchandisingLoanId');
}

/** Amounts must be exact in their currency's minor units; accounts and loans need a known customer. */
export function checkCoreMoneyAndOwners(data: CoreData, file: string): void {
  const customers = new Set((data.customers ?? []).map((c) => c.customerReference));
  const exact = (field: string, amount: number, currency: string) => {
    if (currencyExponent(currency) === undefined) throw new DataFileError(file, field, `"${currency}" is not an active ISO 4217 currency`);
    if (amount !== 0 && !parseAmount(amount, currency).ok) {
      throw new DataFileError(file, field, `${amount} is not an exact amount of ${currency} (ISO 4217 minor units, at most 15 digits)`);
    }
  };
  (data.accounts ?? []).forEach((account, i) => {
    exact(`accounts[${i}].balance`, account.balance, account.currency);
    if (!customers.has(account.customerReference)) {
      throw new DataFileError(file, `accounts[${i}].customerReference`, `customer "${account.customerReference}" is not in customers`);
    }
  });
  (data.termDepositProducts ?? []).forEach((product, i) => {
    product.currencies.forEach((currency, j) => {
      if (currencyExponent(currency) === undefined) {
        throw new DataFileError(file, `termDepositProducts[${i}].currencies[${j}]`, `"${currency}" is not an active ISO 4217 currency`);
      }
      exact(`termDepositProducts[${i}].minAmount`, product.minAmount, currency);
      exact(`termDepositProducts[${i}].maxAmount`, product.maxAmount, currency);
    });
    if (product.minAmount > product.maxAmount) throw new DataFileError(file, `termDepositProducts[${i}].minAmount`, 'is above maxAmount');
    if (product.minDays > product.maxDays) throw new DataFileError(file, `termDepositProducts[${i}].minDays`, 'is above maxDays');
  });
  (data.merchandisingLoans ?? []).forEach((loan, i) => {
    if (!customers.has(loan.customerReference)) {
      throw new DataFileError(file, `merchandisingLoans[${i}].customerReference`, `customer "${loan.customerReference}" is not in customers`);
    }
    exact(`merchandisingLoans[${i}].approvedLimit`, loan.approvedLimit, loan.currency);
    exact(`merchandisingLoans[${i}].charges.fixedFee`, loan.charges.fixedFee, loan.currency);
    exact(`merchandisingLoans[${i}].charges.minimumCommission`, loan.charges.minimumCommission, loan.currency);
    loan.installments.forEach((installment, j) => {
      exact(`merchandisingLoans[${i}].installments[${j}].amount`, installment.amount, loan.currency);
      if (installment.amountPaid !== undefined) exact(`merchandisingLoans[${i}].installments[${j}].amountPaid`, installment.amountPaid, loan.currency);
    });
    checkUnique(file, `merchandisingLoans[${i}].installments`, loan.installments.map((inst) => String(inst.sequence)), 'sequence');
  });
}

export function checkUnique(file: string, section: string, ids: string[], key: string): void {
  const seen = new Set<string>();
  ids.forEach((id, index) => {
    if (seen.has(id)) throw new DataFileError(file, `${section}[${index}].${key}`, `duplicate value "${id}"`);
    seen.add(id);
  });
}

/** `/realms/0/clients/1/secret` → `realms[0].clients[1].secret`. */
export function toFieldName(pointer: string): string {
  return pointer
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((name, part) => (/^\d+$/.test(part) ? `${name}[${part}]` : name === '' ? part : `${name}.${part}`), '');
}

export function describe(schema: TSchema, message: string): string {
  return schema.description ? `${message} (${schema.description})` : message;
}
