/**
 * Issue 27 (what a newcomer tripped on), item 1: `accounts show`, `term-deposits show`,
 * `facilities show` and a broken `check` print for a person by default (aligned labelled lines,
 * tables for postings and installments, amounts as decimals with their currency, findings in
 * words with what to do) and exactly their JSON with `--json`. The real CLI on a SQLite store a
 * server constituted a deposit on.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { depositBody } from '../helpers/bodies.js';
import { runCli } from '../helpers/cli.js';
import { demo, startTestServer, type TestServer } from '../helpers/server.js';
import { embedded, withStore } from '../helpers/stores.js';

const dir = mkdtempSync(join(tmpdir(), 'coregate-readable-'));
const dbUrl = `sqlite:${join(dir, 'readable.db')}`;
const env = { ...process.env, COREGATE_MASTER_KEY: '', COREGATE_CLIENT_SECRET: demo.treasury.secret };
const cli = (args: string[]) => runCli(args, { env });

let server: TestServer | undefined;
/** The deposit the server constituted: its contract and its operation's reference. */
let deposit: { termDepositAccount: string; operationReference: string };

before(async () => {
  server = await startTestServer({ db: dbUrl, deployment: 'embedded' });
  const body = join(dir, 'deposit.json');
  writeFileSync(body, JSON.stringify(depositBody(1000)));
  const initiated = await cli(['term-deposit', 'initiate', '--file', body, '--url', server.url, '--client-id', demo.treasury.clientId, '--json']);
  assert.equal(initiated.code, 0, initiated.stderr);
  deposit = JSON.parse(initiated.stdout) as typeof deposit;
});
after(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Human output: no JSON punctuation of a dumped object. */
function assertNoJson(text: string): void {
  assert.doesNotMatch(text, /[{}"]|^\s*\[/m, `JSON in the human output:\n${text}`);
}

test('issue 27 item 1: accounts show prints the account as aligned fields and its postings as a table by default, and its view as JSON with --json', async () => {
  const human = await cli(['accounts', 'show', '1000000001', '--db', dbUrl]);
  assert.equal(human.code, 0, human.stderr);
  assertNoJson(human.stdout);
  assert.match(human.stdout, /^Account: {3}1000000001$/m);
  assert.match(human.stdout, /^Customer: {2}C0001$/m);
  assert.match(human.stdout, /^Balance: {3}249000\.00 USD$/m, 'the balance after the deposit, a decimal amount with its currency');
  assert.match(human.stdout, /^Latest postings \(newest first\):\nBUSINESS DATE +REFERENCE +KIND +DESCRIPTION +AMOUNT +BALANCE AFTER$/m);
  const rows = human.stdout.split('\n').filter((line) => /^\d{4}-\d{2}-\d{2} /.test(line));
  assert.equal(rows.length, 2, 'the deposit\'s posting and the opening balance');
  assert.match(rows[0] ?? '', new RegExp(`${deposit.operationReference} .* -1000\\.00 USD +249000\\.00 USD$`));
  assert.match(rows[1] ?? '', /^2026-03-02 +opening-1000000001 .* 250000\.00 USD +250000\.00 USD$/);

  const json = await cli(['accounts', 'show', '1000000001', '--db', dbUrl, '--json']);
  assert.equal(json.code, 0, json.stderr);
  const shown = JSON.parse(json.stdout) as { account: { accountNumber: string; balance: unknown }; postings: Array<{ reference: string; amount: unknown }>; more: boolean };
  assert.deepEqual(Object.keys(shown), ['account', 'postings', 'more'], 'the JSON shape is unchanged');
  assert.deepEqual(shown.account.balance, { amount: '249000.00', currency: 'USD' });
  assert.deepEqual(shown.postings.map((posting) => posting.reference), [deposit.operationReference, 'opening-1000000001']);
  assert.deepEqual(shown.postings[0]?.amount, { amount: '-1000.00', currency: 'USD' });
});

test('issue 27 item 1: term-deposits show prints the deposit as aligned fields by default, and its view as JSON with --json', async () => {
  const human = await cli(['term-deposits', 'show', deposit.termDepositAccount, '--db', dbUrl]);
  assert.equal(human.code, 0, human.stderr);
  assertNoJson(human.stdout);
  const lines = human.stdout.trimEnd().split('\n');
  const valueColumn = (lines[0] ?? '').search(/\S+$/);
  assert.ok(lines.every((line) => line.indexOf(':') < valueColumn - 1 && line[valueColumn - 1] === ' ' && line[valueColumn] !== ' '), `values aligned in one column:\n${human.stdout}`);
  assert.match(human.stdout, new RegExp(`^Term deposit: +${deposit.termDepositAccount}$`, 'm'));
  assert.match(human.stdout, /^Principal: +1000\.00 USD$/m);
  assert.match(human.stdout, /^Rate: +5\.25 % \(.+\)$/m);
  assert.match(human.stdout, /^Maturity date: +\d{4}-\d{2}-\d{2} \(\d+ days\)$/m);
  assert.match(human.stdout, /^Expected interest: +\d+\.\d{2} USD$/m);
  assert.match(human.stdout, /^Status: +Active$/m);

  const json = await cli(['term-deposits', 'show', deposit.termDepositAccount, '--db', dbUrl, '--json']);
  assert.equal(json.code, 0, json.stderr);
  const view = JSON.parse(json.stdout) as { termDepositAccount: string; principal: unknown; operationReference: string };
  assert.equal(view.termDepositAccount, deposit.termDepositAccount);
  assert.deepEqual(view.principal, { amount: '1000.00', currency: 'USD' });
  assert.equal(view.operationReference, deposit.operationReference);
});

test('issue 27 item 1: facilities show prints the facility as aligned fields and its installments as a table by default, and its view as JSON with --json', async () => {
  const human = await cli(['facilities', 'show', '7000000001', '--db', dbUrl]);
  assert.equal(human.code, 0, human.stderr);
  assertNoJson(human.stdout);
  assert.match(human.stdout, /^Loan facility: +7000000001$/m);
  assert.match(human.stdout, /^Approved limit: +100000\.00 USD$/m);
  assert.match(human.stdout, /^Limit used: +0\.00 USD \(0\.00 %\)$/m);
  assert.match(human.stdout, /^Outstanding: +60000\.00 USD$/m);
  assert.match(human.stdout, /^Installments:\nSEQUENCE +DUE DATE +STATUS +AMOUNT +PAID +OUTSTANDING$/m);
  assert.match(human.stdout, /^1 +2026-03-31 +\S+ +20000\.00 USD +0\.00 USD +20000\.00 USD$/m);
  assert.match(human.stdout, /^3 +2026-09-30 +\S+ +20000\.00 USD +0\.00 USD +20000\.00 USD$/m);

  const json = await cli(['facilities', 'show', '7000000001', '--db', dbUrl, '--json']);
  assert.equal(json.code, 0, json.stderr);
  const view = JSON.parse(json.stdout) as { merchandisingLoanId: string; installments: Array<{ sequence: number; amount: unknown }> };
  assert.equal(view.merchandisingLoanId, '7000000001');
  assert.deepEqual(view.installments.map((installment) => installment.sequence), [1, 2, 3]);
  assert.deepEqual(view.installments[0]?.amount, { amount: '20000.00', currency: 'USD' });
});

test('issue 27 item 1: a broken check names each finding in words (what is wrong, which item, what to do), and prints the raw report with --json', async () => {
  const clean = await cli(['check', '--db', dbUrl]);
  assert.equal(clean.code, 0, clean.stdout + clean.stderr);
  assert.match(clean.stdout, /^Operations OK: 1 executed operations/m);
  // The server stops first: the tampering below is the only writer.
  await server?.close();
  server = undefined;
  await withStore(dbUrl, async (store) => {
    // A balance changed without a posting, and the deposit's movement taken from its operation.
    await embedded(store.db).updateTable('accounts').set((eb) => ({ balance_minor: eb('balance_minor', '+', 1n) })).where('account_number', '=', '1000000002').execute();
    await embedded(store.db).updateTable('movements').set({ reference: 'moved-away' }).where('reference', '=', deposit.operationReference).execute();
  });

  const human = await cli(['check', '--db', dbUrl]);
  assert.equal(human.code, 1, human.stderr);
  assertNoJson(human.stdout.replace(/`[^`]*`/g, ''));
  assert.match(human.stdout, /^Ledger BROKEN: 1 finding\.\n {2}- account 1000000002: its stored balance \(\d+ in minor units\) is not the sum of its postings \(\d+\)\n {2}What to do: stop writes to the core's database/m);
  assert.match(human.stdout, new RegExp(`^Operations BROKEN \\(of 1 executed\\): 1 finding\\.\\n {2}- operation ${deposit.operationReference} is Executed, but the core holds no postings for it\\n {2}What to do \\(executed without postings\\): .*Do not repeat the operation`, 'm'));
  assert.match(human.stdout, /^Audit chain OK: /m);
  assert.match(human.stdout, /^Run `coregate check --json` for the full report as JSON\.$/m);

  const json = await cli(['check', '--db', dbUrl, '--json']);
  assert.equal(json.code, 1);
  const report = JSON.parse(json.stdout) as { ok: boolean; ledger: { ok: boolean; balanceMismatches: Array<{ accountNumber: string }> }; operations: { ok: boolean; executedWithoutPostings: string[] } };
  assert.equal(report.ok, false);
  assert.deepEqual(report.ledger.balanceMismatches.map((mismatch) => mismatch.accountNumber), ['1000000002']);
  assert.deepEqual(report.operations.executedWithoutPostings, [deposit.operationReference]);
});
