/**
 * Issue 27 (what a newcomer tripped on), item 2: a file a command's flag names that cannot be read
 * or is not what the flag takes is refused in words: which flag and file (as given and as looked
 * for), why (does not exist, a directory, not readable, not valid JSON) and what to do, never a
 * bare ENOENT; the exit code stays non-zero. `serve`'s TLS files: test/cli/failed-start.test.ts.
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, test } from 'node:test';
import { runCli } from '../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'coregate-named-files-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const db = ['--db', `sqlite:${join(dir, 'named-files.db')}`];
const env = { ...process.env, COREGATE_MASTER_KEY: '', COREGATE_CLIENT_SECRET: 'not-used-the-file-is-read-first' };
const cli = (args: string[]) => runCli(args, { env });
const missing = join(dir, 'missing.json');
/** A path as a regular expression matches it. */
const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
// Each command that reads a file a flag names, the flag, and where the file goes in its line.
const commands: Array<{ flag: string; line: (file: string) => string[] }> = [
  { flag: '--file', line: (file) => ['term-deposit', 'initiate', '--client-id', 'treasury-app', '--url', 'http://127.0.0.1:9', '--file', file] },
  { flag: '--file', line: (file) => ['loan', 'execute', '7000000001', '1', '--client-id', 'treasury-app', '--url', 'http://127.0.0.1:9', '--file', file] },
  { flag: '--jwks', line: (file) => ['clients', 'create', '--realm', 'sandbox', '--client-id', 'keyed-app', '--scopes', 'termDeposit:initiate', '--auth-method', 'private_key_jwt', '--jwks', file, ...db] },
  { flag: '--private-key', line: (file) => ['token', '--client-id', 'keyed-app', '--url', 'http://127.0.0.1:9', '--private-key', file] },
  { flag: '--private-key', line: (file) => ['fapi', 'assertion', '--client-id', 'keyed-app', '--private-key', file] },
  { flag: '--key', line: (file) => ['fapi', 'proof', '--method', 'POST', '--url', 'http://127.0.0.1:9/x', '--key', file] },
];

test('issue 27 item 2: a missing file is refused naming the flag, the file and where it was looked for, with what to do; never a bare ENOENT', async () => {
  for (const { flag, line } of commands) {
    const result = await cli(line(missing));
    const what = `${line(missing).slice(0, 2).join(' ')} ${flag}`;
    assert.equal(result.code, 2, `${what}: ${result.stderr}`);
    assert.equal(result.stdout, '', what);
    assert.match(result.stderr, new RegExp(`^coregate: ${flag}: ${literal(missing)} does not exist \\(looked for ${literal(resolve(missing))}\\): check the path \\(a relative one starts at the current directory\\); ${flag} must name the file with `), `${what}: ${result.stderr}`);
    assert.doesNotMatch(result.stderr, /ENOENT/, what);
  }
  // A key file named by the environment is named by its variable.
  const fromEnv = await runCli(['token', '--client-id', 'keyed-app', '--url', 'http://127.0.0.1:9'], { env: { ...env, COREGATE_CLIENT_PRIVATE_KEY: missing } });
  assert.equal(fromEnv.code, 2);
  assert.match(fromEnv.stderr, new RegExp(`^coregate: COREGATE_CLIENT_PRIVATE_KEY: ${literal(missing)} does not exist \\(looked for ${literal(resolve(missing))}\\): `));
  // The sandbox data file says the same, in its own words.
  const data = await cli(['sandbox', 'reset', '--data', missing, '--yes', ...db]);
  assert.equal(data.code, 2);
  assert.match(data.stderr, new RegExp(`data file ${literal(missing)}: does not exist \\(looked for ${literal(resolve(missing))}\\): check --data`));
});

test('issue 27 item 2: a directory named as a file is refused as a directory, naming the flag', async () => {
  const directory = join(dir, 'a-directory');
  mkdirSync(directory);
  for (const { flag, line } of commands) {
    const result = await cli(line(directory));
    assert.equal(result.code, 2, result.stderr);
    assert.match(result.stderr, new RegExp(`^coregate: ${flag}: ${literal(directory)} is a directory, not a file \\(looked for ${literal(resolve(directory))}\\): ${flag} must name the file with `), result.stderr);
    assert.doesNotMatch(result.stderr, /EISDIR/);
  }
});

test('issue 27 item 2: a request body file that is not JSON is refused naming --file, the file and what it must hold', async () => {
  const body = join(dir, 'body.json');
  writeFileSync(body, '{"customerReference": "C0001",');
  const result = await cli(commands[0]?.line(body) ?? []);
  assert.equal(result.code, 2, result.stderr);
  assert.match(result.stderr, new RegExp(`^coregate: --file: ${literal(body)} is not valid JSON \\(.+\\): correct it; it must hold the request body as JSON \\(--file - reads it from standard input\\)$`, 'm'));
  const piped = await runCli(['term-deposit', 'initiate', '--client-id', 'treasury-app', '--url', 'http://127.0.0.1:9', '--file', '-'], { env, input: 'not json' });
  assert.match(piped.stderr, /^coregate: --file: standard input is not valid JSON \(/m);
});

test('issue 27 item 2: a file that cannot be read for its permissions is refused saying so and how to grant access', { skip: process.getuid?.() === 0 ? 'root reads every file' : false }, async () => {
  const locked = join(dir, 'locked.json');
  writeFileSync(locked, '{}');
  chmodSync(locked, 0o000);
  const result = await cli(commands[2]?.line(locked) ?? []);
  assert.equal(result.code, 2);
  assert.match(result.stderr, new RegExp(`^coregate: --jwks: ${literal(locked)} cannot be read: permission denied \\(looked for ${literal(resolve(locked))}\\): give the user running coregate read access to it`));
});
