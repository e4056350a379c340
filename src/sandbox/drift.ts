/**
 * What the data file says that the store does not (issue 12: editing the file and restarting
 * silently changed nothing). Loading never overwrites a record (a sandbox keeps what happened in
 * it), so at start each kind of record that differs is named, with how to apply the file:
 * `coregate sandbox reset`, or the operator commands. Reads only; secrets are compared as hashes.
 */
import type { LoadedParts } from './load.js';
import { verifyClientSecret } from '../auth/client-secret.js';
import { toMinorUnits } from '../core/money.js';
import { listClients } from '../store/clients.js';
import type { Queryable } from '../store/realms.js';
import type { SandboxData } from './data-file.js';

export interface Drift {
  /** The kind of record: "clients", "accounts", ... */
  kind: string;
  /** Each record that differs, with what differs: "treasury-app (secret, scopes)". */
  records: string[];
}

/** How to apply a kind's changes, for the start-up line. */
export const driftRemedy: Readonly<Record<string, string>> = {
  realms: '`coregate sandbox reset`',
  clients: '`coregate clients rotate-secret|enable|disable`, or `coregate sandbox reset`',
  users: '`coregate sandbox reset` (or add new users with `coregate users add`)',
  workstations: '`coregate sandbox reset` (or add new ones with `coregate workstations add`)',
  customers: '`coregate sandbox reset`',
  accounts: '`coregate sandbox reset` (balances move only by postings)',
};

function differing(fields: Array<[string, boolean]>): string[] {
  return fields.filter(([, differs]) => differs).map(([name]) => name);
}

/** The stored rows of a section's records, in one query (none for an empty section). */
async function rowsIn<Record, Row>(records: readonly Record[] | undefined, query: (keys: string[]) => Promise<Row[]>, keyOf: (record: Record) => string): Promise<Row[]> {
  return records === undefined || records.length === 0 ? [] : query(records.map(keyOf));
}

/** `parts`: `api` when the core is remote: its records are the core's, and this database has none of its tables. */
export async function findDrift(db: Queryable, data: SandboxData, secretHashKey: Buffer, parts: LoadedParts = 'all'): Promise<Drift[]> {
  const drifts: Drift[] = [];
  const add = (kind: string, record: string, fields: string[]) => {
    if (fields.length === 0) return;
    let drift = drifts.find((candidate) => candidate.kind === kind);
    if (!drift) drifts.push((drift = { kind, records: [] }));
    drift.records.push(`${record} (${fields.join(', ')})`);
  };

  for (const realm of data.realms ?? []) {
    const stored = await db.selectFrom('realms').selectAll().where('name', '=', realm.name).executeTakeFirst();
    if (!stored) continue;
    add('realms', realm.name, differing([
      ['audience', realm.audience !== undefined && realm.audience !== stored.audience],
      ['accessTokenLifespanSeconds', realm.accessTokenLifespanSeconds !== undefined && realm.accessTokenLifespanSeconds !== Number(stored.lifespan_seconds)],
    ]));
    const clients = new Map((await listClients(db, realm.name)).map((client) => [client.clientId, client]));
    for (const client of realm.clients ?? []) {
      const stored = clients.get(client.clientId);
      if (!stored) continue;
      add('clients', `${realm.name}/${client.clientId}`, differing([
        ['secret', !verifyClientSecret(secretHashKey, client.secret, stored.secretHash)],
        ['enabled', (client.enabled ?? true) !== stored.enabled],
        ['scopes', [...client.scopes].sort().join(' ') !== [...stored.scopes].sort().join(' ')],
        ['technicalUser', (client.technicalUser ?? null) !== stored.technicalUser],
        ['defaultWorkstation', (client.defaultWorkstation ?? null) !== stored.defaultWorkstation],
      ]));
    }
  }
  if (parts === 'api') return drifts;
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
