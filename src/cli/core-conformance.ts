/**
 * `coregate core conformance --core-url URL` (docs/conformance.md): the conformance kit against a
 * live core over its protocol, through HttpCore (so the protocol's own validation applies) behind
 * a recording proxy (so a broken rule shows the request and the answer as they were on the wire).
 * It prints a line per rule as it ends and a closing count, writes a JUnit XML or TAP report when
 * asked, and answers the exit code: 0 every rule passed (or was skipped), 1 a rule failed. Bad
 * usage — no URL, an unreachable one, a core that answers HTML, a fixture file that names an
 * account the core does not hold — is a CommandError: one line, exit 2.
 */
import { writeFileSync } from 'node:fs';
import { systemClock } from '../clock/system-clock.js';
import { checkCoreAnswers } from '../conformance/core-preflight.js';
import { ConformanceSetupError } from '../conformance/conformance-errors.js';
import { readFixtureFile } from '../conformance/conformance-fixtures.js';
import { describeResult, describeTotals, junitReport, reportFormats, tapReport } from '../conformance/conformance-report.js';
import { parseWeekend } from '../conformance/core-weekend.js';
import { ExchangeLog } from '../conformance/exchange-log.js';
import { printableLine } from '../conformance/printable.js';
import { startRecordingProxy } from '../conformance/recording-proxy.js';
import { runCoreConformance, type ConformanceStart } from '../conformance/run-core-conformance.js';
import { recordPaths } from '../core-http/protocol.js';
import { CommandError } from './command-error.js';
import type { CommandEnv, CommandIo } from './command-io.js';

export interface CoreConformanceFlags {
  coreUrl?: string;
  fixtures?: string;
  weekend?: string;
  advance?: boolean;
  report?: string;
  out?: string;
  only?: string[];
  timeoutMs?: string;
  env: CommandEnv;
}

/** A call's time-out unless --timeout-ms says otherwise. */
const defaultTimeoutMs = 10_000;
/** The kit wants every call to reach the core: a breaker that opens would answer for it. */
const neverOpens = { failuresMax: Number.MAX_SAFE_INTEGER, coolDownMs: 0 };

/** Runs the kit; answers the exit code (0 or 1). */
export async function coreConformance(flags: CoreConformanceFlags, io: CommandIo): Promise<number> {
  const coreUrl = flags.coreUrl ?? flags.env.COREGATE_CORE_URL;
  if (coreUrl === undefined || coreUrl === '') throw new CommandError('--core-url is required: the base URL of the core to check, e.g. http://localhost:8081 (env COREGATE_CORE_URL)');
  let parsed: URL;
  try {
    parsed = new URL(coreUrl);
  } catch {
    throw new CommandError(`--core-url "${coreUrl}" is not a URL: give the core's base URL, e.g. http://localhost:8081`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new CommandError(`--core-url must be http:// or https://, got ${parsed.protocol}`);
  const format = flags.report;
  if (format !== undefined && !(reportFormats as readonly string[]).includes(format)) throw new CommandError(`--report must be ${reportFormats.join(' or ')}, got "${format}"`);
  if ((format === undefined) !== (flags.out === undefined)) throw new CommandError('--report and --out go together: --report junit|tap --out FILE');
  const timeoutMs = flags.timeoutMs === undefined ? defaultTimeoutMs : Number(flags.timeoutMs);
  if (!Number.isInteger(timeoutMs) || timeoutMs <= 0) throw new CommandError(`--timeout-ms must be a positive integer, got "${flags.timeoutMs}"`);
  const weekend = flags.weekend === undefined ? undefined : parseWeekend(flags.weekend);
  if (flags.weekend !== undefined && weekend === undefined) {
    throw new CommandError(`--weekend must name the core's weekend days, e.g. sat,sun or fri,sat (or none), got "${flags.weekend}"`);
  }
  const only = flags.only?.flatMap((ids) => ids.split(',')).filter((id) => id !== '');

  const clock = io.clock ?? systemClock;
  try {
    const fixtures = flags.fixtures === undefined ? undefined : readFixtureFile(flags.fixtures);
    await checkCoreAnswers(coreUrl, clock, timeoutMs);
    const exchanges = new ExchangeLog();
    const proxy = await startRecordingProxy(coreUrl, exchanges);
    // Imported here, as every command that names a core URL does (src/cli/core-session.ts).
    const { connectRemoteCore } = await import('../core-http/connect-remote-core.js');
    const core = connectRemoteCore(proxy.url, timeoutMs, { circuit: neverOpens });
    try {
      const report = await runCoreConformance(core, {
        fixtures,
        fixturesName: flags.fixtures === undefined ? undefined : `fixture file ${flags.fixtures}`,
        weekend,
        advance: flags.advance === true,
        coreUrl,
        exchanges,
        recordPortCalls: false,
        clock,
        timeoutMs,
        only,
        onReady: (start) => io.stdout.write(`${firstLine(coreUrl, start, flags)}\n`),
        onResult: (result) => io.stdout.write(`${describeResult(result)}\n`),
      });
      io.stdout.write(`${describeTotals(report)}\n`);
      if (format !== undefined && flags.out !== undefined) writeReport(flags.out, format === 'junit' ? junitReport(report) : tapReport(report));
      return report.failed > 0 ? 1 : 0;
    } finally {
      await core.close();
      await proxy.close();
    }
  } catch (error) {
    // One line, and nothing of the core's that could drive the terminal.
    if (error instanceof ConformanceSetupError) throw new CommandError(printableLine(error.message));
    throw error;
  }
}

/** What the run stands on: the core, its date, the fixtures, the weekend, whether end of day runs. */
function firstLine(coreUrl: string, start: ConformanceStart, flags: CoreConformanceFlags): string {
  const fixtures = flags.fixtures === undefined ? `the kit's own fixtures (customer ${start.customer}), loaded through POST ${recordPaths.data}` : `fixtures from ${flags.fixtures}`;
  const valueDate = start.valueDate === start.businessDate ? '' : ` (first value date ${start.valueDate})`;
  return printableLine(`coregate core conformance: ${coreUrl}, business date ${start.businessDate}${valueDate}, ${fixtures}, ${start.weekend}${flags.advance === true ? '' : '; end of day not run (--advance)'}`);
}
function writeReport(file: string, text: string): void {
  try {
    writeFileSync(file, text);
  } catch (error) {
    throw new CommandError(`--out ${file} cannot be written: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}
