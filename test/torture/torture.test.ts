/**
 * The torture test, short (CI): see torture.ts. `npm run torture -- --minutes 10` runs it long.
 * It needs PostgreSQL; without it (and without CI=true) it is skipped with the reason.
 */
// @lane process: starts coregate processes (docs/testing.md, "Lanes")
// @starts-early: among the slowest files of a quiet run
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { storeTargets } from '../helpers/stores.js';
import { describeTorture, runTorture } from './torture.js';

const postgres = storeTargets.find((target) => target.name === 'postgres');

test('torture: two API instances, a faulty remote core, kills; nothing acknowledged lost, nothing executed twice, money conserved', { skip: postgres?.skip, timeout: 240_000 }, async () => {
  // 15 s of load (was 25 s) holds both kills (the API's at 30 %, the core's at about 55 % plus a
  // restart) and gives some 240 acknowledged operations on a quiet machine, with every kind of
  // fault injected; on a loaded one the load goes on (up to 60 s) until the kills are done and more
  // than the floor below is acknowledged. `npm run torture` is the long run.
  const report = await runTorture({ durationMs: Number(process.env.COREGATE_TORTURE_MS ?? 15_000), minAcknowledged: 21, clients: 6, log: (line) => console.log(line) });
  console.log(describeTorture(report).replace(/^/gm, '# '));
  assert.ok(report.acknowledged > 20, `too few acknowledged operations to mean anything: ${report.acknowledged}`);
  assert.ok((report.faults['dropped-after-execution'] ?? 0) > 0 && (report.faults.timeout ?? 0) > 0, 'faults were injected');
  assert.deepEqual(report.anomalies, []);
});
