/**
 * docs/auth.md, "Onboarding a FAPI 2.0 client, step by step": its shell block runs here as it is
 * written, in bash, with openssl and curl, against a `coregate serve` of its own (the guide's
 * http://localhost:8080 replaced by that server's URL, `npx coregate` by the built CLI, the store
 * by the server's). The block must make a DPoP-bound token and a first call that passes the
 * guards (404: the sandbox has no such deposit). Skipped, with a message, where openssl, curl or
 * bash is missing (never under CI=true).
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
import { cliPath, demoDataFile } from '../helpers/server.js';

const guide = readFileSync(join(repoRoot, 'docs/auth.md'), 'utf8');
const section = guide.slice(guide.indexOf('### Onboarding a FAPI 2.0 client, step by step'));
const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1] ?? '';

const missing = ['openssl', 'curl', 'bash'].filter((tool) => spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0);
const skip = missing.length === 0 ? undefined : `${missing.join(', ')} not installed: the guide's commands need them`;
if (skip && process.env.CI === 'true') throw new Error(`CI=true: ${skip}`);

describe('docs/auth.md: onboarding a FAPI 2.0 client, as written', { skip }, () => {
  const dir = tempDirectory('coregate-auth-guide-');
  const db = `sqlite:${join(dir, 'coregate.db')}`;
  let server: CoregateProcess;
  before(async () => {
    server = await spawnCoregate(['serve', '--data', demoDataFile, '--db', db]);
  });
  after(async () => server?.stop('SIGTERM'));

  test('the guide has the block, with the commands the test replaces', () => {
    assert.match(block, /npx coregate clients create .*--auth-method private_key_jwt --jwks partner-pub\.pem --dpop/);
    assert.match(block, /http:\/\/localhost:8080/);
  });

  test('the block makes a DPoP-bound token and a first call with it (404 past the guards); the token sent as Bearer is 401', () => {
    // `npx coregate` runs the built CLI on the server's store and URL (COREGATE_DB, COREGATE_URL: the guide's defaults are npm start's); the rest runs as written.
    const script = `set -euo pipefail\nnpx() { if [ "$1" = coregate ]; then shift; node ${JSON.stringify(cliPath)} "$@"; else command npx "$@"; fi; }\n${block.replaceAll('http://localhost:8080', server.url)}`;
    const output = execFileSync('bash', ['-c', script], { cwd: dir, env: { PATH: process.env.PATH ?? '', COREGATE_DB: db, COREGATE_URL: server.url, HOME: dir }, encoding: 'utf8' });
    const token = JSON.parse(readFileSync(join(dir, 'token.json'), 'utf8')) as { token_type?: string; access_token?: string };
    assert.equal(token.token_type, 'DPoP', JSON.stringify(token));
    const lines = output.trim().split('\n');
    const answer = JSON.parse(lines[lines.length - 1] ?? '{}') as { status?: number; errordetail?: Array<{ reason?: string }> };
    assert.equal(answer.status, 404, output);
    assert.equal(answer.errordetail?.[0]?.reason, 'TERM_DEPOSIT_NOT_FOUND');
    const asBearer = execFileSync('curl', ['-s', '-o', '/dev/null', '-w', '%{http_code}', `${server.url}/v1/term-deposits/TD-0000000001/retrieve`, '-H', `Authorization: Bearer ${token.access_token}`], { encoding: 'utf8' });
    assert.equal(asBearer, '401');
  });
});
