/**
 * docs/api.md, "Audit": every execution attempt that passes authentication is recorded
 * persistently, with time, client, backbone_user, workstation, operation, correlation id, outcome
 * and references, duration; a success's record commits with its postings; records are hash-chained
 * in a recorded order and `coregate audit verify` proves the chain. `coregate check` proves the
 * ledger. Read through the real CLI (`coregate audit export`, a separate process running the
 * compiled dist/) on each store; every tampering test has a store of its own.
 */
// @deployments remote-core two-instances
// @starts-early: among the slowest files of a quiet run
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { auditHash, genesisHash, verifyAuditChain } from '../../src/audit/chain.js';
import { listChained, type ChainedAuditEntry } from '../../src/store/audit.js';
import { checkLedger } from '../../src/reference-core/storage/ledger.js';
import type { Store } from '../../src/store/connect.js';
import { depositBody } from '../helpers/bodies.js';
import { runCli, type CliResult } from '../helpers/cli.js';

/** With a remote core, `coregate check` reads the core's ledger through the core (issue 25). */
const coreUrlOf = (server: TestServer) => (server.coreUrl === undefined ? [] : ['--core-url', server.coreUrl]);
import { initiatePath } from '../helpers/http.js';
import { demo, demoToken, testDeployment, type TestServer } from '../helpers/server.js';
import { withStore, embedded } from '../helpers/stores.js';
import { describeEachStore } from '../helpers/suite.js';
import { coreTablesOf } from '../../src/reference-core/storage/core-db.js';

const processTimeoutMs = 30_000;
const testTimeoutMs = 60_000;
const operation = 'initiateTermDeposit';

function initiationBody(overrides: { sourceAccount?: string; amountValue?: number } = {}): Record<string, unknown> {
  return depositBody(overrides.amountValue ?? 1000, overrides.sourceAccount);
}

interface ApiResponse {
  status: number;
  body: any;
}

async function initiate(server: TestServer, token: string | undefined, body: unknown, correlationId: string): Promise<ApiResponse> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json', 'x-correlation-id': correlationId };
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  const response = await fetch(`${server.url}${initiatePath}`, { method: 'POST', headers, body: JSON.stringify(body) });
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
}

/**
 * Runs `coregate ...` to completion in its own process (the compiled CLI, which scripts/test.mjs
 * builds before the tests run); never throws on a non-zero exit.
 */
function coregate(args: string[]): Promise<CliResult> {
  // The test servers run without a master key or any COREGATE_* setting: so does the command.
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('COREGATE_')));
  return runCli(args, { env, timeoutMs: processTimeoutMs, maxBuffer: 64 * 1024 * 1024 });
}

function assertSucceeded(result: CliResult): void {
  assert.equal(result.code, 0, `exit ${result.code}: ${result.stdout}${result.stderr}`);
}

/** The server's chainer is done, so the command is the only one touching the chain. */
async function settled(server: TestServer): Promise<void> {
  await server.coregate.chainer.idle();
}

async function exportAudit(server: TestServer, dbUrl: string): Promise<{ records: ChainedAuditEntry[]; raw: string }> {
  await settled(server);
  const result = await coregate(['audit', 'export', '--db', dbUrl]);
  assertSucceeded(result);
  const lines = result.stdout.split('\n').filter((line) => line !== '');
  return { records: lines.map((line) => JSON.parse(line) as ChainedAuditEntry), raw: result.stdout };
}

/** The chain as the server's chainer left it, checked in-process (a precondition, not the subject). */
async function chainedRecords(server: TestServer): Promise<ChainedAuditEntry[]> {
  await settled(server);
  const verification = await verifyAuditChain(server.coregate.store);
  assert.equal(verification.ok, true, 'the chain is intact before any tampering');
  assert.equal(verification.unchained, 0);
  return listChained(server.coregate.store.db, 0, 100_000);
}

