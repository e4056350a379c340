/**
 * libuv's thread pool is sized by the `coregate` entry (src/cli/coregate.cts,
 * src/cli/thread-pool-size.cts): one thread per core, at least two, unless the operator sets
 * UV_THREADPOOL_SIZE. Checked on the rule and on a real `coregate serve` process's threads.
 */
// @lane process: starts coregate processes (docs/testing.md, "Lanes")
// @starts-early: among the slowest files of a quiet run
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { threadPoolSizeFor } from '../../src/cli/thread-pool-size.cjs';
import { cliPath, demoDataFile } from '../helpers/server.js';

test('the pool has one thread per core, at least two; an operator\'s UV_THREADPOOL_SIZE wins, read as libuv reads it', () => {
  assert.equal(threadPoolSizeFor(undefined, 2), 2);
  assert.equal(threadPoolSizeFor(undefined, 1), 2);
  assert.equal(threadPoolSizeFor(undefined, 16), 16);
  assert.equal(threadPoolSizeFor('', 8), 8);
  assert.equal(threadPoolSizeFor('1', 8), 1);
  assert.equal(threadPoolSizeFor('16', 2), 16);
  assert.equal(threadPoolSizeFor('0', 2), 1, 'libuv clamps to 1');
  assert.equal(threadPoolSizeFor('5000', 2), 1024, 'libuv clamps to 1024');
  assert.equal(threadPoolSizeFor('many', 2), 4, 'a value libuv cannot read gives its default of 4');
});

/** The threads of a `coregate serve` process once it listens. */
async function serverThreads(env: NodeJS.ProcessEnv): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'coregate-pool-'));
  const child = spawn(process.execPath, [cliPath, 'serve', '--port', '0', '--host', '127.0.0.1', '--data', demoDataFile, '--db', `sqlite:${join(dir, 'coregate.db')}`, '--audit-spool', join(dir, 'spool')], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  try {
    await new Promise<void>((resolve, reject) => {
      let output = '';
      const timer = setTimeout(() => reject(new Error(`coregate serve did not listen: ${output}`)), 30_000);
      child.stdout.on('data', (chunk) => {
        output += String(chunk);
        if (output.includes('Server listening')) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once('exit', (code) => reject(new Error(`coregate serve exited (${code}): ${output}`)));
    });
    return Number(/Threads:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1]);
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
    rmSync(dir, { recursive: true, force: true });
  }
}

test('a coregate serve process runs the pool the rule gives (Linux: counted in /proc)', { skip: existsSync('/proc/self/status') ? undefined : 'needs /proc' }, async () => {
  const { UV_THREADPOOL_SIZE: _, ...environment } = process.env;
  const withOne = await serverThreads({ ...environment, UV_THREADPOOL_SIZE: '1' });
  const withFive = await serverThreads({ ...environment, UV_THREADPOOL_SIZE: '5' });
  const byDefault = await serverThreads(environment);
  assert.equal(withFive - withOne, 4, 'an operator\'s size is the pool\'s size');
  assert.equal(byDefault - withOne, Math.max(2, availableParallelism()) - 1, 'by default, one thread per core, at least two');
});
