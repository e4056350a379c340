/**
 * `coregate console`: its flags and what it prints. The work (a one-time login token in the
 * store) is console-command.ts, loaded when it runs.
 */
import type { Command } from 'commander';
import { printerOf, type CommandIo } from './command-io.js';
import { dbOption, jsonOption } from './common-options.js';

export function addConsoleLoginCommand(program: Command, io: CommandIo): void {
  const print = printerOf(io);
  program
    .command('console')
    .description('print a one-time URL that logs in to the console (/console); it works once, within 10 minutes, and opens an 8-hour session')
    .addOption(dbOption())
    .option('--url <base>', 'the service\'s base URL as the browser reaches it (env COREGATE_PUBLIC_URL, default http://localhost:8080)')
    .addOption(jsonOption())
    .action(async (flags) => {
      const login = await (await import('./console-command.js')).consoleCommand(flags);
      if (flags.json) return print(login);
      print(`Open this URL to log in to the console (once, before ${login.expiresAt}):\n  ${login.url}`);
    });
}
