/** `npm run torture -- --minutes 10`: the torture test for as long as asked, its counts printed. */
import { describeTorture, runTorture } from './torture.js';

const minutesFlag = process.argv.indexOf('--minutes');
const minutes = minutesFlag >= 0 ? Number(process.argv[minutesFlag + 1]) : 1;
const clientsFlag = process.argv.indexOf('--clients');
const clients = clientsFlag >= 0 ? Number(process.argv[clientsFlag + 1]) : 8;
if (!Number.isFinite(minutes) || minutes <= 0) throw new Error('--minutes takes a positive number');

const report = await runTorture({ durationMs: minutes * 60_000, clients, log: (line) => console.log(line) });
console.log(describeTorture(report));
process.exitCode = report.anomalies.length === 0 ? 0 : 1;