async function verify(server: TestServer, dbUrl: string): Promise<CliResult> {
  await settled(server);
  return coregate(['audit', 'verify', '--db', dbUrl]);
}

function verifiedCount(result: CliResult): number {
  const match = /^Audit chain OK: (\d+) records verified\.$/m.exec(result.stdout);
  assert.ok(match?.[1], `no OK line in: ${result.stdout}${result.stderr}`);
  return Number(match[1]);
}

/** Tampers with the store from outside the service, as an intruder with database access would. */
function tamper(dbUrl: string, work: (store: Store) => Promise<void>): Promise<void> {
  return withStore(dbUrl, work);
}

/** A few attempts of every kind, each with its own correlation id prefix, so the chain has content. */
async function someAttempts(server: TestServer, prefix: string): Promise<void> {
  const token = await demoToken(server);
  assert.equal((await initiate(server, token, initiationBody(), `${prefix}-ok-1`)).status, 200);
  assert.equal((await initiate(server, token, initiationBody({ sourceAccount: '1000000002', amountValue: 2000 }), `${prefix}-422`)).status, 422);
  assert.equal((await initiate(server, token, initiationBody(), `${prefix}-ok-2`)).status, 200);
  assert.equal((await initiate(server, token, initiationBody(), `${prefix}-ok-1`)).status, 409);
  assert.equal((await initiate(server, token, initiationBody(), `${prefix}-ok-3`)).status, 200);
}

