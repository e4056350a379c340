/**
 * docs/conformance.md: every command of its shell blocks runs here, in order — `coregate core
 * serve` and the example core become ready on ports the test picks, each `coregate core
 * conformance` line ends with the exit code the page gives it (0 unless a `# exit N` comment says
 * otherwise) — and its library example (`<!-- conformance-library -->`) runs as pasted with node
 * against the example core, through an adapter the test writes as a bank would. A new command the
 * test cannot run fails it, so the page stays true.
 */
// @lane process: starts coregate processes (docs/testing.md, "Lanes")
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { startExampleCore, type ExampleCore } from '../conformance/example-core-process.js';
import { runCli } from '../helpers/cli.js';
import { freePort, spawnCoregate, type CoregateProcess } from '../helpers/processes.js';
import { repoRoot } from '../helpers/repo-root.js';

const page = readFileSync(join(repoRoot, 'docs/conformance.md'), 'utf8');
const dir = mkdtempSync(join(tmpdir(), 'coregate-conformance-doc-'));
const running: Array<CoregateProcess | ExampleCore> = [];
after(async () => {
  for (const server of running) await server.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** The page's command lines, in order, each with the exit code its comment gives (0 by default). */
function commandLines(markdown: string): Array<{ line: string; exit: number }> {
  const lines: Array<{ line: string; exit: number }> = [];
  for (const block of markdown.matchAll(/```sh\n([\s\S]*?)```/g)) {
    for (const raw of (block[1] ?? '').split('\n')) {
      const exit = Number(/#\s*exit (\d+)/.exec(raw)?.[1] ?? '0');
      const line = raw.replace(/\s+#.*$/, '').trim();
      if (line !== '') lines.push({ line, exit });
    }
  }
  return lines;
}

test('docs/conformance.md: every command runs in order — the cores become ready, each conformance run ends with the exit code the page gives', { timeout: 300_000 }, async () => {
  const lines = commandLines(page);
  assert.ok(lines.filter(({ line }) => line.startsWith('npx coregate core conformance')).length >= 4, 'the page has its conformance commands');
  /** The page's URLs (by their port) → the ones the test's servers listen on. */
  const urls = new Map<string, string>();
  const local = (word: string) => {
    for (const [port, url] of urls) word = word.replace(new RegExp(`^http://(localhost|127\\.0\\.0\\.1):${port}$`), url);
    return word.replace(/^data\/conformance\.xml$/, join(dir, 'conformance.xml'));
  };
  for (const { line, exit } of lines) {
    const words = line.split(/\s+/);
    const port = words[words.indexOf('--port') + 1] ?? '';
    const without = (list: string[], flag: string) => list.filter((_, index) => list[index] !== flag && list[index - 1] !== flag);
    if (line.startsWith('node examples/core-js/server.mjs ')) {
      const core = await startExampleCore({ args: [], businessDate: words[words.indexOf('--business-date') + 1], ...(words.includes('--break') ? { break: words[words.indexOf('--break') + 1] } : {}) });
      running.push(core);
      urls.set(port, core.url);
      continue;
    }
    assert.ok(line.startsWith('npx coregate '), `a command the test can run: ${line}`);
    const args = words.slice(2);
    if (args[0] === 'core' && args[1] === 'serve') {
      // The test picks the port and the database: the page's --port and --db are replaced.
      const chosen = await freePort();
      const server = await spawnCoregate([...without(without(args, '--port'), '--db'), '--db', `sqlite:${join(dir, 'core.db')}`], { port: chosen, env: { COREGATE_LOG_LEVEL: 'warn' } });
      running.push(server);
      urls.set(port, server.url);
      continue;
    }
    const result = await runCli(args.map(local), { timeoutMs: 120_000 });
    assert.equal(result.code, exit, `${line}\n${result.stdout}${result.stderr}`);
    assert.match(result.stdout, /^\d+ passed, \d+ failed/m, line);
    if (line.includes('--report junit')) assert.match(readFileSync(join(dir, 'conformance.xml'), 'utf8'), /^<\?xml version="1\.0"/);
  }
});

test('docs/conformance.md\'s library example runs as pasted against the example core, through an adapter of the bank\'s: every rule passes but the two a wire and a read side need', { timeout: 120_000 }, async () => {
  const block = /<!-- conformance-library -->\n```js\n([\s\S]*?)```/.exec(page)?.[1];
  assert.ok(block, 'the page has its library example');
  const core = await startExampleCore();
  running.push(core);
  // A project that depends on coregate (the built package), with the bank's adapter beside the example.
  const project = join(dir, 'project');
  mkdirSync(join(project, 'node_modules'), { recursive: true });
  symlinkSync(repoRoot, join(project, 'node_modules', 'coregate'), 'dir');
  writeFileSync(join(project, 'package.json'), '{ "type": "module" }\n');
  writeFileSync(join(project, 'my-bank-core.js'), "import { HttpCore } from 'coregate';\n\nexport class MyBankCore extends HttpCore {\n  constructor({ url }) {\n    super({ url, timeoutMs: 10_000 });\n  }\n}\n");
  writeFileSync(join(project, 'check-my-core.js'), block);
  const result = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(process.execPath, ['check-my-core.js'], { cwd: project, env: { ...process.env, MY_CORE_TEST_URL: core.url }, timeout: 110_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout: String(stdout), stderr: String(stderr) });
    });
  });
  assert.equal(result.code, 0, `${result.stdout}${result.stderr}`);
  assert.match(result.stdout, /^ok {4}at-most-once\.concurrent$/m);
  assert.match(result.stdout, /^skip {2}failures\.malformed-command: /m);
  assert.match(result.stdout, /^18 passed, 0 failed, 2 skipped$/m);
});
