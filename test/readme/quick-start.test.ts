/**
 * issue 12: the README's quick start works when pasted. The shell block after `<!-- quick-start -->`
 * runs here as written, in bash from the repository's directory, against `coregate serve
 * --sandbox --data demo/sandbox.json` (what `npm start` runs); only the base URL is replaced by the
 * test server's. Each step's answer is checked, so the README cannot drift from the service.
 */
// @lane process: starts coregate processes (docs/testing.md, "Lanes")
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { spawnCoregate, type CoregateProcess } from '../helpers/processes.js';
import { cliPath, repoRoot } from '../helpers/server.js';

const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
const dir = mkdtempSync(join(tmpdir(), 'coregate-readme-'));
let server: CoregateProcess;

before(async () => {
  server = await spawnCoregate(['serve', '--sandbox', '--data', 'demo/sandbox.json', '--db', `sqlite:${join(dir, 'readme.db')}`]);
});
after(async () => {
  await server?.stop('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
});

function quickStart(): string {
  const block = /<!-- quick-start -->\n```sh\n([\s\S]*?)```/.exec(readme)?.[1];
  assert.ok(block, 'the README has a quick-start block');
  assert.match(block, /^BASE=http:\/\/localhost:8080$/m, 'the block starts from the default URL');
  return block.replace(/^BASE=http:\/\/localhost:8080$/m, `BASE=${server.url}`);
}

/** The CLI paragraph's block, right after the curl lines in the README, with the default URL replaced by the test server's. */
function quickStartCli(): string {
  const block = /<!-- quick-start-cli -->\n```sh\n([\s\S]*?)```/.exec(readme)?.[1];
  assert.ok(block, 'the README has the CLI\'s quick-start block');
  assert.match(block, /COREGATE_URL=http:\/\/localhost:8080 /, 'the block names the default URL');
  // `npx coregate` runs the built CLI (what `npx coregate` runs in this repository); the rest runs as written.
  return `npx() { if [ "$1" = coregate ]; then shift; node ${JSON.stringify(cliPath)} "$@"; else command npx "$@"; fi; }\n${block.replaceAll('http://localhost:8080', server.url)}`;
}

function bash(script: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('bash', ['-e', '-o', 'pipefail', '-c', script], { cwd: repoRoot, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

test('issue 12: the README quick start, pasted line by line, goes from a token to a deposit, its retrieve, a loan installment and the operation', async () => {
  const run = await bash(quickStart());
  assert.equal(run.code, 0, run.stderr);
  const answers = run.stdout.trim().split('\n').map((line) => JSON.parse(line) as Record<string, any>);
  assert.equal(answers.length, 4, run.stdout);
  const [deposit, retrieve, loan, operation] = answers as [Record<string, any>, Record<string, any>, Record<string, any>, Record<string, any>];
  assert.match(String(deposit.termDepositAccount), /^TD\d+$/, JSON.stringify(deposit));
  assert.equal(retrieve.termDepositAccount, deposit.termDepositAccount, JSON.stringify(retrieve));
  assert.equal(retrieve.termDepositStatus, 'Active');
  assert.equal(retrieve.principalAmount.amountValue, 10000);
  assert.equal(loan.merchandisingLoanFacilityStatus, 'PartiallyExecuted', JSON.stringify(loan));
  assert.equal(operation.reference, deposit.operationReference, JSON.stringify(operation));
  assert.equal(operation.status, 'Executed');
});

test('issue 12: pasting the quick start again makes a second deposit (a new correlation id), not a 409', async () => {
  const run = await bash(quickStart());
  assert.equal(run.code, 0, run.stderr);
  const [deposit] = run.stdout.trim().split('\n').map((line) => JSON.parse(line) as Record<string, any>);
  assert.match(String(deposit?.termDepositAccount), /^TD\d+$/, run.stdout);
});

test('the README\'s CLI lines, run right after the curl lines as the README has them, make their own deposit, retrieve it, pay an installment and show the operation (no 409: each call gives its own correlation id)', async () => {
  const run = await bash(`${quickStart()}\n${quickStartCli()}`);
  assert.equal(run.code, 0, run.stdout + run.stderr);
  const lines = run.stdout.trim().split('\n');
  const curlDeposit = JSON.parse(lines[0] ?? '{}') as Record<string, any>;
  const cli = lines.slice(4).join('\n');
  const initiated = /^Term deposit (TD\d+) constituted: 10000 USD, .*, operation ([0-9a-f-]+)$/m.exec(cli);
  assert.ok(initiated, `the CLI constitutes a deposit: ${run.stdout}${run.stderr}`);
  assert.notEqual(initiated[1], curlDeposit.termDepositAccount, 'a deposit of its own, not the curl lines\' one');
  assert.match(cli, new RegExp(`^Term deposit ${initiated[1]} \\(Active\\) of customer C0001$`, 'm'));
  assert.match(cli, /^Installment 1 of 7000000001: PartiallyExecuted, /m);
  assert.match(cli, new RegExp(`^Operation ${initiated[2]} \\(initiateTermDeposit\\): Executed$`, 'm'));
  assert.doesNotMatch(run.stderr, /409|CONFLICT/);
});

// That the README and docs point at nothing outside the repository is test/references.test.ts's.
test('issue 12: the examples the README uses exist', () => {
  for (const example of readme.matchAll(/examples\/[a-z-]+\.json/g)) readFileSync(join(repoRoot, example[0]), 'utf8');
});
