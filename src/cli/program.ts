/**
 * The `coregate` command's program: the root command, then each command group as its own module
 * declares it (its flags, help and what it prints), in the order `coregate --help` lists them. Built
 * anew for each run, on the streams, environment and clock it is given (src/cli/command-io.ts):
 * commander keeps a parse's option values on its commands. The process entry is main.ts;
 * run-command.ts runs it.
 */
import { Command } from 'commander';
import { systemClock } from '../clock/system-clock.js';
import type { Clock } from '../core/clock.js';
import { version } from '../version.js';
import type { CommandIo } from './command-io.js';
import { addServeCommand } from './serve-command.js';
import { addCoreCommands } from './core-commands.js';
import { addOauthClientCommands } from './oauth-client-commands.js';
import { addSigningKeyCommands } from './signing-key-commands.js';
import { addDirectoryCommands } from './directory-commands.js';
import { addBankCommands } from './bank-commands.js';
import { addRealmCommands } from './realm-commands.js';
import { addCheckCommand } from './check-command.js';
import { addConsoleLoginCommand } from './console-login-command.js';
import { addAuditCommands } from './audit-commands.js';
import { addClientCommands } from './client-commands.js';
import { addWebhookCommands } from './webhook-commands.js';
import { addFapiCommands } from './fapi-commands.js';
import { addSandboxResetCommand } from './sandbox-reset-command.js';

export function coregateProgram(io: CommandIo): Command {
  const program = rootCommand(io, io.clock ?? systemClock);
  // The order is the help's: `coregate --help` lists the commands as they are added.
  addServeCommand(program);
  addCoreCommands(program, io);
  addOauthClientCommands(program, io);
  addSigningKeyCommands(program, io);
  addDirectoryCommands(program, io);
  addBankCommands(program, io);
  addRealmCommands(program, io);
  addCheckCommand(program, io);
  addConsoleLoginCommand(program, io);
  addAuditCommands(program, io);
  // token, term-deposit, loan, operations: the CLI as a client of a running server (SDK).
  addClientCommands(program, io);
  addWebhookCommands(program, io);
  addFapiCommands(program, io);
  addSandboxResetCommand(program, io);
  return program;
}

/** `coregate` itself: its help, version and error output, and what every command's flags carry. */
function rootCommand(io: CommandIo, clock: Clock): Command {
  const program = new Command('coregate')
    .description('Banking integration service: auth service, business API and reference core banking system')
    .version(version, '-V, --version', 'print the version')
    .showHelpAfterError()
    // Commander ends with an exception instead of process.exit: run-command.ts turns it into the exit code.
    .exitOverride()
    // Unknown "--option=value" arguments are reported without their value, which may be a secret;
    // a secret never comes from a flag (shell history, process lists).
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
      outputError: (text, write) => {
        const redacted = text.replace(/(unknown option '[^'=]*)=[^']*'/g, "$1=…'");
        const hint = /unknown option '--client-secret/.test(redacted)
          ? 'coregate: the client secret is never taken from a flag: set COREGATE_CLIENT_SECRET or answer the prompt\n'
          : '';
        write(redacted + hint);
      },
    });
  // Every command's flags carry the environment it reads its defaults and secrets from, and the
  // clock it reads the time from (command-io.ts's CommandContext).
  program.hook('preAction', (_program, command) => {
    command.setOptionValue('env', io.env);
    command.setOptionValue('clock', clock);
  });
  return program;
}
