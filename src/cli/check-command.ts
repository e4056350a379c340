/**
 * `coregate check`: its flags, and its exit code 1 on any finding. The work is admin.ts's
 * checkStore and check.ts (what it proves, and the report in words), loaded when it runs.
 */
import type { Command } from 'commander';
import { printerOf, type CommandIo } from './command-io.js';
import { coreUrlOption, dbOption, jsonOption } from './common-options.js';
import { ExitCode } from './exit-code.js';

const admin = () => import('./admin.js');

export function addCheckCommand(program: Command, io: CommandIo): void {
  const print = printerOf(io);
  program
    .command('check')
    .description('prove the ledger balances, every executed operation has its postings and audit record, none stayed unknown past the age limit, and the audit chain is valid (exit 1 on any finding)')
    .addOption(dbOption())
    .addOption(coreUrlOption())
    .option('--core-db <url>', 'the reference core\'s own database, when you hold it (prefer --core-url: a bank\'s core never hands out its database)')
    .option('--unknown-age-limit <seconds>', 'an operation unknown or in flight longer is a finding (env COREGATE_UNKNOWN_AGE_LIMIT_SECONDS, default 300)')
    .addOption(jsonOption())
    .action(async (flags) => {
      const report = await (await admin()).checkStore(flags);
      if (flags.json) print(report);
      else print((await import('./check.js')).describeReport(report));
      if (!report.ok) throw new ExitCode(1);
    });
}
