/**
 * The operator's toolkit (issue 12): add and list users, workstations, customers and accounts;
 * show an account with its postings, a term deposit, a loan facility. Everything goes through the
 * port (core-session.ts): the read side answers, and additions are a data-file fragment sent to
 * the load side, so a record added here is exactly what the same record in `demo/sandbox.json`
 * would be, and an existing one is never overwritten. With `--core-url` the remote core answers;
 * on the database of an API whose core is remote, without it, every command is refused naming it.
 * Reads need no master key: nothing sealed is read.
 */
import { CoreDataRefused, type CoreDataDocument, type CustomerRecord } from '../core/port.js';
import { accountView, bankRowsMax, loanFacilityView, postingsPage, termDepositView } from '../operator/bank-views.js';
import { CommandError } from './command-error.js';
import { withCore, type CoreFlags, type OperatorCore } from './core-session.js';

const directoryStatuses = ['Active', 'Disabled', 'Blocked'];

/** Adds core records as a data-file fragment: the same schema, checks and insert-if-missing rules. */
async function addRecords(core: OperatorCore, fragment: CoreDataDocument): Promise<void> {
  try {
    await core.loadData(fragment);
  } catch (error) {
    if (error instanceof CoreDataRefused) throw new CommandError(`the command line: ${error.field}: ${error.message.replace(/^core data: [^:]*: /, '')}`);
    throw error;
  }
}

function status(value: string | undefined): string {
  const chosen = value ?? 'Active';
  if (!directoryStatuses.includes(chosen)) throw new CommandError(`--status must be one of ${directoryStatuses.join(', ')}, got "${chosen}"`);
  return chosen;
}

/** A customer, found by paging the read side (the port lists customers in reference order). */
async function findCustomer(core: OperatorCore, reference: string): Promise<CustomerRecord | undefined> {
  for await (const customer of entries((page) => core.listCustomers(page))) if (customer.customerReference === reference) return customer;
  return undefined;
}

export async function addUser(flags: CoreFlags & { login: string; status?: string }): Promise<{ login: string; status: string; added: boolean }> {
  return withCore(flags, 'coregate users add', async (core) => {
    const existing = await core.userStatus(flags.login);
    if (!existing) await addRecords(core, { users: [{ login: flags.login, status: status(flags.status) }] });
    return { login: flags.login, status: existing ?? status(flags.status), added: !existing };
  });
}

type PagedList<T> = (page: { limit: number; offset: number }) => Promise<{ items: T[]; more: boolean }>;

/** The entries of a paged list of the read side, page after page, asked for as they are consumed. */
async function* entries<T>(list: PagedList<T>): AsyncGenerator<T> {
  for (let offset = 0; ; offset += bankRowsMax) {
    const page = await list({ limit: bankRowsMax, offset });
    yield* page.items;
    if (!page.more) return;
  }
}

/** Every entry of a paged list of the read side: a command lists them all, never only the first page. */
async function everyPage<T>(list: PagedList<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const entry of entries(list)) all.push(entry);
  return all;
}

export async function listUsers(flags: CoreFlags) {
  return withCore(flags, 'coregate users list', (core) => everyPage((page) => core.listUsers(page)));
}

export async function addWorkstation(flags: CoreFlags & { id: string; status?: string }): Promise<{ id: string; status: string; added: boolean }> {
  return withCore(flags, 'coregate workstations add', async (core) => {
    const existing = await core.workstationStatus(flags.id);
    if (!existing) await addRecords(core, { workstations: [{ id: flags.id, status: status(flags.status) }] });
    return { id: flags.id, status: existing ?? status(flags.status), added: !existing };
  });
}

export async function listWorkstations(flags: CoreFlags) {
  return withCore(flags, 'coregate workstations list', (core) => everyPage((page) => core.listWorkstations(page)));
}

export async function addCustomer(flags: CoreFlags & { customer: string; name?: string; status?: string }) {
  return withCore(flags, 'coregate customers add', async (core) => {
    if (await findCustomer(core, flags.customer)) throw new CommandError(`Customer "${flags.customer}" already exists (records are never overwritten)`);
    await addRecords(core, { customers: [{ customerReference: flags.customer, name: flags.name ?? flags.customer, status: flags.status ?? 'Active' }] });
    return { customerReference: flags.customer, name: flags.name ?? flags.customer, status: flags.status ?? 'Active' };
  });
}

export async function listCustomerRows(flags: CoreFlags) {
  return withCore(flags, 'coregate customers list', (core) => everyPage((page) => core.listCustomers(page)));
}

/** A customer account with its opening balance, posted against the bank's equity as the data file does. */
export async function addAccount(flags: CoreFlags & { account: string; customer: string; currency: string; balance?: string; status?: string }) {
  const balance = Number(flags.balance ?? '0');
  if (!/^\d+(\.\d+)?$/.test(flags.balance ?? '0') || !Number.isFinite(balance)) throw new CommandError(`--balance must be a plain decimal amount, e.g. 1500.00, got "${flags.balance}"`);
  return withCore(flags, 'coregate accounts add', async (core) => {
    if (await core.findAccount(flags.account)) throw new CommandError(`Account "${flags.account}" already exists (records are never overwritten)`);
    const customer = await findCustomer(core, flags.customer);
    if (!customer) throw new CommandError(`Customer "${flags.customer}" does not exist: add it first with \`coregate customers add --customer ${flags.customer}\``);
    await addRecords(core, {
      customers: [{ customerReference: customer.customerReference, name: customer.name ?? customer.customerReference, status: customer.status }],
      accounts: [{ accountNumber: flags.account, customerReference: flags.customer, currency: flags.currency, balance, status: flags.status ?? 'Active' }],
    });
    const added = await core.findAccount(flags.account);
    return added && accountView(added);
  });
}

export async function listAccountRows(flags: CoreFlags & { customer?: string }) {
  return withCore(flags, 'coregate accounts list', async (core) => (await everyPage((page) => core.listAccounts({ customerReference: flags.customer }, page))).map(accountView));
}

export async function showAccount(flags: CoreFlags & { account: string; limit?: string }) {
  if (!/^[1-9][0-9]{0,2}$/.test(flags.limit ?? '20') || Number(flags.limit ?? '20') > 500) throw new CommandError(`--limit must be a whole number from 1 to 500, got "${flags.limit}"`);
  return withCore(flags, 'coregate accounts show', async (core) => {
    const account = await core.findAccount(flags.account);
    if (!account) throw new CommandError(`Account "${flags.account}" does not exist`);
    const { postings, more } = await postingsPage(core, flags.account, Number(flags.limit ?? '20'), 0);
    return { account: accountView(account), postings, more };
  });
}

export async function showTermDeposit(flags: CoreFlags & { contract: string }) {
  return withCore(flags, 'coregate term-deposits show', async (core) => {
    const [deposit] = (await core.listTermDeposits({ contractNumber: flags.contract }, { limit: 1, offset: 0 })).items;
    if (!deposit) throw new CommandError(`Term deposit "${flags.contract}" does not exist`);
    return termDepositView(deposit);
  });
}

export async function showFacility(flags: CoreFlags & { loanId: string }) {
  return withCore(flags, 'coregate facilities show', async (core) => {
    const [facility] = (await core.listLoanFacilities({ loanId: flags.loanId }, { limit: 1, offset: 0 })).items;
    if (!facility) throw new CommandError(`Loan facility "${flags.loanId}" does not exist`);
    return loanFacilityView(facility);
  });
}
