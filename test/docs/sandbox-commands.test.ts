/**
 * docs/sandbox.md, "Trying it with curl": its shell block runs here as written, in bash with curl,
 * against a `coregate serve --sandbox` of its own (the guide's http://localhost:8080 replaced by
 * that server's URL). The deposit it forces with async-rejected must end Rejected with
 * REJECTED_BY_CORE, and the request log must show the request with its scenario. Skipped, with a
 * message, where curl or bash is missing (never under CI=true).
 */
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

  test('CONTRACT §14: async-rejected answers 202, the Location shows it Rejected (REJECTED_BY_CORE), and the request log keeps the request with its scenario', () => {
    assert.match(block, /BASE=http:\/\/localhost:8080/);
    const script = `set -euo pipefail\n${block.replaceAll('http://localhost:8080', server.url)}`;
    const output = execFileSync('bash', ['-c', script], { cwd: dir, env: { PATH: process.env.PATH ?? '', HOME: dir }, encoding: 'utf8', timeout: 60_000 });
    const lines = output.trim().split('\n');
    const accepted = JSON.parse(lines[0] ?? '{}') as { termDepositStatus?: string };
    assert.equal(accepted.termDepositStatus, 'Pending', output);
    const state = JSON.parse(lines[1] ?? '{}') as { status?: string; error?: { errordetail?: Array<{ reason?: string }> } };
    assert.equal(state.status, 'Rejected', output);
    assert.equal(state.error?.errordetail?.[0]?.reason, 'REJECTED_BY_CORE');
    const log = JSON.parse(lines[2] ?? '{}') as { requests?: Array<{ status?: number; scenario?: string; request?: { headers?: Record<string, string> } }> };
    assert.equal(log.requests?.[0]?.status, 202, output);
    assert.equal(log.requests?.[0]?.scenario, 'async-rejected');
    assert.equal(log.requests?.[0]?.request?.headers?.authorization, undefined);
  });
});
