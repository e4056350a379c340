/**
 * docs/core-port.md, "An in-process core": the example runs as written. The shell line after
 * `<!-- in-process-core -->` runs here from the repository's directory, as a reader would run it,
 * and its output is the block after `<!-- in-process-core-output -->`: coregate started on the
 * in-memory core of examples/in-process-core, a term deposit made through the business API and read
 * back, the core's own account debited.
 */
// @lane process: starts coregate processes (docs/testing.md, "Lanes")
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { repoRoot } from '../helpers/repo-root.js';

const guide = readFileSync(join(repoRoot, 'docs/core-port.md'), 'utf8');

function block(marker: string, language: string): string {
  const found = new RegExp(`<!-- ${marker} -->\\n\`\`\`${language}\\n([\\s\\S]*?)\`\`\``).exec(guide)?.[1];
  assert.ok(found, `docs/core-port.md has the block after <!-- ${marker} -->`);
  return found;
}

test('docs/core-port.md\'s in-process core example, run as written, starts coregate on the in-memory core and makes a term deposit through the business API', async () => {
  const line = block('in-process-core', 'sh').trim();
  assert.equal(line, 'npx tsx examples/in-process-core/start.ts', 'one command, no environment of its own');
  const [command = '', ...args] = line.split(' ');
  const { NODE_TEST_CONTEXT: _context, ...env } = process.env;
  const result = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(command, args, { cwd: repoRoot, env, timeout: 120_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout: String(stdout), stderr: String(stderr) });
    });
  });
  assert.equal(result.code, 0, `${result.stderr}${result.stdout}`);
  assert.equal(result.stdout, block('in-process-core-output', ''), result.stderr);
});
