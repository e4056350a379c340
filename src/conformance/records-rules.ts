/**
 * The core's records as the API reads them (docs/core-port.md, "The read side and the load side"):
 * the directory (users and workstations: Active, Disabled, unknown); the load side, which adds
 * only what is missing and names the field it refuses; and the read side, when the core serves it
 * (a core that answers 404 NO_ROUTE does not: the rule is skipped, saying so).
 */
import { randomUUID } from 'node:crypto';
import { CoreDataRefused, type CoreRecords, type Page, type PageRequest } from '../core/port.js';
import { check, contractOf, executed, money, same } from './checks.js';
import { notServed } from './conformance-context.js';
import { RuleFailure, RuleSkipped } from './conformance-errors.js';
import type { ConformanceRule } from './conformance-rule.js';

/** Rows of the first page whose order the rule checks. */
const firstPageSize = 100;
/** Galloping steps at most: offsets up to 2^48. */
const gallopStepsMax = 48;

/**
 * The row of an ordered list whose key is `target`, without reading the list: lists are in their
 * keys' order (docs/core-protocol.md, "The read side"; compared as code units, as the kit's `<`
 * does), so rows read alone at galloping offsets bound its place, and halving finds it — some
 * 2 × log2(position) pages of one row, however long the list.
 */
export async function findInOrder<T>(list: (page: PageRequest) => Promise<Page<T>>, keyOf: (item: T) => string, target: string): Promise<T | undefined> {
  const at = async (offset: number) => (await list({ limit: 1, offset })).items[0];
  const atOrAfter = (item: T | undefined) => item === undefined || keyOf(item) >= target;
  // Before `low` every key is below the target; from `high` on none is.
  let low = -1;
  let high: number;
  for (let step = 1, steps = 0; ; step *= 2, steps += 1) {
    if (steps >= gallopStepsMax) return undefined;
    const offset = low + step;
    if (atOrAfter(await at(offset))) {
      high = offset;
      break;
    }
    low = offset;
  }
  while (high - low > 1) {
    const middle = low + Math.floor((high - low) / 2);
    if (atOrAfter(await at(middle))) high = middle;
    else low = middle;
  }
  const found = await at(high);
  return found !== undefined && keyOf(found) === target ? found : undefined;
}

function ordered(values: string[], what: string): void {
  for (let index = 1; index < values.length; index += 1) {
    const [previous, current] = [values[index - 1] ?? '', values[index] ?? ''];
    check(previous < current, `${what} are not in order: ${previous} before ${current}`);
  }
}

/** A page of two and the second item alone at offset 1 agree, and `more` says whether rows follow. */
async function pagesAgree<T>(list: (page: PageRequest) => Promise<Page<T>>, what: string): Promise<void> {
  const two = await list({ limit: 2, offset: 0 });
  check(two.items.length <= 2, `${what}: a page of limit 2 answered ${two.items.length} rows`);
  if (two.items.length < 2) return;
  const second = await list({ limit: 1, offset: 1 });
  same(second.items, two.items.slice(1), `${what}: the row at offset 1 of a page of one and of a page of two`);
  const first = await list({ limit: 1, offset: 0 });
  check(first.more, `${what}: a page of one row of at least two says no more follow`);
}

