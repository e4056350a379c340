/**
 * `npm run torture -- --minutes 10`: the torture test for as long as asked, its counts printed.
 * `npm run torture -- --pg-failover --minutes 10`: the failover torture (pg-failover.ts) instead.
 */
import { describeTorture, runTorture } from './torture.js';
import { describePgFailover, runPgFailoverTorture } from './pg-failover.js';

const minutesFlag = process.argv.indexOf('--minutes');
const minutes = minutesFlag >= 0 ? Number(process.argv[minutesFlag + 1]) : 1;
const clientsFlag = process.argv.indexOf('--clients');
const clients = clientsFlag >= 0 ? Number(process.argv[clientsFlag + 1]) : 8;
if (!Number.isFinite(minutes) || minutes <= 0) throw new Error('--minutes takes a positive number');
const log = (line: string) => console.log(line);

if (process.argv.includes('--pg-failover')) {
  const report = await runPgFailoverTorture({ durationMs: minutes * 60_000, clients, log });
  console.log(describePgFailover(report));
  process.exitCode = report.anomalies.length === 0 ? 0 : 1;
} else {
  const report = await runTorture({ durationMs: minutes * 60_000, clients, log });
  console.log(describeTorture(report));
  process.exitCode = report.anomalies.length === 0 ? 0 : 1;
}
