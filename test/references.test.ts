/**
 * Every reference resolves inside the repository (docs/architecture.md, "How the code is written"):
 * someone who cloned coregate alone can follow every pointer the code, the tests and the docs give.
 *
 * - No file names a document that is not in the repository: the specification and the contract
 *   the project was first built from, or the house style and developer notes kept beside them. The
 *   rules they held are stated in docs/, per topic, in the project's words.
 * - A reference to the project's docs names a file that exists, and, when it names a section, a
 *   heading of that file: `docs/auth.md, "Client revocation"` (the heading's text, quoted after the
 *   file; a heading's leading number, as in deployment.md's "2. Several instances ...", and a
 *   trailing parenthesis or subtitle after ": " may be left out), or `docs/auth.md#client-revocation`
 *   (GitHub's anchor). Several sections may follow one file: `"Keys" and "Client secrets"`. Links
 *   between the docs (`[x](x.md#anchor)`, `[y](#anchor)`) are checked the same way.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import { repoRoot } from './helpers/repo-root.js';

/** The folders read whole, and the single files. */
const scannedFolders = ['src', 'test', 'scripts', 'bench', 'examples', 'docs'];
const scannedFiles = ['README.md'];
const textExtensions = new Set(['.ts', '.mts', '.cts', '.js', '.mjs', '.cjs', '.json', '.md', '.html', '.css', '.sh', '.sql', '.txt', '.yaml', '.yml']);

/**
 * The names of the documents outside the repository, in capitals as they were cited, spelled in
 * pieces so that this file does not name them itself.
 */
const outsideDocuments = new RegExp(`\\b(?:${['CON' + 'TRACT', 'SP' + 'EC']
  .join('|')})\\b|\\b(?:${['STY' + 'LE', 'DEVELO' + 'PERS'].join('|')})(?:\\.md)?\\b`, 'g');

function listFiles(folder: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(join(repoRoot, folder), { withFileTypes: true })) {
    const path = posix.join(folder, entry.name);
    if (entry.isDirectory()) {
      if (entry.name === 'node_modules' || entry.name === 'dist') continue;
      files.push(...listFiles(path));
    } else if (textExtensions.has(path.slice(path.lastIndexOf('.')))) {
      files.push(path);
    }
  }
  return files;
}

interface Heading { text: string; anchor: string }

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to `-`. */
function anchorOf(text: string): string {
  return text.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
}

/** A heading's text as a reference may name it: without backticks, case or its leading number. */
function normalized(text: string): string {
  return text.replace(/`/g, '').replace(/\s+/g, ' ').trim().toLowerCase();
}

const headingsByFile = new Map<string, Heading[]>();

/** The headings of a markdown file, outside fenced code blocks; repeated anchors get GitHub's -1, -2. */
function headingsOf(file: string): Heading[] {
  const known = headingsByFile.get(file);
  if (known) return known;
  const headings: Heading[] = [];
  const seen = new Map<string, number>();
  let fence: string | undefined;
  for (const line of readFileSync(join(repoRoot, file), 'utf8').split('\n')) {
    const fenceMark = /^\s*(```|~~~)/.exec(line)?.[1];
    if (fenceMark) {
      fence = fence === undefined ? fenceMark : fence === fenceMark ? undefined : fence;
      continue;
    }
    if (fence) continue;
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const text = heading[1]!;
    const base = anchorOf(text);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    headings.push({ text, anchor: count === 0 ? base : `${base}-${count}` });
  }
  headingsByFile.set(file, headings);
  return headings;
}

/** Whether `name` names one of the file's headings (see the file's comment for what may be left out). */
function namesHeading(file: string, name: string): boolean {
  const wanted = normalized(name);
  return headingsOf(file).some(({ text }) => {
    const candidates = [normalized(text), normalized(text.replace(/^\d+\.\s+/, ''))];
    return candidates.some((candidate) => candidate === wanted
      || [' (', ': ', ', ', ' — '].some((next) => candidate.startsWith(wanted + next)));
  });
}

function hasAnchor(file: string, anchor: string): boolean {
  return headingsOf(file).some((heading) => heading.anchor === anchor);
}

/** 1-based line of a character offset. */
function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let index = text.indexOf('\n'); index !== -1 && index < offset; index = text.indexOf('\n', index + 1)) line += 1;
  return line;
}

/**
 * The quoted section names that follow a file reference: `, "A"`, ` "A" and "B"`, `: "A", "B"`.
 * A comment may wrap the name over lines (` * ` or `// ` at the next line's start), and a string
 * literal may escape its quotes.
 */
function sectionNamesAfter(text: string): string[] {
  const joined = text.slice(0, 400).replace(/\n[ \t]*(?:\*(?!\/)|\/\/|#)?[ \t]*/g, ' ');
  const first = /^,?[ \t]*\\?"([^"\\]+)\\?"/.exec(joined);
  if (!first) return [];
  const names = [first[1]!];
  let rest = joined.slice(first[0].length);
  for (let next = /^(?:,[ \t]*|[ \t]+(?:and|or)[ \t]+)\\?"([^"\\]+)\\?"/.exec(rest); next; next = /^(?:,[ \t]*|[ \t]+(?:and|or)[ \t]+)\\?"([^"\\]+)\\?"/.exec(rest)) {
    names.push(next[1]!);
    rest = rest.slice(next[0].length);
  }
  return names;
}