export const recordsRules: ConformanceRule[] = [
  {
    id: 'directory',
    title: 'the directory: userStatus and workstationStatus answer Active or Disabled for known entries, undefined (404 NotFound) for unknown ones',
    async run(context) {
      const { users, workstations } = context.fixtures;
      same(await context.port.userStatus(users.active), 'Active', `userStatus(${users.active})`);
      same(await context.port.userStatus(users.disabled), 'Disabled', `userStatus(${users.disabled})`);
      same(await context.port.userStatus(`ck-no-such-${randomUUID().slice(0, 8)}`), undefined, 'userStatus of an unknown login');
      same(await context.port.workstationStatus(workstations.active), 'Active', `workstationStatus(${workstations.active})`);
      same(await context.port.workstationStatus(workstations.disabled), 'Disabled', `workstationStatus(${workstations.disabled})`);
      same(await context.port.workstationStatus(`CK-NO-SUCH-${randomUUID().slice(0, 8)}`), undefined, 'workstationStatus of an unknown id');
    },
  },
  {
    id: 'load-side',
    title: 'the load side adds only what is missing and never overwrites a balance; a document it refuses is 400 DATA_REFUSED naming the field (accounts[0].currency) and loads nothing; the API\'s sections (realms, webhooks) are refused by name',
    async run(context) {
      const { dataLoad, loaded } = context;
      if (!dataLoad || !loaded) throw new RuleSkipped('the kit loaded no fixtures through the load side (the core does not serve it, or a fixture file was given)');
      const account = context.account('loadSide');
      const principal = context.principalMinor;
      const watch = await context.watch([account]);
      executed(await context.port.constituteTermDeposit(randomUUID(), context.deposit({ sourceAccount: account.accountNumber, principalMinor: principal })), 'TD', 'a deposit before loading again');
      same(await dataLoad.loadData(loaded), { accountsAdded: 0 }, 'loading the same document again adds nothing');

      // One thing wrong, at one place: the account's currency, written in lower case (ISO 4217 codes are
      // upper case; the balance of 1 is exact in any currency). The user beside it shows whether anything of the document was loaded.
      const suffix = randomUUID().slice(0, 8).toUpperCase();
      const customer = `CK-REFUSED-${suffix}`;
      const login = `ck-refused-${suffix.toLowerCase()}`;
      const refused = {
        users: [{ login, status: 'Active' }],
        customers: [{ customerReference: customer, name: 'refused', status: 'Active' }],
        accounts: [{ accountNumber: `${customer}-A`, customerReference: customer, currency: 'usd', balance: 1, status: 'Active' }],
      };
      try {
        await dataLoad.loadData(refused);
        throw new RuleFailure('a document with an account in currency "usd" (no ISO 4217 code: they are upper case) was loaded; expected 400 DATA_REFUSED naming accounts[0].currency');
      } catch (error) {
        if (!(error instanceof CoreDataRefused)) throw error;
        same(error.field, 'accounts[0].currency', 'the field named by the refusal of a document whose one fault is accounts[0].currency "usd" (docs/core-protocol.md, "The load side": `field` is the path, accounts[2].currency)');
      }
      same(await context.port.userStatus(login), undefined, `userStatus(${login}), a user of the refused document (nothing of it is loaded)`);
      if (context.records) same(await context.records.findAccount(`${customer}-A`), undefined, 'findAccount of the refused document\'s account');
      try {
        await dataLoad.loadData({ realms: [{ name: 'sandbox' }] });
        throw new RuleFailure('a document with the API\'s section realms was loaded; expected 400 DATA_REFUSED naming realms');
      } catch (error) {
        if (!(error instanceof CoreDataRefused)) throw error;
        same(error.field, 'realms', 'the field of a refused API section');
      }
      await watch.expectMoved(account, -principal, 'loading the same document again keeps the balance a deposit left (it never overwrites)');
    },
  },
  {
    id: 'read-side',
    title: 'the read side, when served: customers, users, workstations and accounts listed in order and paged, live balances, postings newest first with the balance after each, term deposits, facilities with their installments, posted references, a balanced ledger',
    async run(context) {
      const records: CoreRecords | undefined = context.records;
      if (!records) throw new RuleSkipped('the core does not serve the read side (GET /core/v1/accounts/{accountNumber} answered 404 NO_ROUTE)');
      const { fixtures } = context;
      const answered = await context.served(async () => {
        // Found by the lists' order and filters, never by reading a list whole: a bank's test core may hold millions of rows.
        const customer = await findInOrder((page) => records.listCustomers(page), (item) => item.customerReference, fixtures.customer);
        check(customer, `listCustomers does not list the customer ${fixtures.customer} where its order puts it (customers are listed by reference)`);
        const held = new Set([fixtures.accounts.source, fixtures.accounts.interest, fixtures.accounts.expense]).size;
        check(customer.accounts >= held, `listCustomers counts ${customer.accounts} accounts for ${fixtures.customer}, which holds at least ${held}`);
        same(customer.status, 'Active', `the status of customer ${fixtures.customer}`);
        await pagesAgree((page) => records.listCustomers(page), 'listCustomers');

        for (const [login, status] of [[fixtures.users.active, 'Active'], [fixtures.users.disabled, 'Disabled']] as const) {
          same((await findInOrder((page) => records.listUsers(page), (user) => user.login, login))?.status, status, `listUsers: ${login} (users are listed by login)`);
        }
        for (const [id, status] of [[fixtures.workstations.active, 'Active'], [fixtures.workstations.disabled, 'Disabled']] as const) {
          same((await findInOrder((page) => records.listWorkstations(page), (workstation) => workstation.id, id))?.status, status, `listWorkstations: ${id} (workstations are listed by id)`);
        }
        await pagesAgree((page) => records.listUsers(page), 'listUsers');

        const ofCustomer = (page: PageRequest) => records.listAccounts({ customerReference: fixtures.customer }, page);
        const accounts = await ofCustomer({ limit: firstPageSize, offset: 0 });
        ordered(accounts.items.map((account) => account.accountNumber), 'the customer\'s accounts');
        for (const item of accounts.items) same(item.customerReference, fixtures.customer, `account ${item.accountNumber}'s customer, listed for customer ${fixtures.customer}`);
        for (const number of [fixtures.accounts.source, fixtures.accounts.interest, fixtures.accounts.expense]) {
          const listed = await findInOrder(ofCustomer, (account) => account.accountNumber, number);
          check(listed, `listAccounts of customer ${fixtures.customer} does not list ${number}`);
          same(listed.customerReference, fixtures.customer, `account ${number}'s customer`);
        }
        await pagesAgree(ofCustomer, 'listAccounts');
        same(await records.findAccount(`CK-NO-SUCH-${randomUUID().slice(0, 8)}`), undefined, 'findAccount of an unknown account');
        same(await records.listPostings(`CK-NO-SUCH-${randomUUID().slice(0, 8)}`, { limit: 10, offset: 0 }), undefined, 'listPostings of an unknown account');

        // An operation shows in the records: the newest posting, the balance after it, the contract, the posted reference.
        const reference = randomUUID();
        const before = await records.findAccount(fixtures.accounts.source);
        check(before, `findAccount does not know ${fixtures.accounts.source}`);
        const contract = executed(await context.port.constituteTermDeposit(reference, context.deposit()), 'TD', 'a constitution');
        const after = await records.findAccount(fixtures.accounts.source);
        same(after?.balanceMinor, before.balanceMinor - contract.principalMinor, `the live balance of ${fixtures.accounts.source} after a deposit of ${money(contract.principalMinor, contract.currency)}`);
        const postings = await records.listPostings(fixtures.accounts.source, { limit: 5, offset: 0 });
        check(postings && postings.items.length > 0, `listPostings of ${fixtures.accounts.source} answered no posting after a deposit`);
        const [newest] = postings.items;
        same(newest?.reference, reference, 'the newest posting\'s reference (postings newest first)');
        same(newest?.amountMinor, -contract.principalMinor, 'the newest posting\'s amount');
        same(newest?.balanceAfterMinor, after?.balanceMinor, 'the newest posting\'s balance after it');
        for (let index = 1; index < postings.items.length; index += 1) {
          const [later, earlier] = [postings.items[index - 1], postings.items[index]];
          if (!later || !earlier) continue;
          same(earlier.balanceAfterMinor + later.amountMinor, later.balanceAfterMinor, `posting ${index + 1}'s balance after it plus posting ${index}'s amount (the balance after each posting)`);
        }
        const listed = await records.listTermDeposits({ contractNumber: contract.contractNumber }, { limit: 10, offset: 0 });
        same(listed.items.map((item) => contractOf(item)), [contractOf(contract)], `listTermDeposits of contract ${contract.contractNumber}`);
        check(/^\d{4}-\d{2}-\d{2}T/.test(listed.items[0]?.createdAt ?? ''), `the listed contract's createdAt "${listed.items[0]?.createdAt}" is no ISO time`);
        same((await records.postedReferences([reference, randomUUID()])).sort(), [reference], 'postedReferences of the deposit\'s reference and an unknown one');

        const facilities = await records.listLoanFacilities({ loanId: fixtures.facility.loanId }, { limit: 10, offset: 0 });
        same(facilities.items.map((item) => item.loanId), [fixtures.facility.loanId], `listLoanFacilities of ${fixtures.facility.loanId}`);
        const facility = facilities.items[0];
        check(facility?.installments.some((installment) => installment.sequence === fixtures.facility.installment), `facility ${fixtures.facility.loanId} lists no installment ${fixtures.facility.installment}`);
        same(facility?.currency, fixtures.facility.currency, 'the facility\'s currency');

        const ledger = await records.checkLedger(100);
        same(
          { unbalancedMovements: ledger.unbalancedMovements, balanceMismatches: ledger.balanceMismatches, negativeCustomerAccounts: ledger.negativeCustomerAccounts, termDepositMismatches: ledger.termDepositMismatches },
          { unbalancedMovements: [], balanceMismatches: [], negativeCustomerAccounts: [], termDepositMismatches: [] },
          'the ledger check\'s findings',
        );
        check(ledger.movements > 0 && ledger.accounts > 0, `the ledger check proved ${ledger.movements} movements and ${ledger.accounts} accounts`);
      });
      if (answered === notServed) throw new RuleFailure('the core serves part of the read side only: a route of it answered 404 NO_ROUTE (docs/core-protocol.md, "The read side")');
    },
  },
];
