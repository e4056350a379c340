/**
 * `coregate core serve|advance|date|conformance`: the reference core as its own service, its
 * business date (docs/business-days.md), and the conformance kit for any core (registered by
 * core-conformance-command.ts). The work is loaded when a command runs: core-serve.ts,
 * core-advance.ts, core-conformance.ts.
 */
import type { Command } from 'commander';
import { print as printTo, type CommandIo } from './command-io.js';
import { dbOption, jsonOption } from './common-options.js';
import { addCoreConformanceCommand } from './core-conformance-command.js';
import { ExitCode } from './exit-code.js';

export function addCoreCommands(program: Command, io: CommandIo): void {
  const core = program.command('core').description('the reference core banking system: its own service, its business date');
  addCoreServeCommand(core);
  addBusinessDateCommands(core, io);
  addCoreConformanceCommand(core, io, (code) => {
    throw new ExitCode(code);
  });
}

function addCoreServeCommand(core: Command): void {
  core
    .command('serve')
    .description('serve the reference core over the remote core protocol (no auth: private network or mTLS only)')
    .option('--port <port>', 'port to listen on, 0 for any (env COREGATE_CORE_PORT, default 8081)')
    .option('--host <host>', 'address to bind (env COREGATE_CORE_HOST, default localhost)')
    .option('--db <url>', 'the core\'s own store: sqlite:PATH or postgres://... (env COREGATE_CORE_DB, default sqlite:./data/core.db)')
    .option('--data <file>', 'sandbox data file whose core sections to load (env COREGATE_CORE_DATA)')
    .option('--business-date <date>', 'the business date of a new store, YYYY-MM-DD; then it moves by `coregate core advance` (env COREGATE_CORE_BUSINESS_DATE)')
    .option('--log-level <level>', 'pino log level (env COREGATE_LOG_LEVEL, default info)')
    .action(async (flags) => (await import('./core-serve.js')).serveCore(flags));
}

function addBusinessDateCommands(core: Command, io: CommandIo): void {
  const print = (value: unknown) => printTo(io, value);
  core
    .command('advance')
    .description('advance the core\'s business date, running end of day once for every business day passed (docs/business-days.md); resumable, never backwards')
    .requiredOption('--to <date>', 'the new business date, YYYY-MM-DD')
    .addOption(dbOption())
    .option('--core-url <url>', 'a remote core (coregate core serve) runs it (env COREGATE_CORE_URL); default: the embedded core on --db')
    .addOption(jsonOption())
    .action(async (flags) => {
      const advance = await import('./core-advance.js');
      const report = await advance.coreAdvance(flags);
      print(flags.json ? report : advance.describeAdvance(report));
    });
  core
    .command('date')
    .description('print the core\'s business date')
    .addOption(dbOption())
    .option('--core-url <url>', 'ask a remote core (env COREGATE_CORE_URL); default: the embedded core on --db')
    .addOption(jsonOption())
    .action(async (flags) => {
      const { businessDate } = await (await import('./core-advance.js')).coreDate(flags);
      print(flags.json ? { businessDate } : businessDate);
    });
}