describeEachStore('audit trail of execution attempts', ({ server, dbUrl }) => {
  test('one record per attempt past authentication (200, 422, 409, 403, 400) with time, client, user, workstation, operation, correlation id, outcome, references, duration; 401 is not recorded', { timeout: testTimeoutMs }, async () => {
    const startedAt = Date.now();
    const treasury = await demoToken(server(), demo.treasury, { username: 'jdoe', workstation: 'WS-BRANCH-07' });
    const reporting = await demoToken(server(), demo.reporting);
    const ids = { ok: 'audit-attempt-ok', refused422: 'audit-attempt-422', forbidden: 'audit-attempt-403', invalid: 'audit-attempt-400', noToken: 'audit-attempt-401' };

    const ok = await initiate(server(), treasury, initiationBody(), ids.ok);
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    const refused = await initiate(server(), treasury, initiationBody({ sourceAccount: '1000000002', amountValue: 2000 }), ids.refused422);
    assert.equal(refused.status, 422);
    assert.equal(refused.body.errordetail?.[0]?.code, 'TD-422-002');
    const duplicate = await initiate(server(), treasury, initiationBody(), ids.ok);
    assert.equal(duplicate.status, 409);
    const forbidden = await initiate(server(), reporting, initiationBody(), ids.forbidden);
    assert.equal(forbidden.status, 403);
    const { customerReference: _omitted, ...noCustomer } = initiationBody();
    const invalid = await initiate(server(), treasury, noCustomer, ids.invalid);
    assert.equal(invalid.status, 400);
    const noToken = await initiate(server(), undefined, initiationBody(), ids.noToken);
    assert.equal(noToken.status, 401);
    const finishedAt = Date.now();

    const { records } = await exportAudit(server(), dbUrl());
    const of = (correlationId: string) => records.filter((record) => record.correlationId === correlationId);
    assert.equal(of(ids.ok).length, 2, 'the success and its duplicate');
    assert.equal(of(ids.refused422).length, 1);
    assert.equal(of(ids.forbidden).length, 1);
    assert.equal(of(ids.invalid).length, 1);
    assert.deepEqual(of(ids.noToken), [], 'a request without a token is not recorded');

    const attempts = [...of(ids.ok), ...of(ids.refused422), ...of(ids.forbidden), ...of(ids.invalid)];
    for (const record of attempts) {
      assert.equal(record.operation, operation);
      const recordedAt = Date.parse(record.recordedAt);
      assert.ok(recordedAt >= startedAt - 1_000 && recordedAt <= finishedAt + 1_000, `time ${record.recordedAt} is the attempt's`);
      assert.equal(typeof record.durationMs, 'number');
      assert.ok(record.durationMs >= 0 && record.durationMs < 30_000, `duration ${record.durationMs}`);
      assert.equal(typeof record.httpStatus, 'number');
      assert.equal(typeof record.outcome, 'string');
      assert.ok(record.outcome.length > 0);
      for (const field of ['id', 'recordedAt', 'clientId', 'backboneUser', 'workstation', 'operation', 'correlationId', 'reference', 'httpStatus', 'outcome', 'durationMs']) {
        assert.ok(field in record, `${field} is recorded`);
      }
    }
    for (const record of [...of(ids.ok), ...of(ids.refused422), ...of(ids.invalid)]) {
      assert.match(record.clientId, /treasury-app$/);
      assert.equal(record.backboneUser, 'jdoe', 'the token\'s backbone_user');
      assert.equal(record.workstation, 'WS-BRANCH-07', 'the token\'s workstation');
    }

    const [success, conflict] = [...of(ids.ok)].sort((a, b) => a.httpStatus - b.httpStatus);
    assert.ok(success && conflict);
    assert.equal(success.httpStatus, 200);
    assert.equal(success.outcome, 'Executed');
    assert.equal(success.reference, ok.body.operationReference);
    assert.equal(conflict.httpStatus, 409);
    assert.equal(conflict.outcome, 'Refused');
    assert.equal(conflict.reference, ok.body.operationReference, 'the duplicate names the original operation');

    const [rejected] = of(ids.refused422);
    assert.equal(rejected?.httpStatus, 422);
    assert.equal(rejected?.outcome, 'Rejected');
    assert.equal(typeof rejected?.reference, 'string', 'a rejected operation has its own reference');
    assert.notEqual(rejected?.reference, ok.body.operationReference);
    assert.equal(rejected?.details.code, 'TD-422-002');

    const [denied] = of(ids.forbidden);
    assert.equal(denied?.httpStatus, 403);
    assert.equal(denied?.outcome, 'Refused');
    assert.match(denied?.clientId ?? '', /reporting-app$/);
    assert.equal(denied?.backboneUser, null, 'reporting-app has no user');
    assert.equal(denied?.workstation, null);
    assert.equal(denied?.reference, null);

    const [malformed] = of(ids.invalid);
    assert.equal(malformed?.httpStatus, 400);
    assert.equal(malformed?.outcome, 'Refused');
    assert.equal(malformed?.reference, null);
  });

  test('refusals before the body is validated (415, 413, malformed JSON, invalid x-correlation-id) are recorded once each', { timeout: testTimeoutMs }, async () => {
    const token = await demoToken(server());
    const raw = async (body: string, contentType: string, correlationId: string) => {
      const response = await fetch(`${server().url}${initiatePath}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': contentType, accept: 'application/json', 'x-correlation-id': correlationId },
        body,
      });
      await response.arrayBuffer();
      return response.status;
    };
    assert.equal(await raw(JSON.stringify(initiationBody()), 'text/plain', 'audit-early-415'), 415);
    assert.equal(await raw(JSON.stringify({ ...initiationBody(), padding: 'x'.repeat(70 * 1024) }), 'application/json', 'audit-early-413'), 413);
    assert.equal(await raw('{"customerReference": ', 'application/json', 'audit-early-400'), 400);
    assert.equal(await raw(JSON.stringify(initiationBody()), 'application/json', 'not a valid id!'), 400);

    const { records } = await exportAudit(server(), dbUrl());
    const of = (correlationId: string) => records.filter((record) => record.correlationId === correlationId);
    for (const [correlationId, status] of [['audit-early-415', 415], ['audit-early-413', 413], ['audit-early-400', 400]] as const) {
      const found = of(correlationId);
      assert.equal(found.length, 1, `${correlationId} is recorded once`);
      assert.equal(found[0]?.httpStatus, status);
      assert.equal(found[0]?.outcome, 'Refused');
      assert.equal(found[0]?.operation, operation);
      assert.match(found[0]?.clientId ?? '', /treasury-app$/);
    }
    const badCorrelation = records.filter((record) => record.details.code === 'TD-400-004');
    assert.equal(badCorrelation.length, 1, 'the invalid correlation id attempt is recorded once');
    assert.equal(badCorrelation[0]?.correlationId, null, 'an invalid correlation id is not recorded as one');
    assert.equal(badCorrelation[0]?.httpStatus, 400);
  });

  test('no audit record holds an access token, a client secret or an Authorization header value', { timeout: testTimeoutMs }, async () => {
    const tokens = [
      await demoToken(server(), demo.treasury, { username: 'jdoe', workstation: 'WS-BRANCH-07' }),
      await demoToken(server(), demo.reporting),
    ];
    const [treasury, reporting] = tokens as [string, string];
    await initiate(server(), treasury, initiationBody(), 'audit-secrets-ok');
    await initiate(server(), treasury, initiationBody({ sourceAccount: '1000000002', amountValue: 2000 }), 'audit-secrets-422');
    await initiate(server(), treasury, initiationBody(), 'audit-secrets-ok');
    await initiate(server(), reporting, initiationBody(), 'audit-secrets-403');
    await initiate(server(), treasury, { ...initiationBody(), valueDate: 'not-a-date' }, 'audit-secrets-400');
    await initiate(server(), `${treasury}x`, initiationBody(), 'audit-secrets-401');

    const { records, raw } = await exportAudit(server(), dbUrl());
    assert.ok(records.some((record) => record.correlationId === 'audit-secrets-ok'), 'the attempts are in the export');
    const forbiddenValues = [
      ...tokens,
      ...tokens.map((token) => token.split('.')[2] ?? token),
      demo.treasury.secret,
      demo.branch.secret,
      demo.reporting.secret,
    ];
    for (const value of forbiddenValues) assert.equal(raw.includes(value), false, `the audit trail contains ${value.slice(0, 12)}...`);
    assert.doesNotMatch(raw, /Bearer /i, 'no Authorization header value');
    assert.doesNotMatch(raw, /"authorization"/i, 'no Authorization header');
  });

  test('a success\'s record commits with its postings: every contract\'s operation reference has an Executed record', { timeout: testTimeoutMs }, async () => {
    const token = await demoToken(server());
    const responses = await Promise.all(Array.from({ length: 5 }, (_, index) => initiate(server(), token, initiationBody(), `audit-postings-${index}`)));
    for (const response of responses) assert.equal(response.status, 200, JSON.stringify(response.body));

    const store = server().coregate.store;
    const contracts = await embedded(store.db).selectFrom('term_deposits').select('operation_reference').execute();
    const movements = await embedded(store.db).selectFrom('movements').select('reference').where('kind', '=', 'term_deposit_constitution').execute();
    const { records } = await exportAudit(server(), dbUrl());
    const executed = new Set(records.filter((record) => record.httpStatus === 200 && record.outcome === 'Executed').map((record) => record.reference));
    assert.ok(contracts.length >= 5);
    for (const { operation_reference: reference } of contracts) assert.ok(executed.has(reference), `contract of ${reference} has its audit record`);
    for (const { reference } of movements) assert.ok(executed.has(reference), `movement ${reference} has its audit record`);
    const contractReferences = new Set(contracts.map((contract) => contract.operation_reference));
    for (const reference of executed) assert.ok(contractReferences.has(reference ?? ''), `audited success ${reference} has its contract`);
    for (const response of responses) assert.ok(executed.has(response.body.operationReference));
  });

  test('the chain order is recorded: chain_seq is 1..N without gaps, each prev_hash is the previous hash, each hash covers its record', { timeout: testTimeoutMs }, async () => {
    await someAttempts(server(), 'audit-order');
    const { records } = await exportAudit(server(), dbUrl());
    assert.ok(records.length >= 5);
    let previous = genesisHash;
    records.forEach((record, index) => {
      assert.equal(record.chainSeq, index + 1, `record ${record.id} is at position ${index + 1}`);
      assert.equal(record.prevHash, previous, `position ${index + 1} links to the hash before it`);
      assert.match(record.hash ?? '', /^[0-9a-f]{64}$/);
      assert.equal(record.hash, auditHash(previous, record), `position ${index + 1}'s hash covers its content`);
      previous = record.hash ?? '';
    });
    assert.equal(new Set(records.map((record) => record.id)).size, records.length, 'each record once');
  });

  test('coregate audit verify exits 0 and reports the count of chained records', { timeout: testTimeoutMs }, async () => {
    await someAttempts(server(), 'audit-verify-ok');
    const result = await verify(server(), dbUrl());
    assertSucceeded(result);
    const stored = await server().coregate.store.db.selectFrom('audit_records').select((eb) => eb.fn.countAll<string | number>().as('count')).executeTakeFirstOrThrow();
    assert.ok(Number(stored.count) >= 5);
    assert.equal(verifiedCount(result), Number(stored.count), 'every stored record is verified');
  });

  test('coregate check exits 0 on a healthy ledger', { timeout: testTimeoutMs }, async () => {
    await someAttempts(server(), 'audit-check-ok');
    const result = await coregate(['check', '--db', dbUrl(), ...coreUrlOf(server())]);
    assertSucceeded(result);
    assert.match(result.stdout, /^Ledger OK: \d+ movements balance, \d+ account balances equal their postings\.$/m);
    assert.match(result.stdout, /^Operations OK: \d+ executed operations have their postings and audit records; none unknown past the age limit\.$/m);
    assert.match(result.stdout, /^Audit chain OK: \d+ records verified\.$/m);
  });
});

