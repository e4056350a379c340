#!/usr/bin/env node
/**
 * The `coregate` process: runs the command line (run-command.ts, program.ts) on the process's own
 * streams and environment, and exits with its code. `coregate serve` and `coregate core serve`
 * keep the process running after their command returned.
 */
import { processIo } from './command-io.js';
import { runCommand } from './run-command.js';

// `coregate audit export | head`: the reader leaving early is no error of ours.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(0);
    throw error;
  });
}

const outcome = await runCommand(process.argv.slice(2), processIo());
// An error may leave work behind (a prompt, a request): the process ends now. A command that ended
// with a code of its own (a finding of `check`) ends as any other, once its output is written.
if (outcome.failed) process.exit(outcome.exitCode);
process.exitCode = outcome.exitCode;
