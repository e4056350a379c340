/**
 * The CLI's first contact (issue 12 item 10, item 5): `--version`, complete help (every command
 * described, required options said to be required), and a closed pipe (`coregate ... | head`)
 * ending the command quietly instead of with an EPIPE stack trace.
 */
// @lane process: starts coregate processes (docs/testing.md, "Lanes")
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli, runCliProcess } from '../helpers/cli.js';
import { cliPath, repoRoot } from '../helpers/server.js';

const packageVersion = (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version;

test('issue 12 item 10: coregate --version (and -V) prints the version of package.json', async () => {
  for (const flag of ['--version', '-V']) {
    const result = await runCliProcess([flag]);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout.trim(), packageVersion);
  }
});

test('issue 12 item 10: every command of the help has a description, and --realm says it is required', async () => {
  const help = await runCliProcess(['--help']);
  assert.equal(help.code, 0);
  const commands = help.stdout.split('Commands:')[1] ?? '';
  for (const line of commands.split('\n').filter((row) => /^  \S/.test(row))) {
    const [name, ...description] = line.trim().split(/\s{2,}/);
    if (name?.startsWith('help')) continue;
    assert.ok(description.join(' ').length > 0, `command "${name}" has no description in the help`);
  }
  assert.match(help.stdout, /operations\s+business operations/);
  const keys = await runCliProcess(['keys', 'rotate', '--help']);
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

test('a command run in a test\'s process (runCli) answers as the coregate process does: the same exit code, stdout and stderr', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'coregate-cli-parity-'));
  try {
    const env = { ...process.env, COREGATE_MASTER_KEY: '' };
    // Each side has a store of its own (the lines change it), named alike in the output.
    const lines = (db: string) => [
      ['--version'],
      ['clients', 'list', '--db', db], // commander's usage error: exit 1
      ['token', '--client-secret=not-printed'], // an unknown option, its value redacted
      ['realms', 'list', '--db', 'mysql://nowhere/x'], // a refused store URL
      ['realms', 'add', '--realm', 'parity', '--alg', 'ES256', '--db', db, '--json'],
      ['realms', 'add', '--realm', 'parity', '--db', db], // exists: a command error, exit 2
      ['check', '--db', db],
      ['audit', 'verify', '--db', db, '--json'],
      ['sandbox', 'reset', '--data', 'demo/sandbox.json', '--db', db], // no terminal to ask: refused
    ];
    const inProcessLines = lines(`sqlite:${join(dir, 'in-process.db')}`);
    const spawnedLines = lines(`sqlite:${join(dir, 'spawned.db')}`);
    const same = (text: string) => text.replaceAll('spawned.db', 'in-process.db');
    const codes = new Set<number>();
    for (const [index, args] of inProcessLines.entries()) {
      const inProcess = await runCli(args, { env });
      codes.add(inProcess.code);
      const spawned = await runCliProcess(spawnedLines[index] ?? [], { env });
      assert.deepEqual(inProcess, { code: spawned.code, stdout: same(spawned.stdout), stderr: same(spawned.stderr) }, `coregate ${args.join(' ')}`);
    }
    assert.deepEqual([...codes].sort(), [0, 1, 2], 'the lines end in success, a usage error and a refusal');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