describeEachStore('audit verify detects an altered record', ({ server, dbUrl }) => {
  test('after one record\'s outcome is edited in the store, coregate audit verify exits non-zero naming that record', { timeout: testTimeoutMs, skip: testDeployment === 'two-instances' ? 'the other instance chains the tampered store meanwhile' : undefined }, async () => {
    await someAttempts(server(), 'audit-edit');
    const rejected = (await chainedRecords(server())).find((record) => record.correlationId === 'audit-edit-422');
    assert.ok(rejected, 'the refusal was recorded and chained');
    assert.equal(rejected.outcome, 'Rejected');

    await tamper(dbUrl(), async (store) => {
      const result = await store.db.updateTable('audit_records').set({ outcome: 'Executed' }).where('id', '=', rejected.id).executeTakeFirst();
      assert.equal(result.numUpdatedRows, 1n);
    });
    const result = await verify(server(), dbUrl());
    assert.notEqual(result.code, 0, 'verification fails');
    assert.match(result.stdout, /BROKEN/);
    assert.ok(result.stdout.includes(rejected.id), `the message names record ${rejected.id}: ${result.stdout}`);
    assert.ok(result.stdout.includes(`position ${rejected.chainSeq}`), 'and its chain position');
    assert.match(result.stdout, /altered/);
  });
});

