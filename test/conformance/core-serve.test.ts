/**
 * `coregate core conformance` against `coregate core serve` as a process, on each store: with the
 * kit's own fixtures loaded through the load side and end of day (`--advance`), every rule passes;
 * with the records a fixture file names (examples/conformance-fixtures.json, the demo data's),
 * every rule passes but the load side's, which the kit did not use, end of day, not asked for, and
 * the events, which only end of day writes.
 */
// @lane process: starts coregate processes (docs/testing.md, "Lanes")
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { conformanceRuleIds } from '../../src/conformance/conformance-rules.js';
import { runCli } from '../helpers/cli.js';
import { spawnCoregate, type CoregateProcess } from '../helpers/processes.js';
import { demoDataFile } from '../helpers/server.js';
import { storeTargets } from '../helpers/stores.js';
import { repoRoot } from '../helpers/repo-root.js';

const dir = mkdtempSync(join(tmpdir(), 'coregate-conformance-serve-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function statuses(stdout: string): Array<[string, string]> {
  return [...stdout.matchAll(/^(ok|FAIL|skip) +([a-z.-]+)/gm)].map((match) => [match[2] ?? '', match[1] ?? '']);
}

for (const target of storeTargets) {
  describe(`coregate core conformance against coregate core serve [${target.name}]`, { skip: target.skip }, () => {
    let core: CoregateProcess | undefined;
    let drop: (() => Promise<void>) | undefined;
    before(async () => {
      const created = await target.create();
      drop = created.drop;
      core = await spawnCoregate(['core', 'serve', '--db', created.url, '--data', demoDataFile], { env: { COREGATE_LOG_LEVEL: 'warn' } });
    });
    after(async () => {
      await core?.stop('SIGTERM');
      await drop?.();
    });

    test('with a fixture file naming the demo data\'s records: every rule passes but the load side (not used), end of day (not asked for) and the events (none yet); a TAP report', async () => {
      const report = join(dir, `${target.name}.tap`);
      const result = await runCli(['core', 'conformance', '--core-url', core?.url ?? '', '--fixtures', join(repoRoot, 'examples/conformance-fixtures.json'), '--report', 'tap', '--out', report], { timeoutMs: 120_000 });
      assert.equal(result.code, 0, `${result.stdout}${result.stderr}`);
      assert.deepEqual(statuses(result.stdout).filter(([, status]) => status !== 'ok'), [
        ['load-side', 'skip'],
        ['end-of-day', 'skip'],
        ['events', 'skip'],
      ], result.stdout);
      assert.match(result.stdout, /^skip +events: no event since sequence 0, the last the core held when the kit started: events come from end of day \(run with --advance\)$/m);
      assert.match(result.stdout, /^skip +end-of-day: .*run with --advance$/m);
      // The weekend is learned from the core's refusals: the fixture file gives none.
      assert.match(result.stdout, /^coregate core conformance: .*, fixtures from .*conformance-fixtures\.json, weekend Saturday, Sunday \(learned from the core's refusals\); end of day not run \(--advance\)$/m);
      assert.match(result.stdout, new RegExp(`^${conformanceRuleIds.length - 3} passed, 0 failed, 3 skipped$`, 'm'));
      const tap = readFileSync(report, 'utf8');
      assert.match(tap, new RegExp(`^TAP version 13\\n1\\.\\.${conformanceRuleIds.length}\\n`));
      assert.match(tap, /^ok \d+ - end-of-day: .* # SKIP /m);
      assert.equal((tap.match(/^ok \d+ - /gm) ?? []).length, conformanceRuleIds.length);
    });

    test('with the kit\'s own fixtures loaded through POST /core/v1/data and --advance: every rule passes, the read side included', async () => {
      const result = await runCli(['core', 'conformance', '--core-url', core?.url ?? '', '--advance'], { timeoutMs: 120_000 });
      assert.equal(result.code, 0, `${result.stdout}${result.stderr}`);
      assert.deepEqual(statuses(result.stdout), conformanceRuleIds.map((id) => [id, 'ok']), result.stdout);
      assert.match(result.stdout, /the kit's own fixtures \(customer CK-[A-Z2-7]{8}-C\), loaded through POST \/core\/v1\/data/);
      assert.match(result.stdout, new RegExp(`^${conformanceRuleIds.length} passed, 0 failed$`, 'm'));
    });
  });
}
