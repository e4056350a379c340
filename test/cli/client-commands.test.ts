/**
 * The CLI as a client of a running server (through the SDK): `coregate token`,
 * `term-deposit initiate|retrieve`, `loan execute`, `operations get`, their human and `--json`
 * outputs, refused calls (exit 1, the error code on stderr, the record with `--json`), and the
 * secret's rules: only from COREGATE_CLIENT_SECRET or a hidden prompt, never a flag, never in any
 * output. The CLI's program runs in the test's process (test/helpers/cli.ts) without a terminal,
 * against a started server. The CLI is only a client here, so one store (SQLite) is enough.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { decodeJwt } from 'jose';
import { depositBody as sharedDepositBody } from '../helpers/bodies.js';
import { demo, startTestServer, type TestServer } from '../helpers/server.js';
import { runPendingWorkers } from '../helpers/background.js';
import { embedded } from '../helpers/stores.js';
import { runCli, type CliResult } from '../helpers/cli.js';

const processTimeoutMs = 30_000;
const { treasury } = demo;
const jwtPattern = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
const uuidPattern = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
const loanId = '7000000001';

interface RunOptions {
  /** Environment variables on top of a minimal one (PATH only); undefined removes a default. */
  env?: Record<string, string | undefined>;
  /** Written to the CLI's standard input (a pipe, never a terminal). */
  input?: string;
}

let server: TestServer;
const tempDir = mkdtempSync(join(tmpdir(), 'coregate-cli-client-test-'));

/** The client's environment: URL, client id and secret (never inherited from the test's own). */
function clientEnv(): Record<string, string> {
  return { COREGATE_URL: server.url, COREGATE_CLIENT_ID: treasury.clientId, COREGATE_CLIENT_SECRET: treasury.secret };
}

/**
 * Runs `coregate ...` to completion; never throws on a non-zero exit. Every run is checked: no
 * output of any command ever contains the client secret.
 */
async function coregate(args: string[], options: RunOptions = {}): Promise<CliResult> {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '' };
  for (const [name, value] of Object.entries({ ...clientEnv(), ...options.env })) if (value !== undefined) env[name] = value;
  const result = await runCli(args, { env, input: options.input ?? '', timeoutMs: processTimeoutMs });
  assert.equal(result.stdout.includes(treasury.secret), false, `coregate ${args.join(' ')} printed the client secret on stdout`);
  assert.equal(result.stderr.includes(treasury.secret), false, `coregate ${args.join(' ')} printed the client secret on stderr:\n${result.stderr.replaceAll(treasury.secret, '<SECRET>')}`);
  return result;
}

function assertSucceeded(result: CliResult): void {
  assert.equal(result.code, 0, `exit ${result.code}: ${result.stderr}`);
}

let fileCount = 0;

function bodyFile(body: unknown): string {
  fileCount += 1;
  const file = join(tempDir, `body-${fileCount}.json`);
  writeFileSync(file, JSON.stringify(body));
  return file;
}

/** The shared deposit body, of 1000 unless told: the CLI tests pick their amounts. */
const depositBody = (amountValue = 1000) => sharedDepositBody(amountValue);

function loanBody(amountValue = 5000): Record<string, unknown> {
  return {
    merchandisingLoanFacilityParameterType: 'DocumentaryRemittance',
    merchandisingLoanType: 'CRDE',
    merchandisingLoanFacilityReference: { loanAmount: { amountValue, amountCurrency: { currencyCode: 'USD' } } },
    accountReferences: [
      { accountIdentification: { accountIdentificationType: 'PaymentAccount', identifierValue: '1000000001' } },
      { accountIdentification: { accountIdentificationType: 'ExpenseAccount', identifierValue: '1000000001' } },
    ],
  };
}

/** Token requests the server logged ("incoming request" on the token path). */
function tokenRequests(): number {
  const path = new URL(server.tokenUrl()).pathname;
  return server.logLines.filter((line) => {
    try {
      const entry = JSON.parse(line) as { msg?: string; req?: { url?: string } };
      return entry.msg === 'incoming request' && entry.req?.url === path;
    } catch {
      return false;
    }
  }).length;
}

