/**
 * `coregate customers add|list`, `accounts add|list|show`, `term-deposits show`, `facilities show`:
 * the operator's toolkit on the core's records, through the port (operator-toolkit.ts, loaded when
 * a command runs). A `show` command prints what bank-descriptions.ts says of the record; --json
 * prints the record itself.
 */
import type { Command } from 'commander';
import { printerOf, table, type CommandIo, type Printer } from './command-io.js';
import { coreUrlOption, dbOption, jsonOption } from './common-options.js';

const toolkit = () => import('./operator-toolkit.js');
const descriptions = () => import('./bank-descriptions.js');

export function addBankCommands(program: Command, io: CommandIo): void {
  const print = printerOf(io);
  addCustomerCommands(program, print);
  addAccountCommands(program, print);
  addContractCommands(program, print);
}

function addCustomerCommands(program: Command, print: Printer): void {
  const customers = program.command('customers').description('the reference core\'s customers');
  customers
    .command('add')
    .description('add a customer')
    .requiredOption('--customer <reference>', 'customer reference, e.g. C0003')
    .option('--name <name>', 'the customer\'s name')
    .option('--status <status>', 'Active (default), Blocked, Closed or Inactive')
    .addOption(dbOption())
    .addOption(coreUrlOption())
    .addOption(jsonOption())
    .action(async (flags) => {
      const result = await (await toolkit()).addCustomer(flags);
      if (flags.json) return print(result);
      print(`Customer ${result.customerReference} (${result.name}) added, ${result.status}.`);
    });
  customers
    .command('list')
    .description('list customers with their number of accounts')
    .addOption(dbOption())
    .addOption(coreUrlOption())
    .addOption(jsonOption())
    .action(async (flags) => {
      const rows = await (await toolkit()).listCustomerRows(flags);
      if (flags.json) return print(rows);
      print(table(['CUSTOMER', 'NAME', 'STATUS', 'ACCOUNTS'], rows.map((row) => [row.customerReference, row.name ?? '', row.status, String(row.accounts)])));
    });
}

function addAccountCommands(program: Command, print: Printer): void {
  const accounts = program.command('accounts').description('the reference core\'s customer accounts');
  accounts
    .command('add')
    .description('open an account with an opening balance (posted against the bank\'s equity, as the data file does)')
    .requiredOption('--account <number>', 'account number')
    .requiredOption('--customer <reference>', 'the owning customer')
    .requiredOption('--currency <code>', 'ISO 4217 currency, e.g. USD')
    .option('--balance <amount>', 'opening balance as a decimal, e.g. 1500.00 (default 0)')
    .option('--status <status>', 'Active (default), Blocked, Closed or Inactive')
    .addOption(dbOption())
    .addOption(coreUrlOption())
    .addOption(jsonOption())
    .action(async (flags) => {
      const account = await (await toolkit()).addAccount(flags);
      if (flags.json) return print(account);
      print(`Account ${account?.accountNumber} of ${account?.customerReference} opened: ${account?.balance.amount} ${account?.currency}.`);
    });
  accounts
    .command('list')
    .description('list customer accounts with their live balances')
    .option('--customer <reference>', 'only this customer\'s')
    .addOption(dbOption())
    .addOption(coreUrlOption())
    .addOption(jsonOption())
    .action(async (flags) => {
      const rows = await (await toolkit()).listAccountRows(flags);
      if (flags.json) return print(rows);
      print(table(['ACCOUNT', 'CUSTOMER', 'STATUS', 'BALANCE'], rows.map((row) => [row.accountNumber, row.customerReference ?? '', row.status, `${row.balance.amount} ${row.currency}`])));
    });
  accounts
    .command('show')
    .description('an account\'s balance and its latest postings')
    .argument('<accountNumber>')
    .option('--limit <n>', 'postings to show (default 20)')
    .addOption(dbOption())
    .addOption(coreUrlOption())
    .addOption(jsonOption())
    .action(async (account: string, flags) => {
      const shown = await (await toolkit()).showAccount({ ...flags, account });
      if (flags.json) return print(shown);
      print((await descriptions()).describeAccount(shown));
    });
}

/** A term deposit and a loan facility, each shown as the core keeps it. */
function addContractCommands(program: Command, print: Printer): void {
  program
    .command('term-deposits')
    .description('the reference core\'s term deposits')
    .command('show')
    .description('a term deposit as the core keeps it, with its expected interest and status')
    .argument('<termDepositAccount>')
    .addOption(dbOption())
    .addOption(coreUrlOption())
    .addOption(jsonOption())
    .action(async (contract: string, flags) => {
      const deposit = await (await toolkit()).showTermDeposit({ ...flags, contract });
      print(flags.json ? deposit : (await descriptions()).describeTermDeposit(deposit));
    });
  program
    .command('facilities')
    .description('the reference core\'s loan facilities')
    .command('show')
    .description('a loan facility: installments, outstanding, limit used')
    .argument('<merchandisingLoanId>')
    .addOption(dbOption())
    .addOption(coreUrlOption())
    .addOption(jsonOption())
    .action(async (loanId: string, flags) => {
      const facility = await (await toolkit()).showFacility({ ...flags, loanId });
      print(flags.json ? facility : (await descriptions()).describeFacility(facility));
    });
}
