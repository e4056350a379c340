/**
 * The failover torture, short (CI): see pg-failover.ts. One failover (the primary killed, the
 * synchronous standby promoted, the address moved, a new standby built) and one blip, under load
 * from two API instances. `npm run torture -- --pg-failover --minutes 10` runs it long. It needs
 * the PostgreSQL binaries and root (test/helpers/pg-cluster.ts); without them, and without
 * CI=true, it is skipped with the reason.
 */
// @lane process: starts coregate processes (docs/testing.md, "Lanes")
// @starts-early: among the slowest files of a quiet run
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pgClusterSkip } from '../helpers/pg-cluster.js';
import { describePgFailover, runPgFailoverTorture } from './pg-failover.js';

const skip = pgClusterSkip();
if (skip) console.warn(`# skipping the failover torture: ${skip}`);

test('failover torture: the primary killed under load, the standby promoted, the address moved; nothing acknowledged lost, nothing executed twice, money conserved', { skip, timeout: 240_000 }, async () => {
  const report = await runPgFailoverTorture({
    durationMs: Number(process.env.COREGATE_FAILOVER_TORTURE_MS ?? 40_000),
    clients: 6,
    // The first event (a failover) at a quarter of the run, a blip 15 s later.
    eventIntervalMs: 15_000,
    log: (line) => console.log(line),
  });
  console.log(describePgFailover(report).replace(/^/gm, '# '));
  assert.ok(report.failovers >= 1, 'the database failed over');
  assert.ok(report.acknowledgedAfterFailover > 20, `too few operations acknowledged after the failover to mean anything: ${report.acknowledgedAfterFailover}`);
  assert.deepEqual(report.anomalies, []);
});
