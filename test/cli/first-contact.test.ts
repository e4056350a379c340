/**
 * The CLI's first contact (issue 12 item 10, item 5): `--version`, complete help (every command
 * described, required options said to be required), and a closed pipe (`coregate ... | head`)
 * ending the command quietly instead of with an EPIPE stack trace.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli } from '../helpers/cli.js';
import { cliPath, repoRoot } from '../helpers/server.js';

const packageVersion = (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version;

test('issue 12 item 10: coregate --version (and -V) prints the version of package.json', async () => {
  for (const flag of ['--version', '-V']) {
    const result = await runCli([flag]);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout.trim(), packageVersion);
  }
});

test('issue 12 item 10: every command of the help has a description, and --realm says it is required', async () => {
  const help = await runCli(['--help']);
  assert.equal(help.code, 0);
  const commands = help.stdout.split('Commands:')[1] ?? '';
  for (const line of commands.split('\n').filter((row) => /^  \S/.test(row))) {
    const [name, ...description] = line.trim().split(/\s{2,}/);
    if (name?.startsWith('help')) continue;
    assert.ok(description.join(' ').length > 0, `command "${name}" has no description in the help`);
  }
  assert.match(help.stdout, /operations\s+business operations/);
  const keys = await runCli(['keys', 'rotate', '--help']);
  assert.match(keys.stdout, /--realm <realm>\s+realm name \(required\)/);
});

test('issue 12 item 5: output to a pipe closed early ends the command quietly (no EPIPE stack trace)', async () => {
  const child = spawn(process.execPath, [cliPath, '--help'], { stdio: ['ignore', 'pipe', 'pipe'] });
  // The reader is gone before the command writes: its write fails with EPIPE.
  child.stdout.destroy();
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  assert.doesNotMatch(stderr, /EPIPE|Error:|at .*\.js:\d+/, stderr);
  assert.ok(code === 0, `exit code ${code}`);
});
