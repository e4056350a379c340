/**
 * The outage guard (src/cli/outage-guard.ts): a database outage left unhandled is logged and the
 * process goes on; any other unhandled rejection still ends it, as node does by default.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { repoRoot } from '../helpers/server.js';

function runWithGuard(rejection: string): { status: number | null; stdout: string; stderr: string } {
  const script = `
    import { guardAgainstOutageExits } from './src/cli/outage-guard.js';
    const lines = [];
    guardAgainstOutageExits({ error: (fields, message) => console.log('logged: ' + message) });
    Promise.reject(${rejection});
    setTimeout(() => console.log('still serving'), 200);
  `;
  const result = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: repoRoot, encoding: 'utf8', timeout: 60_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

test('an unhandled database outage (a connection cut) is logged as a defect and the process goes on serving', () => {
  const result = runWithGuard("new Error('Connection terminated unexpectedly')");
  assert.equal(result.status, 0, result.stderr);
  assert.match(result.stdout, /logged: a connection failure reached no handler/);
  assert.match(result.stdout, /still serving/);
});

test('an unhandled rejection of any other kind still ends the process', () => {
  const result = runWithGuard("new TypeError('a bug')");
  assert.notEqual(result.status, 0);
  assert.doesNotMatch(result.stdout, /still serving/);
  assert.match(result.stderr, /a bug/);
});
