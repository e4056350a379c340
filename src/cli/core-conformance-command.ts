/**
 * The `coregate core conformance` command's flags (docs/conformance.md), registered in the `core`
 * group by core-commands.ts; its work is core-conformance.ts, loaded when it runs so that other commands
 * never load the HTTP client.
 */
import type { Command } from 'commander';
import type { CommandIo } from './command-io.js';

/** `exitWith`: ends the command with a non-zero code after it printed its outcome (exit-code.ts's ExitCode). */
export function addCoreConformanceCommand(core: Command, io: CommandIo, exitWith: (code: number) => never): void {
  core
    .command('conformance')
    .description('check a core banking system against every rule of the port, over its protocol (docs/conformance.md); exit 0 all passed, 1 a rule failed, 2 bad usage')
    .option('--core-url <url>', 'the core\'s base URL, e.g. http://localhost:8081 (env COREGATE_CORE_URL)')
    .option('--fixtures <file>', 'the test records the core already holds (JSON, docs/conformance.md "Fixtures"); default: the kit loads its own through the core\'s load side')
    .option('--weekend <days>', 'the core\'s weekend days, e.g. fri,sat (or none); default: learned from the core\'s refusals (docs/conformance.md "The weekend")')
    .option('--advance', 'also run end of day, which moves the core\'s business date (it cannot be moved back)')
    .option('--report <format>', 'also write a report for CI: junit or tap (with --out)')
    .option('--out <file>', 'where --report writes')
    .option('--only <rules...>', 'only these rules (ids, space- or comma-separated)')
    .option('--timeout-ms <ms>', 'each call\'s time-out (default 10000)')
    .action(async (flags) => {
      const code = await (await import('./core-conformance.js')).coreConformance(flags, io);
      if (code !== 0) exitWith(code);
    });
}
