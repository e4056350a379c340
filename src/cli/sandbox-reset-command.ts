/**
 * `coregate sandbox reset`: its flags, what it prints, and exit code 2 when the operator declines.
 * The work (asking first, emptying the store, loading the data file) is sandbox-commands.ts,
 * loaded when it runs.
 */
import { Option, type Command } from 'commander';
import { printerOf, type CommandIo } from './command-io.js';
import { coreUrlOption, dbOption, jsonOption } from './common-options.js';
import { ExitCode } from './exit-code.js';

export function addSandboxResetCommand(program: Command, io: CommandIo): void {
  const print = printerOf(io);
  const sandbox = program.command('sandbox').description('the integration sandbox (docs/sandbox.md)');
  sandbox
    .command('reset')
    .description('empty the store and load the data file again, as a new sandbox (asks first; --yes without a terminal)')
    .addOption(new Option('--data <file>', 'the sandbox data file to load').makeOptionMandatory())
    .addOption(coreUrlOption())
    .option('--yes', 'do not ask for confirmation')
    .option('--webhook-allow-private', 'the file\'s webhook endpoints may name loopback and private addresses, as serve\'s flag (env COREGATE_WEBHOOK_ALLOW_PRIVATE)')
    .addOption(dbOption())
    .addOption(jsonOption())
    .action(async (flags) => {
      const commands = await import('./sandbox-commands.js');
      const summary = await commands.sandboxReset(flags, io);
      if (!summary) {
        io.stderr.write('coregate: sandbox reset cancelled, nothing changed\n');
        throw new ExitCode(2);
      }
      if (flags.json) return print(summary);
      print(commands.describeReset(summary));
    });
}
