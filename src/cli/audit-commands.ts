/**
 * `coregate audit verify|export`: the hash-chained audit trail; `verify` ends with exit code 1 when
 * a link is broken. The work is admin.ts, loaded when a command runs.
 */
import type { Command } from 'commander';
import { printerOf, type CommandIo } from './command-io.js';
import { dbOption, jsonOption } from './common-options.js';
import { ExitCode } from './exit-code.js';

const admin = () => import('./admin.js');

export function addAuditCommands(program: Command, io: CommandIo): void {
  const print = printerOf(io);
  const audit = program.command('audit').description('the hash-chained audit trail');
  audit
    .command('verify')
    .description('verify every link of the audit chain (exit 1 when a record was altered, removed or reordered)')
    .addOption(dbOption())
    .addOption(jsonOption())
    .action(async (flags) => {
      const result = await (await admin()).verifyAudit(flags);
      if (flags.json) print(result);
      else if (result.ok) print(`Audit chain OK: ${result.chained} records verified.`);
      else print(`Audit chain BROKEN at position ${result.problem?.chainSeq} (record ${result.problem?.id}): ${result.problem?.issue}.`);
      if (!result.ok) throw new ExitCode(1);
    });
  audit
    .command('export')
    .description('print every audit record as JSON lines, in chain order')
    .addOption(dbOption())
    .action(async (flags) => {
      await (await admin()).exportAuditLines(flags, (line) => io.stdout.write(line));
    });
}
