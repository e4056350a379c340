/**
 * `coregate users add|list` and `coregate workstations add|list`: the core's two directories,
 * the same two commands each on the entry's key (login, id), through the port
 * (operator-toolkit.ts, loaded when a command runs).
 */
import type { Command } from 'commander';
import { printerOf, table, type CommandIo, type Printer } from './command-io.js';
import { coreUrlOption, dbOption, jsonOption } from './common-options.js';
import type { CoreFlags } from './core-session.js';

const toolkit = () => import('./operator-toolkit.js');

/** One directory: its command, its entries' key and how it adds and lists them. */
interface Directory {
  name: string;
  noun: string;
  key: string;
  column: string;
  description: string;
  add(key: string, flags: CoreFlags & { status?: string }): Promise<{ result: unknown; status: string; added: boolean }>;
  list(flags: CoreFlags): Promise<Array<{ row: unknown; key: string; status: string }>>;
}

const directories: Directory[] = [
  {
    name: 'users', noun: 'User', key: 'login', column: 'LOGIN', description: 'the core\'s directory of users (backbone_user)',
    add: async (key: string, flags: CoreFlags & { status?: string }) => {
      const result = await (await toolkit()).addUser({ ...flags, login: key });
      return { result, status: result.status, added: result.added };
    },
    list: async (flags: CoreFlags) => (await (await toolkit()).listUsers(flags)).map((row) => ({ row, key: row.login, status: row.status })),
  },
  {
    name: 'workstations', noun: 'Workstation', key: 'id', column: 'ID', description: 'the core\'s directory of workstations',
    add: async (key: string, flags: CoreFlags & { status?: string }) => {
      const result = await (await toolkit()).addWorkstation({ ...flags, id: key });
      return { result, status: result.status, added: result.added };
    },
    list: async (flags: CoreFlags) => (await (await toolkit()).listWorkstations(flags)).map((row) => ({ row, key: row.id, status: row.status })),
  },
];

export function addDirectoryCommands(program: Command, io: CommandIo): void {
  for (const directory of directories) addDirectory(program, directory, printerOf(io));
}

function addDirectory(program: Command, directory: Directory, print: Printer): void {
  const command = program.command(directory.name).description(directory.description);
  command
    .command('add')
    .description(`add a ${directory.noun.toLowerCase()} (Active unless --status); an existing one is left as it is`)
    .argument(`<${directory.key}>`)
    .option('--status <status>', 'Active, Disabled or Blocked')
    .addOption(dbOption())
    .addOption(coreUrlOption())
    .addOption(jsonOption())
    .action(async (key: string, flags) => {
      const { result, status, added } = await directory.add(key, flags);
      if (flags.json) return print(result);
      print(added ? `${directory.noun} ${key} added (${status}).` : `${directory.noun} ${key} already exists (${status}): left as it is.`);
    });
  command
    .command('list')
    .description(`list the directory's ${directory.name}`)
    .addOption(dbOption())
    .addOption(coreUrlOption())
    .addOption(jsonOption())
    .action(async (flags) => {
      const entries = await directory.list(flags);
      if (flags.json) return print(entries.map((entry) => entry.row));
      print(table([directory.column, 'STATUS'], entries.map((entry) => [entry.key, entry.status])));
    });
}
