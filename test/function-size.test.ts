/**
 * The composition and the command line stay readable (docs/architecture.md, "How the code is
 * written"): no function, method or arrow function in the wiring (src/main.ts, src/server.ts), the
 * metrics facade's construction and the CLI (src/cli) is longer than a reader holds in their head,
 * about 60 lines. A long one is cut into named steps over an options object, as `serveOn` and
 * `buildServer` are. Read with the TypeScript compiler's parser: a function's lines are from its
 * first to its last token, its nested functions included.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import ts from 'typescript';
import { repoRoot } from './helpers/repo-root.js';

const linesMax = 60;

const files = ['src/main.ts', 'src/server.ts', 'src/metrics/registry.ts', ...readdirSync(join(repoRoot, 'src/cli')).filter((name) => name.endsWith('.ts')).map((name) => `src/cli/${name}`)];

/** Every function-like declaration of `text` longer than `max` lines, as "name (n lines)". */
function longFunctions(fileName: string, text: string, max: number): string[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = last - first + 1;
      if (lines > max) {
        const name = node.name !== undefined && ts.isIdentifier(node.name) ? node.name.text : ts.isConstructorDeclaration(node) ? 'constructor' : `a function at line ${first + 1}`;
        found.push(`${fileName}: ${name} (${lines} lines)`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

test('no function of the composition (src/main.ts, src/server.ts), the metrics facade or the CLI (src/cli) is over about 60 lines: cut it into named steps', () => {
  const long = files.flatMap((file) => longFunctions(file, readFileSync(join(repoRoot, file), 'utf8'), linesMax));
  assert.deepEqual(long, []);
});

test('the size rule finds a long function, method and arrow, and lets a short one pass (the check itself, on made-up code)', () => {
  const body = Array.from({ length: 70 }, (_, index) => `  const v${index} = ${index};`).join('\n');
  const text = `function long() {\n${body}\n}\nfunction short() {\n  return 1;\n}\nclass C {\n  method() {\n${body}\n  }\n}\nconst arrow = () => {\n${body}\n};\n`;
  assert.deepEqual(longFunctions('made-up.ts', text, linesMax), ['made-up.ts: long (72 lines)', 'made-up.ts: method (72 lines)', 'made-up.ts: a function at line 150 (72 lines)']);
});
