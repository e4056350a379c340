/**
 * Runs one `coregate` command line on the given streams and environment and answers how it ended:
 * its exit code, and whether an error ended it (the process entry then exits at once, leaving
 * nothing running). The same mapping for the `coregate` process (main.ts) and for a test that runs
 * a command inside its own process (test/helpers/cli.ts).
 */
import { CommanderError } from 'commander';
import { CommandError } from './command-error.js';
import type { CommandIo } from './command-io.js';
import { reportError, UsageError } from './client-commands.js';
import { ExitCode } from './exit-code.js';
import { coregateProgram } from './program.js';

export interface CommandOutcome {
  exitCode: number;
  /** An error ended the command (it was reported on stderr, or as JSON with --json). */
  failed: boolean;
}

/** `args`: the words after `coregate`. */
export async function runCommand(args: readonly string[], io: CommandIo): Promise<CommandOutcome> {
  try {
    await coregateProgram(io).parseAsync([...args], { from: 'user' });
    return { exitCode: 0, failed: false };
  } catch (error) {
    return { exitCode: exitCodeOf(error, io, args.includes('--json')), failed: !(error instanceof ExitCode) };
  }
}

function exitCodeOf(error: unknown, io: CommandIo, json: boolean): number {
  // The command printed its outcome (a finding, a declined reset) and chose its code.
  if (error instanceof ExitCode) return error.code;
  // Help, version and usage errors: commander printed them already.
  if (error instanceof CommanderError) return error.exitCode;
  const reported = reportError(io, error, json);
  if (reported >= 0) return reported;
  const known = error instanceof CommandError || (error as Error)?.name === 'DataFileError' || error instanceof UsageError;
  io.stderr.write(`coregate: ${known ? (error as Error).message : String((error as Error)?.message ?? error)}\n`);
  return known ? 2 : 1;
}
