/**
 * The core's part of the data file's drift (src/sandbox/drift.ts): the directory, customers and
 * accounts of the file that the core's tables hold with other values. Loading never overwrites a
 * record, so these are named at start with how to apply them. Reads only.
 */
import { toMinorUnits } from '../../core/money.js';
import type { CoreData } from '../core-data-file.js';
import type { CoreDb } from './core-db.js';

export interface Drift {
  /** The kind of record: "clients", "accounts", ... */
  kind: string;
  /** Each record that differs, with what differs: "treasury-app (secret, scopes)". */
  records: string[];
}

/** The names of the fields that differ. */
export function differing(fields: Array<[string, boolean]>): string[] {
  return fields.filter(([, differs]) => differs).map(([name]) => name);
}

/** Adds a record's differing fields to `drifts` under its kind (kinds in the order first met); nothing when none differs. */
export function driftCollector(drifts: Drift[]): (kind: string, record: string, fields: string[]) => void {
  return (kind, record, fields) => {
    if (fields.length === 0) return;
    let drift = drifts.find((candidate) => candidate.kind === kind);
    if (!drift) drifts.push((drift = { kind, records: [] }));
    drift.records.push(`${record} (${fields.join(', ')})`);
  };
}

/** The stored rows of a section's records, in one query (none for an empty section). */
async function rowsIn<Record, Row>(records: readonly Record[] | undefined, query: (keys: string[]) => Promise<Row[]>, keyOf: (record: Record) => string): Promise<Row[]> {
  return records === undefined || records.length === 0 ? [] : query(records.map(keyOf));
}

export async function findCoreDrift(db: CoreDb, data: CoreData): Promise<Drift[]> {
  const drifts: Drift[] = [];
  const add = driftCollector(drifts);
  // One query per kind (start-up work): the records of the file that the store holds.
  const users = new Map((await rowsIn(data.users, (logins) => db.selectFrom('directory_users').select(['login', 'status']).where('login', 'in', logins).execute(), (user) => user.login)).map((row) => [row.login, row]));
  for (const user of data.users ?? []) {
    const stored = users.get(user.login);
    if (stored) add('users', user.login, differing([['status', stored.status !== user.status]]));
  }
  const workstations = new Map((await rowsIn(data.workstations, (ids) => db.selectFrom('workstations').select(['id', 'status']).where('id', 'in', ids).execute(), (workstation) => workstation.id)).map((row) => [row.id, row]));
  for (const workstation of data.workstations ?? []) {
    const stored = workstations.get(workstation.id);
    if (stored) add('workstations', workstation.id, differing([['status', stored.status !== workstation.status]]));
  }
  const customers = new Map((await rowsIn(data.customers, (references) => db.selectFrom('customers').selectAll().where('customer_reference', 'in', references).execute(), (customer) => customer.customerReference)).map((row) => [row.customer_reference, row]));
  for (const customer of data.customers ?? []) {
    const stored = customers.get(customer.customerReference);
    if (stored) add('customers', customer.customerReference, differing([['name', (customer.name ?? null) !== stored.name], ['status', customer.status !== stored.status]]));
  }
  const accountNumbers = (data.accounts ?? []).map((account) => account.accountNumber);
  const accounts = new Map((await rowsIn(data.accounts, (numbers) => db.selectFrom('accounts').selectAll().where('account_number', 'in', numbers).execute(), (account) => account.accountNumber)).map((row) => [row.account_number, row]));
  // The file's balance is the opening balance: compare it with the opening posting, not with today's balance.
  const openings = new Map(
    (accountNumbers.length === 0
      ? []
      : await db
          .selectFrom('postings')
          .innerJoin('movements', 'movements.id', 'postings.movement_id')
          .select(['postings.account_number', 'postings.amount_minor'])
          .where('movements.reference', 'in', accountNumbers.map((number) => `opening-${number}`))
          .execute()
    ).map((row) => [row.account_number, BigInt(row.amount_minor)]),
  );
  for (const account of data.accounts ?? []) {
    const stored = accounts.get(account.accountNumber);
    if (!stored) continue;
    add('accounts', account.accountNumber, differing([
      ['opening balance', toMinorUnits(account.balance, account.currency) !== (openings.get(account.accountNumber) ?? 0n)],
      ['currency', account.currency !== stored.currency],
      ['status', account.status !== stored.status],
      ['customerReference', account.customerReference !== stored.customer_reference],
    ]));
  }
  return drifts;
}
