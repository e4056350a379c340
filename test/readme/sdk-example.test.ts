/**
 * issue 27: the README's SDK example for `npm start` works as pasted, and again: the block after
 * `<!-- sdk-sandbox -->` runs here with node, twice in a row, against `coregate serve --sandbox
 * --data demo/sandbox.json` (what `npm start` runs); only the base URL is replaced by the test
 * server's. Each run makes a deposit and pays the installment: a fixed correlation id would make
 * the second run a 409 and the payment would never run.
 */
// @lane process: starts coregate processes (docs/testing.md, "Lanes")
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { spawnCoregate, type CoregateProcess } from '../helpers/processes.js';
import { repoRoot } from '../helpers/server.js';

const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
const dir = mkdtempSync(join(tmpdir(), 'coregate-readme-sdk-'));
let server: CoregateProcess;

before(async () => {
  server = await spawnCoregate(['serve', '--sandbox', '--data', 'demo/sandbox.json', '--db', `sqlite:${join(dir, 'readme.db')}`]);
  // A project that depends on coregate: `coregate/sdk` resolves through its node_modules (the built package).
  mkdirSync(join(dir, 'project', 'node_modules'), { recursive: true });
  symlinkSync(repoRoot, join(dir, 'project', 'node_modules', 'coregate'), 'dir');
});
after(async () => {
  await server?.stop('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
});

function sdkExample(): string {
  const block = /<!-- sdk-sandbox -->\n```js\n([\s\S]*?)```/.exec(readme)?.[1];
  assert.ok(block, 'the README has the SDK example for npm start');
  assert.match(block, /baseUrl: 'http:\/\/localhost:8080',/, 'the example names npm start\'s URL');
  assert.doesNotMatch(block, /correlationId: '/, 'no fixed correlation id');
  return block.replace("baseUrl: 'http://localhost:8080',", `baseUrl: '${server.url}',`);
}

function node(file: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [file], { cwd: join(dir, 'project'), timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

test('issue 27: the README\'s SDK example, pasted and run twice against npm start, makes a deposit and pays the installment both times', async () => {
  const file = join(dir, 'project', 'try-sdk.mjs');
  writeFileSync(file, sdkExample());
  for (const run of [1, 2]) {
    const result = await node(file);
    assert.equal(result.code, 0, `run ${run}: ${result.stderr}${result.stdout}`);
    assert.equal(result.stderr, '', `run ${run}`);
    assert.match(result.stdout, /^deposit 200 TD\d+$/m, `run ${run}: ${result.stdout}`);
    assert.match(result.stdout, /^installment 200 PartiallyExecuted$/m, `run ${run}: ${result.stdout}`);
  }
});