describeEachStore('audit verify detects a removed record', ({ server, dbUrl }) => {
  test('after a record in the middle of the chain is deleted, coregate audit verify exits non-zero naming the missing position', { timeout: testTimeoutMs, skip: testDeployment === 'two-instances' ? 'the other instance chains the tampered store meanwhile' : undefined }, async () => {
    await someAttempts(server(), 'audit-delete');
    const records = await chainedRecords(server());
    assert.ok(records.length >= 3);
    const [, victim, next] = records;
    assert.ok(victim?.chainSeq === 2 && next?.chainSeq === 3);

    await tamper(dbUrl(), async (store) => {
      const result = await store.db.deleteFrom('audit_records').where('id', '=', victim.id).executeTakeFirst();
      assert.equal(result.numDeletedRows, 1n);
    });
    const result = await verify(server(), dbUrl());
    assert.notEqual(result.code, 0, 'verification fails');
    assert.match(result.stdout, /BROKEN/);
    assert.match(result.stdout, /chain position 2 is missing/);
    assert.ok(result.stdout.includes(next.id), `the message names the record after the gap: ${result.stdout}`);
  });
});

describeEachStore('audit verify detects a removed newest record', ({ server, dbUrl }) => {
  test('after the newest record (a success whose postings remain) is deleted, coregate audit verify exits non-zero', { timeout: testTimeoutMs, skip: testDeployment === 'two-instances' ? 'the other instance chains the tampered store meanwhile' : undefined }, async () => {
    await someAttempts(server(), 'audit-delete-last');
    const records = await chainedRecords(server());
    const newest = records[records.length - 1];
    assert.ok(newest);
    assert.equal(newest.correlationId, 'audit-delete-last-ok-3');
    assert.equal(newest.outcome, 'Executed');
    const contract = await embedded(server().coregate.store.db).selectFrom('term_deposits').select('contract_number').where('operation_reference', '=', newest.reference ?? '').executeTakeFirst();
    assert.ok(contract, 'the audited success has its contract and postings');

    await tamper(dbUrl(), async (store) => {
      const result = await store.db.deleteFrom('audit_records').where('id', '=', newest.id).executeTakeFirst();
      assert.equal(result.numDeletedRows, 1n);
    });
    const result = await verify(server(), dbUrl());
    assert.notEqual(result.code, 0, `a removed record fails verification even at the end of the chain; got: ${result.stdout.trim()}`);
    assert.match(result.stdout, /BROKEN/);
  });
});

