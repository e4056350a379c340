/**
 * docs/sandbox.md, "Trying it with curl": its shell block runs here as written, in bash with curl,
 * against a `coregate serve --sandbox` of its own (the guide's http://localhost:8080 replaced by
 * that server's URL), and each answer is checked for what the scenario is there to show: the
 * deposit forced with async-rejected ends Rejected with REJECTED_BY_CORE; core-unavailable's 502
 * is executed by its repeat (200, the same operation); core-timeout-then-commit's 504 is answered
 * 409 on its repeat, naming the operation Executed; the request log shows the first request with
 * its scenario. A deposit the demo product refuses (TD-422-004) fails it. Skipped, with a message,
 * where curl or bash is missing (never under CI=true).
 */
// @lane process: starts coregate processes (docs/testing.md, "Lanes")
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { tempDirectory } from '../helpers/data-files.js';
import { spawnCoregate, type CoregateProcess } from '../helpers/processes.js';
import { repoRoot } from '../helpers/repo-root.js';
import { demoDataFile } from '../helpers/server.js';

const guide = readFileSync(join(repoRoot, 'docs/sandbox.md'), 'utf8');
const section = guide.slice(guide.indexOf('### Trying it with curl'));
const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1] ?? '';

const missing = ['curl', 'bash'].filter((tool) => spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0);
const skip = missing.length === 0 ? undefined : `${missing.join(', ')} not installed: the guide's commands need them`;
if (skip && process.env.CI === 'true') throw new Error(`CI=true: ${skip}`);

describe('docs/sandbox.md: a forced scenario and the request log, as written', { skip }, () => {
  const dir = tempDirectory('coregate-sandbox-guide-');
  let server: CoregateProcess;
  before(async () => {
    server = await spawnCoregate(['serve', '--sandbox', '--data', demoDataFile, '--db', `sqlite:${join(dir, 'coregate.db')}`]);
  });
  after(async () => server?.stop('SIGTERM'));

  test('async-rejected ends Rejected (REJECTED_BY_CORE); a 502 is executed by its repeat; a 504 whose core committed is 409 on its repeat, naming the operation Executed; the log keeps the first request with its scenario', { timeout: 90_000 }, () => {
    assert.match(block, /BASE=http:\/\/localhost:8080/);
    const script = `set -euo pipefail\n${block.replaceAll('http://localhost:8080', server.url)}`;
    const output = execFileSync('bash', ['-c', script], { cwd: dir, env: { PATH: process.env.PATH ?? '', HOME: dir }, encoding: 'utf8', timeout: 60_000 });
    // TD-422-090 is async-rejected's own outcome; any other business refusal (TD-422-004: an amount
    // outside the product's limits) would hide what the repeats are there to show.
    assert.doesNotMatch(output, /TD-422-(?!090)/, 'no answer refuses the deposit: its amount is within the demo product\'s limits');
    const lines = output.trim().split('\n');
    assert.equal(lines.length, 7, output);
    const [accepted, state, unavailable, executed, timedOut, repeated, log] = lines.map((line) => JSON.parse(line) as Record<string, any>) as Array<Record<string, any>>;
    const referenceIn = (answer: Record<string, any> | undefined) => /\/v1\/operations\/([0-9a-f-]+)/.exec(String(answer?.message))?.[1];

    assert.equal(accepted?.termDepositStatus, 'Pending', output);
    assert.equal(state?.status, 'Rejected', output);
    assert.equal(state?.error?.errordetail?.[0]?.reason, 'REJECTED_BY_CORE');

    assert.equal(unavailable?.status, 502, output);
    assert.equal(unavailable?.errordetail?.[0]?.code, 'TD-502-001');
    assert.ok(referenceIn(unavailable), 'the 502 names its operation');
    assert.match(String(executed?.termDepositAccount), /^TD\d+$/, `the repeat executes it: ${JSON.stringify(executed)}`);
    assert.equal(executed?.operationReference, referenceIn(unavailable), 'the same operation, executed once');
    assert.equal(executed?.principalAmount?.amountValue, 2500);

    assert.equal(timedOut?.status, 504, output);
    assert.equal(timedOut?.errordetail?.[0]?.code, 'TD-504-001');
    assert.ok(referenceIn(timedOut), 'the 504 names its operation');
    assert.equal(repeated?.status, 409, output);
    assert.equal(repeated?.errordetail?.[0]?.code, 'TD-409-001');
    assert.equal(repeated?.errordetail?.[0]?.reason, 'DUPLICATE_CORRELATION_ID');
    assert.match(String(repeated?.message), new RegExp(`operation ${referenceIn(timedOut)} \\(Executed\\)`), 'the repeat names the operation the core executed');

    assert.equal(log?.requests?.length, 1, output);
    assert.equal(log?.requests?.[0]?.status, 202, output);
    assert.equal(log?.requests?.[0]?.scenario, 'async-rejected');
    assert.equal(log?.requests?.[0]?.request?.headers?.authorization, undefined);
  });
});