/** A deposit constituted through the CLI (--json): its response body. */
async function initiateDeposit(amountValue: number): Promise<{ termDepositAccount: string; operationReference: string }> {
  const result = await coregate(['term-deposit', 'initiate', '--file', bodyFile(depositBody(amountValue)), '--json']);
  assertSucceeded(result);
  return JSON.parse(result.stdout) as { termDepositAccount: string; operationReference: string };
}

describe('coregate CLI as a client (token, term-deposit, loan, operations)', () => {
  before(async () => {
    server = await startTestServer({ db: `sqlite:${join(tempDir, 'coregate.db')}` });
  });
  after(async () => {
    await server?.close();
    rmSync(tempDir, { recursive: true, force: true });
  });

  // --- coregate token -----------------------------------------------------------------------

  test('token prints a JWT of the client, for its technical user', async () => {
    const result = await coregate(['token']);
    assertSucceeded(result);
    const token = result.stdout.trim();
    assert.match(token, jwtPattern);
    assert.equal(result.stdout, `${token}\n`, 'only the token');
    const claims = decodeJwt(token);
    assert.equal(claims.client_id, treasury.clientId);
    assert.equal(claims.iss, `${server.coregate.publicUrl}/realms/sandbox`);
    assert.equal(claims.backbone_user, 'svc-treasury');
    assert.equal(claims.workstation, 'WS-TREASURY-01');
  });

  test('token --username --workstation prints the session\'s token; --scope narrows it; --json prints access_token and token_type', async () => {
    const session = await coregate(['token', '--username', 'jdoe', '--workstation', 'WS-BRANCH-07', '--scope', 'termDeposit:retrieve']);
    assertSucceeded(session);
    const claims = decodeJwt(session.stdout.trim());
    assert.equal(claims.backbone_user, 'jdoe');
    assert.equal(claims.workstation, 'WS-BRANCH-07');
    assert.equal(claims.scope, 'termDeposit:retrieve');

    const json = await coregate(['token', '--json']);
    assertSucceeded(json);
    const printed = JSON.parse(json.stdout) as { access_token: string; token_type: string };
    assert.deepEqual(Object.keys(printed).sort(), ['access_token', 'token_type']);
    assert.equal(printed.token_type, 'Bearer');
    assert.match(printed.access_token, jwtPattern);
  });

  test('--url and --client-id flags work like COREGATE_URL and COREGATE_CLIENT_ID', async () => {
    const result = await coregate(['token', '--url', server.url, '--client-id', treasury.clientId], { env: { COREGATE_URL: undefined, COREGATE_CLIENT_ID: undefined } });
    assertSucceeded(result);
    assert.equal(decodeJwt(result.stdout.trim()).client_id, treasury.clientId);
  });

  // --- term-deposit initiate / retrieve ----------------------------------------------------

  test('term-deposit initiate --file prints a human summary of the constituted deposit', async () => {
    const correlationId = `cli-${randomUUID()}`;
    const result = await coregate(['term-deposit', 'initiate', '--file', bodyFile(depositBody(1000)), '--correlation-id', correlationId]);
    assertSucceeded(result);
    const match = new RegExp(`^Term deposit (TD\\d+) constituted: 1000 USD, maturity 2026-06-01 \\(91 days\\), operation (${uuidPattern})\\n$`).exec(result.stdout);
    assert.ok(match, result.stdout);
    const stored = await server.coregate.store.db.selectFrom('operations').select(['reference', 'status']).where('correlation_id', '=', correlationId).executeTakeFirst();
    assert.deepEqual(stored, { reference: match[2], status: 'Executed' }, 'the correlation id was sent');
    const contract = await embedded(server.coregate.store.db).selectFrom('term_deposits').select('contract_number').where('contract_number', '=', String(match[1])).executeTakeFirst();
    assert.ok(contract, 'the contract exists in the core');
  });

  test('issue 12 item 1: the same initiate run twice executes once; the second is 409 TD-409-002 with a hint; an own --correlation-id makes a deliberate repeat', async () => {
    const file = bodyFile(depositBody(1234));
    const before = await embedded(server.coregate.store.db).selectFrom('term_deposits').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    assertSucceeded(await coregate(['term-deposit', 'initiate', '--file', file]));
    const again = await coregate(['term-deposit', 'initiate', '--file', file]);
    assert.equal(again.code, 1, again.stderr);
    assert.match(again.stderr, /409 CONFLICT \(TD-409-002 DUPLICATE_REQUEST\)/);
    assert.match(again.stderr, /give it its own --correlation-id/);
    const between = await embedded(server.coregate.store.db).selectFrom('term_deposits').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    assert.equal(Number(between.n), Number(before.n) + 1, 'one deposit, not two');
    assertSucceeded(await coregate(['term-deposit', 'initiate', '--file', file, '--correlation-id', `again-${randomUUID()}`]));
    const after = await embedded(server.coregate.store.db).selectFrom('term_deposits').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    assert.equal(Number(after.n), Number(before.n) + 2);
  });

  test('term-deposit initiate --json prints the initiation response', async () => {
    const result = await coregate(['term-deposit', 'initiate', '--file', bodyFile(depositBody(1100)), '--json']);
    assertSucceeded(result);
    const body = JSON.parse(result.stdout) as Record<string, unknown>;
    assert.match(String(body.termDepositAccount), /^TD\d+$/);
    assert.deepEqual(body.principalAmount, { amountValue: 1100, amountCurrency: { currencycode: 'USD' } });
    assert.deepEqual(body.termDepositPeriod, { numberOfDays: 91, maturityDate: '2026-06-01' });
    assert.match(String(body.operationReference), new RegExp(`^${uuidPattern}$`));
  });

  test('term-deposit initiate --file - reads the body from standard input', async () => {
    const result = await coregate(['term-deposit', 'initiate', '--file', '-', '--json'], { input: JSON.stringify(depositBody(1150)) });
    assertSucceeded(result);
    assert.deepEqual((JSON.parse(result.stdout) as { principalAmount: unknown }).principalAmount, { amountValue: 1150, amountCurrency: { currencycode: 'USD' } });
  });

  test('term-deposit retrieve ID prints the contract (human and --json)', async () => {
    const deposit = await initiateDeposit(1200);
    const human = await coregate(['term-deposit', 'retrieve', deposit.termDepositAccount]);
    assertSucceeded(human);
    const lines = human.stdout.trimEnd().split('\n');
    assert.equal(lines.length, 4, human.stdout);
    assert.match(lines[0]!, new RegExp(`^Term deposit ${deposit.termDepositAccount} \\(\\w+\\) of customer C0001$`));
    assert.equal(lines[1], '  principal 1200 USD at 5.25 %');
    assert.equal(lines[2], '  2026-03-02 → 2026-06-01 (91 days)');
    assert.match(lines[3]!, /^ {2}interest expected at maturity \d+(\.\d+)? USD$/);

    const json = await coregate(['term-deposit', 'retrieve', deposit.termDepositAccount, '--json']);
    assertSucceeded(json);
    const body = JSON.parse(json.stdout) as Record<string, unknown>;
    assert.equal(body.termDepositAccount, deposit.termDepositAccount);
    assert.equal(body.operationReference, deposit.operationReference);
    assert.equal(typeof body.termDepositStatus, 'string');
  });

  // --- loan execute ---------------------------------------------------------------------------

  test('loan execute 7000000001 1 --file prints the execution (human), --json the response, --minimal the 204', async () => {
    const human = await coregate(['loan', 'execute', loanId, '1', '--file', bodyFile(loanBody(5000))]);
    assertSucceeded(human);
    const match = new RegExp(`^Installment 1 of ${loanId}: PartiallyExecuted, operation (\\S+), execution (${uuidPattern}) at (\\S+)\\n$`).exec(human.stdout);
    assert.ok(match, human.stdout);
    assert.ok(!Number.isNaN(Date.parse(String(match[3]))));
    const execution = await embedded(server.coregate.store.db).selectFrom('loan_executions').select(['loan_id', 'sequence']).where('execution_reference', '=', String(match[2])).executeTakeFirst();
    assert.deepEqual(execution, { loan_id: loanId, sequence: 1 });

    const json = await coregate(['loan', 'execute', loanId, '1', '--file', bodyFile(loanBody(5001)), '--json']);
    assertSucceeded(json);
    const body = JSON.parse(json.stdout) as Record<string, unknown>;
    assert.equal(body.merchandisingLoanFacilityStatus, 'PartiallyExecuted');
    assert.match(String(body.executionReference), new RegExp(`^${uuidPattern}$`));

    const minimal = await coregate(['loan', 'execute', loanId, '1', '--file', bodyFile(loanBody(5002)), '--minimal']);
    assertSucceeded(minimal);
    assert.equal(minimal.stdout, 'Installment paid (no content requested).\n');
  });

  test('loan execute with an installment sequence that is not a positive integer → usage error (exit 2), nothing sent', async () => {
    const before = tokenRequests();
    const result = await coregate(['loan', 'execute', loanId, 'first', '--file', bodyFile(loanBody())]);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /installmentSequence must be a positive integer/);
    assert.equal(tokenRequests(), before);
  });

  // --- --async and operations get -------------------------------------------------------------

  test('term-deposit initiate --async prints the pending reference; operations get REF then shows it Executed (human and --json)', async () => {
    const accepted = await coregate(['term-deposit', 'initiate', '--file', bodyFile(depositBody(1300)), '--async']);
    assertSucceeded(accepted);
    const match = new RegExp(`^Accepted \\(pending\\): operation (${uuidPattern})\\. Check it with: coregate operations get (${uuidPattern})\\n$`).exec(accepted.stdout);
    assert.ok(match, accepted.stdout);
    const reference = String(match[1]);
    assert.equal(match[2], reference);

    // The server runs in this process: its pending worker's pass (started by the 202) is awaited,
    // or another one run, instead of polling the CLI until the operation has left Pending.
    await runPendingWorkers(server);
    const human = await coregate(['operations', 'get', reference]);
    assertSucceeded(human);
    const [headline, ...rest] = human.stdout.split('\n');
    assert.equal(headline, `Operation ${reference} (initiateTermDeposit): Executed`);
    const result = JSON.parse(rest.join('\n')) as { operationReference: string; principalAmount: unknown };
    assert.equal(result.operationReference, reference);
    assert.deepEqual(result.principalAmount, { amountValue: 1300, amountCurrency: { currencycode: 'USD' } });

    const json = await coregate(['operations', 'get', reference, '--json']);
    assertSucceeded(json);
    const view = JSON.parse(json.stdout) as { reference: string; operation: string; status: string; result: { operationReference: string } };
    assert.equal(view.reference, reference);
    assert.equal(view.operation, 'initiateTermDeposit');
    assert.equal(view.status, 'Executed');
    assert.equal(view.result.operationReference, reference);
  });

  test('term-deposit initiate --async --json prints the accepted body (operationReference, Pending)', async () => {
    const result = await coregate(['term-deposit', 'initiate', '--file', bodyFile(depositBody(1350)), '--async', '--json']);
    assertSucceeded(result);
    const body = JSON.parse(result.stdout) as { operationReference: string; termDepositStatus: string };
    assert.match(body.operationReference, new RegExp(`^${uuidPattern}$`));
    assert.equal(body.termDepositStatus, 'Pending');
  });

  test('operations get of an unknown reference → exit 1, 404 on stderr', async () => {
    const result = await coregate(['operations', 'get', randomUUID()]);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /^coregate: 404 NOT_FOUND/);
    assert.equal(result.stdout, '');
  });

  // --- refused calls --------------------------------------------------------------------------

  test('a refused call exits 1 with the status, reason and error code on stderr, and the correlation id', async () => {
    const correlationId = `cli-${randomUUID()}`;
    const result = await coregate(['term-deposit', 'initiate', '--file', bodyFile(depositBody(300_000)), '--correlation-id', correlationId]);
    assert.equal(result.code, 1);
    assert.equal(result.stdout, '');
    assert.match(result.stderr, /^coregate: 422 BUSINESS_RULE_VIOLATION \(TD-422-002 INSUFFICIENT_FUNDS_SOURCE_ACCOUNT\): /);
    assert.match(result.stderr, new RegExp(`correlation id: ${correlationId}`));
  });

  test('a refused call with --json exits 1 and prints the error record on stdout', async () => {
    const result = await coregate(['term-deposit', 'initiate', '--file', bodyFile(depositBody(300_001)), '--json']);
    assert.equal(result.code, 1);
    const record = JSON.parse(result.stdout) as { status: number; reason: string; message: string; path: string; errordetail: Array<{ code: string; reason: string }> };
    assert.equal(record.status, 422);
    assert.equal(record.reason, 'BUSINESS_RULE_VIOLATION');
    assert.equal(typeof record.message, 'string');
    assert.equal(record.path, 'POST /v1/term-deposits/initiate');
    assert.equal(record.errordetail[0]?.code, 'TD-422-002');
    assert.equal(record.errordetail[0]?.reason, 'INSUFFICIENT_FUNDS_SOURCE_ACCOUNT');
  });

  test('a refused loan execution (wrapped record) exits 1 with ML-404-001 on stderr', async () => {
    const result = await coregate(['loan', 'execute', '7999999999', '1', '--file', bodyFile(loanBody())]);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /^coregate: 404 NOT_FOUND \(ML-404-001 FACILITY_NOT_FOUND\): /);
  });

  test('a wrong secret exits 1 with invalid_client on stderr, and prints neither secret', async () => {
    const wrong = 'wrong-cli-secret-0123456789abcdef0123456789';
    const result = await coregate(['term-deposit', 'retrieve', 'TD1'], { env: { COREGATE_CLIENT_SECRET: wrong } });
    assert.equal(result.code, 1);
    assert.match(result.stderr, /token request refused: invalid_client/);
    assert.equal(`${result.stdout}${result.stderr}`.includes(wrong), false);
  });

  test('an unreachable server exits 1 with a message naming the URL, without the secret', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const result = await coregate(['token'], { env: { COREGATE_URL: url } });
    assert.equal(result.code, 1);
    assert.match(result.stderr, new RegExp(`token request to ${url}/realms/sandbox/protocol/openid-connect/token failed`));
    // issue 12 item 6: the cause, not "fetch failed".
    assert.match(result.stderr, new RegExp(`ECONNREFUSED 127\\.0\\.0\\.1:${new URL(url).port}`));
    assert.doesNotMatch(result.stderr, /fetch failed/);
  });

  // --- the secret ------------------------------------------------------------------------------

  test('the secret is not accepted as a flag: --client-secret VALUE fails as an unknown option, sends nothing, and is not echoed', async () => {
    const before = tokenRequests();
    for (const args of [
      ['token', '--client-secret', treasury.secret],
      ['term-deposit', 'initiate', '--file', bodyFile(depositBody()), '--client-secret', treasury.secret],
    ]) {
      const result = await coregate(args, { env: { COREGATE_CLIENT_SECRET: undefined } });
      assert.notEqual(result.code, 0, args.join(' '));
      assert.match(result.stderr, /unknown option '--client-secret'/);
      assert.equal(result.stdout, '');
    }
    assert.equal(tokenRequests(), before, 'no token request was made');
  });

  test('the secret is not accepted as a flag: --client-secret=VALUE fails as an unknown option without echoing the value', async () => {
    const before = tokenRequests();
    const result = await coregate(['token', `--client-secret=${treasury.secret}`], { env: { COREGATE_CLIENT_SECRET: undefined } });
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, /unknown option '--client-secret/);
    assert.equal(tokenRequests(), before, 'no token request was made');
  });

  test('without COREGATE_CLIENT_SECRET and without a terminal, the command fails asking for it (exit 2), sending nothing', async () => {
    const before = tokenRequests();
    for (const env of [{ COREGATE_CLIENT_SECRET: undefined }, { COREGATE_CLIENT_SECRET: '' }]) {
      for (const args of [['token'], ['term-deposit', 'retrieve', 'TD1'], ['operations', 'get', randomUUID()]]) {
        const result = await coregate(args, { env, input: `${treasury.secret}\n` });
        assert.equal(result.code, 2, `${args.join(' ')}: ${result.stderr}`);
        assert.match(result.stderr, /set COREGATE_CLIENT_SECRET/);
        assert.match(result.stderr, /no terminal/);
        assert.equal(result.stdout, '');
      }
    }
    assert.equal(tokenRequests(), before);
  });

  test('without a client id the command fails with a usage error naming --client-id and COREGATE_CLIENT_ID', async () => {
    const result = await coregate(['token'], { env: { COREGATE_CLIENT_ID: undefined } });
    assert.equal(result.code, 2);
    assert.match(result.stderr, /--client-id or COREGATE_CLIENT_ID/);
  });
});
