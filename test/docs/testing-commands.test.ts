/**
 * docs/testing.md: every line of its shell blocks runs here. The `npx tsx --test` lines run as
 * written (the files they name are small); the `npm test` and `node scripts/test.mjs` lines run
 * with `--list` added, which prints the lanes and files they would run and runs nothing (the suite
 * cannot run the whole suite inside itself), and the lanes and files printed are checked against
 * what the page says they select. A new kind of command on the page that this test does not know
 * fails it, so the page stays true.
 */
// @lane process: starts coregate processes (docs/testing.md, "Lanes")
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { repoRoot } from '../helpers/server.js';

const page = readFileSync(join(repoRoot, 'docs', 'testing.md'), 'utf8');

function shellLines(markdown: string): string[] {
  return [...markdown.matchAll(/```sh\n([\s\S]*?)```/g)].flatMap((block) => (block[1] ?? '').split('\n').map((line) => line.trim()).filter((line) => line !== ''));
}

/** `NAME=value ... command args`: the environment assignments and the words (none has spaces or quotes). */
function parse(line: string): { env: Record<string, string>; words: string[] } {
  const words = line.split(/\s+/);
  const env: Record<string, string> = {};
  while (words[0] && /^[A-Z_]+=/.test(words[0])) {
    const [name, value] = words.shift()!.split('=') as [string, string];
    env[name] = value;
  }
  return { env, words };
}

function run(command: string, args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  // A nested test run must not take itself for a file of this one (NODE_TEST_CONTEXT), nor write
  // into this run's per-file times.
  const { NODE_TEST_CONTEXT: _context, COREGATE_TEST_TIMINGS: _timings, ...inherited } = process.env;
  return new Promise((resolve) => {
    execFile(command, args, { cwd: repoRoot, env: { ...inherited, ...env }, timeout: 240_000, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

/** The lanes of a `--list` output: lane name → its files. */
function lanesOf(listing: string): Map<string, string[]> {
  const lanes = new Map<string, string[]>();
  let current: string[] | undefined;
  for (const line of listing.split('\n')) {
    const lane = /^lane ([a-z-]+): (\d+) files/.exec(line);
    if (lane?.[1]) lanes.set(lane[1], (current = []));
    else if (line.startsWith('  ') && current) current.push(line.trim());
  }
  return lanes;
}

/** What the page says each `scripts/test.mjs` command selects. */
function checkSelection(args: string[], env: Record<string, string>, lanes: Map<string, string[]>): void {
  const chosen = args.flatMap((arg, index) => (args[index - 1] === '--lane' ? [arg] : []));
  const filters = args.filter((arg, index) => !arg.startsWith('--') && args[index - 1] !== '--lane');
  const names = [...lanes.keys()];
  if (chosen.length > 0) assert.deepEqual(names.sort(), [...chosen].sort(), `--lane ${chosen.join(', ')} runs exactly those lanes`);
  else if (env.COREGATE_TEST_DEPLOYMENTS === 'none') assert.ok(!names.includes('remote-core') && !names.includes('two-instances'));
  for (const [lane, files] of lanes) {
    assert.ok(files.length > 0, `lane ${lane} lists its files`);
    for (const file of files) {
      assert.match(file, /^test\/.*\.test\.ts$/);
      if (filters.length > 0) assert.ok(filters.some((filter) => file.includes(filter)), `${file} matches a filter`);
    }
  }
  // The page's claims about the lanes: the CLI's entry is a process test, its commands run in the
  // test's process; the OpenAPI document is not re-run per deployment; execution is.
  if (lanes.has('process')) {
    assert.ok(lanes.get('process')!.includes('test/cli/first-contact.test.ts'));
    assert.ok(!lanes.get('process')!.includes('test/cli/clients.test.ts'));
  }
  if (lanes.has('in-process') && filters.length === 0) {
    assert.ok(lanes.get('in-process')!.includes('test/core/money.test.ts'));
    assert.ok(lanes.get('in-process')!.includes('test/cli/clients.test.ts'));
    assert.ok(!lanes.get('in-process')!.includes('test/cli/first-contact.test.ts'));
  }
  for (const deployment of ['remote-core', 'two-instances']) {
    const files = lanes.get(deployment);
    if (!files || filters.length > 0) continue;
    assert.ok(files.includes('test/api/term-deposit-initiation.test.ts'), `${deployment} re-runs execution`);
    assert.ok(!files.includes('test/api/openapi.test.ts'), `${deployment} does not re-run the OpenAPI document`);
  }
}

test('docs/testing.md: every command of its shell blocks runs', { timeout: 600_000 }, async () => {
  const lines = shellLines(page);
  assert.ok(lines.length >= 7, 'the page has its commands');
  for (const line of lines) {
    const { env, words } = parse(line);
    if (words[0] === 'npx' && words[1] === 'tsx' && words[2] === '--test') {
      const result = await run('npx', words.slice(1), env);
      assert.equal(result.code, 0, `${line}\n${result.stdout.slice(-3000)}\n${result.stderr.slice(-2000)}`);
      assert.match(result.stdout, /^# fail 0$/m, line);
      assert.doesNotMatch(result.stdout, /^# pass 0$/m, `${line} ran tests`);
      continue;
    }
    let args: string[];
    if (words[0] === 'npm' && words[1] === 'test') args = words.slice(words[2] === '--' ? 3 : 2);
    else if (words[0] === 'node' && words[1] === 'scripts/test.mjs') args = words.slice(2);
    else assert.fail(`a command this test does not know how to run: ${line}`);
    const listing = await run(process.execPath, ['scripts/test.mjs', ...args, ...(args.includes('--list') ? [] : ['--list'])], env);
    assert.equal(listing.code, 0, `${line}\n${listing.stderr}`);
    const lanes = lanesOf(listing.stdout);
    assert.ok(lanes.size > 0, `${line} lists lanes:\n${listing.stdout}`);
    checkSelection(args, env, lanes);
  }
});
