/**
 * docs/conformance.md, "The rules", is the kit's own list: every rule the kit runs, in its order,
 * and no other (a rule removed, split or added shows here first), with the count the page gives;
 * and every flag of `coregate core conformance` is in the page's flag table.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { Command } from 'commander';
import { addCoreConformanceCommand } from '../../src/cli/core-conformance-command.js';
import { conformanceRuleIds } from '../../src/conformance/conformance-rules.js';
import { repoRoot } from '../helpers/repo-root.js';

const page = readFileSync(join(repoRoot, 'docs/conformance.md'), 'utf8');

/** The page's section under `## title`, to the next `## `. */
function section(title: string): string {
  const start = page.indexOf(`\n## ${title}\n`);
  assert.ok(start >= 0, `docs/conformance.md has a section "${title}"`);
  const end = page.indexOf('\n## ', start + 1);
  return page.slice(start, end < 0 ? undefined : end);
}

test('docs/conformance.md lists the kit\'s rules as the kit runs them: the same ids, in the same order, and their count', () => {
  const rules = section('The rules');
  const listed = [...rules.matchAll(/^\| `([a-z.-]+)` \|/gm)].map((match) => match[1]);
  assert.deepEqual(listed, conformanceRuleIds);
  assert.match(rules, new RegExp(`There\\s+are ${conformanceRuleIds.length}\\.`), 'the count the page gives');
});

test('docs/conformance.md\'s flag table names every flag of coregate core conformance', () => {
  const core = new Command('core');
  addCoreConformanceCommand(core, { stdout: process.stdout, stderr: process.stderr } as never, () => undefined as never);
  const command = core.commands.find((candidate) => candidate.name() === 'conformance');
  assert.ok(command, 'the conformance command');
  const flags = command.options.map((option) => option.long ?? '');
  assert.ok(flags.includes('--weekend'));
  const table = section('Running it against a core');
  // A row's first cell, e.g. `--report junit\|tap --out FILE`, names the flag.
  for (const flag of flags) assert.match(table, new RegExp(`^\\| \`[^\`]*${flag}\\b`, 'm'), `${flag} in the flag table`);
});
