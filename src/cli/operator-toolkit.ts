/**
 * The operator's toolkit on the store (issue 12): add and list users, workstations, customers and
 * accounts; show an account with its postings, a term deposit, a loan facility. Additions go
 * through the data file's own loader and checks (src/sandbox), so a record added here is exactly
 * what the same record in `demo/sandbox.json` would be, and an existing one is never overwritten.
 * Reads need no master key: nothing sealed is read.
 */
import { parseSandboxData, type SandboxData } from '../sandbox/data-file.js';
import { loadCoreSandboxData } from '../sandbox/load.js';
import type { Store } from '../store/connect.js';
import { findAccountView, listAccounts, listCustomers, listLoanFacilities, listPostings, listTermDeposits } from '../store/operator-queries.js';
import { CommandError } from './command-error.js';
import { withStoreReadOnly, type StoreFlags } from './store-session.js';

const directoryStatuses = ['Active', 'Disabled', 'Blocked'];

/** Adds core records as a data-file fragment: the same schema, checks and insert-if-missing rules. */
async function addRecords(store: Store, fragment: SandboxData): Promise<void> {
  await loadCoreSandboxData(store, parseSandboxData(fragment, 'the command line'));
}

function status(value: string | undefined): string {
  const chosen = value ?? 'Active';
  if (!directoryStatuses.includes(chosen)) throw new CommandError(`--status must be one of ${directoryStatuses.join(', ')}, got "${chosen}"`);
  return chosen;
}

export async function addUser(flags: StoreFlags & { login: string; status?: string }): Promise<{ login: string; status: string; added: boolean }> {
  return withStoreReadOnly(flags, async (store) => {
    const existing = await store.db.selectFrom('directory_users').select('status').where('login', '=', flags.login).executeTakeFirst();
    if (!existing) await addRecords(store, { users: [{ login: flags.login, status: status(flags.status) }] } as SandboxData);
    return { login: flags.login, status: existing?.status ?? status(flags.status), added: !existing };
  });
}

export async function listUsers(flags: StoreFlags) {
  return withStoreReadOnly(flags, (store) => store.db.selectFrom('directory_users').select(['login', 'status']).orderBy('login').execute());
}

export async function addWorkstation(flags: StoreFlags & { id: string; status?: string }): Promise<{ id: string; status: string; added: boolean }> {
  return withStoreReadOnly(flags, async (store) => {
    const existing = await store.db.selectFrom('workstations').select('status').where('id', '=', flags.id).executeTakeFirst();
    if (!existing) await addRecords(store, { workstations: [{ id: flags.id, status: status(flags.status) }] } as SandboxData);
    return { id: flags.id, status: existing?.status ?? status(flags.status), added: !existing };
  });
}

export async function listWorkstations(flags: StoreFlags) {
  return withStoreReadOnly(flags, (store) => store.db.selectFrom('workstations').select(['id', 'status']).orderBy('id').execute());
}

export async function addCustomer(flags: StoreFlags & { customer: string; name?: string; status?: string }) {
  return withStoreReadOnly(flags, async (store) => {
    const existing = await store.db.selectFrom('customers').select('customer_reference').where('customer_reference', '=', flags.customer).executeTakeFirst();
    if (existing) throw new CommandError(`Customer "${flags.customer}" already exists (records are never overwritten)`);
    await addRecords(store, { customers: [{ customerReference: flags.customer, name: flags.name ?? flags.customer, status: flags.status ?? 'Active' }] } as SandboxData);
    return { customerReference: flags.customer, name: flags.name ?? flags.customer, status: flags.status ?? 'Active' };
  });
}

export async function listCustomerRows(flags: StoreFlags) {
  return withStoreReadOnly(flags, (store) => listCustomers(store.db));
}

/** A customer account with its opening balance, posted against the bank's equity as the data file does. */
export async function addAccount(flags: StoreFlags & { account: string; customer: string; currency: string; balance?: string; status?: string }) {
  const balance = Number(flags.balance ?? '0');
  if (!/^\d+(\.\d+)?$/.test(flags.balance ?? '0') || !Number.isFinite(balance)) throw new CommandError(`--balance must be a plain decimal amount, e.g. 1500.00, got "${flags.balance}"`);
  return withStoreReadOnly(flags, async (store) => {
    if (await findAccountView(store.db, flags.account)) throw new CommandError(`Account "${flags.account}" already exists (records are never overwritten)`);
    const customer = await store.db.selectFrom('customers').selectAll().where('customer_reference', '=', flags.customer).executeTakeFirst();
    if (!customer) throw new CommandError(`Customer "${flags.customer}" does not exist: add it first with \`coregate customers add --customer ${flags.customer}\``);
    await addRecords(store, {
      customers: [{ customerReference: customer.customer_reference, name: customer.name ?? customer.customer_reference, status: customer.status }],
      accounts: [{ accountNumber: flags.account, customerReference: flags.customer, currency: flags.currency, balance, status: flags.status ?? 'Active' }],
    } as SandboxData);
    return findAccountView(store.db, flags.account);
  });
}

export async function listAccountRows(flags: StoreFlags & { customer?: string }) {
  return withStoreReadOnly(flags, (store) => listAccounts(store.db, { customerReference: flags.customer }));
}

export async function showAccount(flags: StoreFlags & { account: string; limit?: string }) {
  if (!/^[1-9][0-9]{0,2}$/.test(flags.limit ?? '20') || Number(flags.limit ?? '20') > 500) throw new CommandError(`--limit must be a whole number from 1 to 500, got "${flags.limit}"`);
  return withStoreReadOnly(flags, async (store) => {
    const account = await findAccountView(store.db, flags.account);
    if (!account) throw new CommandError(`Account "${flags.account}" does not exist`);
    const { postings, more } = await listPostings(store.db, account, Number(flags.limit ?? '20'), 0);
    return { account, postings, more };
  });
}

export async function showTermDeposit(flags: StoreFlags & { contract: string }) {
  return withStoreReadOnly(flags, async (store) => {
    const [deposit] = await listTermDeposits(store.db, { contractNumber: flags.contract, limit: 1 });
    if (!deposit) throw new CommandError(`Term deposit "${flags.contract}" does not exist`);
    return deposit;
  });
}

export async function showFacility(flags: StoreFlags & { loanId: string }) {
  return withStoreReadOnly(flags, async (store) => {
    const facility = (await listLoanFacilities(store.db)).find((candidate) => candidate.merchandisingLoanId === flags.loanId);
    if (!facility) throw new CommandError(`Loan facility "${flags.loanId}" does not exist`);
    return facility;
  });
}
