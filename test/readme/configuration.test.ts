/**
 * README's "Configuration" table documents every flag of `coregate serve`: each option that
 * `coregate serve --help` lists has a row whose first column names it and whose second names the
 * environment variable the help gives it; and the table names no flag the command lacks. A new
 * flag without its row (as `--sandbox` and `--operator-api` were) fails here.
 */
// @lane process: starts coregate processes (docs/testing.md, "Lanes")
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli } from '../helpers/cli.js';
import { repoRoot } from '../helpers/repo-root.js';

interface HelpOption {
  flag: string;
  env: string | undefined;
}

/** The options of a commander help text, each with the `env NAME` its description gives (wrapped lines joined). */
function helpOptions(help: string): HelpOption[] {
  const options: Array<{ flag: string; text: string }> = [];
  for (const line of (help.split('\nOptions:\n')[1] ?? '').split('\n')) {
    const start = /^ {2}(?:-\w, )?(--[a-z][a-z0-9-]*)(.*)$/.exec(line);
    if (start) options.push({ flag: start[1] ?? '', text: start[2] ?? '' });
    else if (/^ {4,}\S/.test(line) && options.length > 0) options[options.length - 1]!.text += ` ${line.trim()}`;
  }
  return options.filter((option) => option.flag !== '--help').map((option) => ({ flag: option.flag, env: /\benv (COREGATE_[A-Z0-9_]+)/.exec(option.text)?.[1] }));
}

/** The Configuration table's rows: the flags of the first column, the variables of the second. */
function configurationRows(readme: string): Array<{ flags: string[]; envs: string[] }> {
  const section = readme.slice(readme.indexOf('\n## Configuration\n'), readme.indexOf('\n## ', readme.indexOf('\n## Configuration\n') + 1));
  return section
    .split('\n')
    .filter((line) => line.startsWith('| ') && !line.startsWith('| Flag') && !line.startsWith('|---'))
    .map((line) => {
      const [first = '', second = ''] = line.split(' | ');
      return { flags: [...first.matchAll(/`(--[a-z][a-z0-9-]*)/g)].map((match) => match[1] ?? ''), envs: [...second.matchAll(/`(COREGATE_[A-Z0-9_]+)`/g)].map((match) => match[1] ?? '') };
    });
}

test('every option of `coregate serve --help` has its row in README\'s Configuration table, with its environment variable; the table names no other flag', async () => {
  const help = await runCli(['serve', '--help']);
  assert.equal(help.code, 0, help.stderr);
  const options = helpOptions(help.stdout);
  assert.ok(options.length >= 30, `the help's options were read: ${options.map((option) => option.flag).join(' ')}`);
  const rows = configurationRows(readFileSync(join(repoRoot, 'README.md'), 'utf8'));
  const missing: string[] = [];
  for (const option of options) {
    const row = rows.find((each) => each.flags.includes(option.flag));
    if (!row) missing.push(option.flag);
    else if (option.env !== undefined) assert.ok(row.envs.includes(option.env), `README's row of ${option.flag} names ${option.env}`);
  }
  assert.deepEqual(missing, [], 'serve flags without a row in README\'s Configuration table');
  const documented = rows.flatMap((row) => row.flags);
  assert.deepEqual(documented.filter((flag) => !options.some((option) => option.flag === flag)), [], 'flags in the table that `coregate serve` does not take');
  for (const flag of ['--sandbox', '--operator-api']) assert.ok(documented.includes(flag), flag);
});