interface Finding { where: string; problem: string }

function referencesIn(file: string, text: string): Finding[] {
  const findings: Finding[] = [];
  const at = (offset: number, problem: string): void => { findings.push({ where: `${file}:${lineAt(text, offset)}`, problem }); };

  for (const match of text.matchAll(outsideDocuments)) {
    at(match.index, `names "${match[0]}", a document outside the repository: cite the docs/ page that states the rule`);
  }

  // A docs file or the README, then the sections it names by heading or anchor (this file's first comment).
  const fileReference = /(?<![\w/.$-])(docs\/[\w.-]*\w\.(?:md|json|png|svg)|README\.md)(#[\w-]+)?/g;
  for (const match of text.matchAll(fileReference)) {
    const target = match[1]!;
    // A markdown link's target is checked below, relative to the linking file.
    if (file.endsWith('.md') && text.slice(match.index - 2, match.index) === '](') continue;
    if (!existsSync(join(repoRoot, target)) || !statSync(join(repoRoot, target)).isFile()) {
      at(match.index, `${target} does not exist`);
      continue;
    }
    if (!target.endsWith('.md')) continue;
    const anchor = match[2]?.slice(1);
    if (anchor !== undefined && !hasAnchor(target, anchor)) at(match.index, `${target} has no heading whose anchor is #${anchor}`);
    const after = text.slice(match.index + match[0].length);
    if (/^,?[ \t]*§/.test(after)) at(match.index, `${target} is cited by a section number: name the heading ("${target}, \\"Heading\\"")`);
    for (const name of sectionNamesAfter(after)) {
      if (!namesHeading(target, name)) at(match.index, `${target} has no heading "${name}"`);
    }
  }

  // Links between the docs: [text](x.md#anchor), [text](#anchor), relative to the linking file.
  if (file.endsWith('.md')) {
    for (const match of text.matchAll(/\]\(([\w./-]*\.md)?(#[\w-]+)?\)/g)) {
      if (match[1] === undefined && match[2] === undefined) continue;
      const target = match[1] === undefined ? file : posix.normalize(posix.join(dirname(file), match[1]));
      if (!existsSync(join(repoRoot, target))) {
        at(match.index, `the link's ${target} does not exist`);
        continue;
      }
      const anchor = match[2]?.slice(1);
      if (anchor !== undefined && !hasAnchor(target, anchor)) at(match.index, `the link's ${target} has no heading whose anchor is #${anchor}`);
    }
  }
  return findings;
}

test('every reference in src/, test/, scripts/, bench/, examples/, docs/ and the README resolves inside the repository', () => {
  const files = [...scannedFolders.flatMap(listFiles), ...scannedFiles];
  assert.ok(files.length > 500, `read ${files.length} files: the walk missed the tree`);
  const findings = files.flatMap((file) => referencesIn(file, readFileSync(join(repoRoot, file), 'utf8')))
    .map(({ where, problem }) => `${where}: ${problem}`);
  assert.deepEqual(findings, [], `${findings.length} references do not resolve:\n${findings.join('\n')}`);
});

test('the check\'s own cases: a heading by its text, wrapped or escaped, or by its anchor resolves; a missing file, heading or anchor, a section number and an outside document do not', () => {
  // Spelled through `d` so that the whole-tree check above does not read these examples as references.
  const d = 'docs';
  const problems = (file: string, text: string): string[] => referencesIn(file, text).map(({ problem }) => problem);
  assert.deepEqual(problems('x.ts', `// (${d}/auth.md, "Client revocation"); ${d}/api.md "Audit"; ${d}/limits.md; ${d}/deployment.md, "Several instances behind a load balancer"`), []);
  assert.deepEqual(problems('x.ts', `/** wrapped (${d}/auth.md, "Client\n * revocation") */`), []);
  assert.deepEqual(problems('x.ts', `'see ${d}/business-days.md, \\"Events\\" and ${d}/auth.md#client-revocation, ${d}/auth.md, "Keys" and "Client secrets"'`), []);
  assert.deepEqual(problems('x.ts', `// ${d}/auth.md, "No such heading"; ${d}/nothing.md; ${d}/auth.md#nowhere; ${d}/deployment.md §1; ${d}/auth.md, "Keys" and "Nothing"`), [
    `${d}/auth.md has no heading "No such heading"`,
    `${d}/nothing.md does not exist`,
    `${d}/auth.md has no heading whose anchor is #nowhere`,
    `${d}/deployment.md is cited by a section number: name the heading ("${d}/deployment.md, \\"Heading\\"")`,
    `${d}/auth.md has no heading "Nothing"`,
  ]);
  const outside = ['CON' + 'TRACT §4', 'SP' + 'EC rule 3', 'STY' + 'LE.md', 'DEVELO' + 'PERS.md'];
  assert.equal(referencesIn('x.ts', outside.map((name) => `// ${name}`).join('\n')).length, outside.length);
  assert.deepEqual(problems(`${d}/x.md`, '[a](auth.md#client-revocation), [b](auth.md#nowhere), [c](#nowhere)'), [
    `the link's ${d}/auth.md has no heading whose anchor is #nowhere`,
    `the link's ${d}/x.md does not exist`,
  ]);
});