describeEachStore('coregate check detects a tampered balance', ({ server, dbUrl }) => {
  test('after a balance is changed without a posting, coregate check exits non-zero naming the account', { timeout: testTimeoutMs }, async () => {
    await someAttempts(server(), 'audit-balance');
    const healthy = await checkLedger(coreTablesOf(server().coregate.store.db));
    assert.deepEqual(healthy.balanceMismatches, [], 'the ledger is healthy before the tampering');

    await tamper(dbUrl(), async (store) => {
      const result = await embedded(store.db)
        .updateTable('accounts')
        .set((eb) => ({ balance_minor: eb('balance_minor', '+', 1n) }))
        .where('account_number', '=', '1000000002')
        .executeTakeFirst();
      assert.equal(result.numUpdatedRows, 1n);
    });
    const result = await coregate(['check', '--db', dbUrl(), ...coreUrlOf(server())]);
    assert.notEqual(result.code, 0, 'the check fails');
    assert.match(result.stdout, /^Ledger BROKEN:/m, `no BROKEN report in: ${result.stdout}${result.stderr}`);
    const json = await coregate(['check', '--db', dbUrl(), ...coreUrlOf(server()), '--json']);
    assert.notEqual(json.code, 0, 'the check fails');
    const report = JSON.parse(json.stdout) as { ok: boolean; ledger: { ok: boolean; balanceMismatches: Array<{ accountNumber: string; storedMinor: string; postedMinor: string }> } };
    assert.equal(report.ok, false);
    assert.equal(report.ledger.ok, false);
    assert.equal(report.ledger.balanceMismatches.length, 1, 'exactly the tampered account');
    const [mismatch] = report.ledger.balanceMismatches;
    assert.equal(mismatch?.accountNumber, '1000000002');
    assert.equal(BigInt(mismatch?.storedMinor ?? '0') - BigInt(mismatch?.postedMinor ?? '0'), 1n);
  });
});
