/**
 * A core's definitive answer is never turned into an unknown outcome (docs/core-protocol.md, "What
 * the API's adapter makes of it"): the business API with a remote core (`coregate core serve` on a
 * database of its own, the API on another, each store), with the fault-injecting proxy
 * (test/helpers/fault-proxy.ts) on the wire answering for the core what a badly written core would.
 *
 * - A Rejected answer whose refusal coregate cannot name (a name the catalogue does not know, a
 *   name or a code of the other family, a name whose code is another entry's) is settled Rejected
 *   as the core said: 422 REJECTED_BY_CORE quoting the core's refusal, the operation
 *   resource, its operation.rejected event and audit record, a repeat's 409; reported loudly (an
 *   error log line naming the field and the value, coregate_core_protocol_violations_total{kind},
 *   `coregate check`, the operator API).
 * - Only a missing, malformed or contradictory answer is unknown: 502 CORE_UNAVAILABLE, held
 *   Unknown, reported with its kind.
 * - Neither counts toward the circuit breaker.
 * - The reconciler looks a reference whose lookup met a violation up again only after a growing
 *   pause, per reference, and settles at once a lookup that answers a refusal it cannot name.
 *
 * Nothing waits for time to pass: the API runs on a fake clock and the test drives the reconciler.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { termDepositToWire } from '../../src/core-http/codec.js';
import type { TermDeposit } from '../../src/core/port.js';
import { retryBaseMs, retryIntervalMaxMs } from '../../src/operations/retry-schedule.js';
import { findOperation } from '../../src/store/operations.js';
import { depositBody } from '../helpers/bodies.js';
import { runCli } from '../helpers/cli.js';
import { startTestCoreServer, type TestCoreServer } from '../helpers/core-server.js';
import { FakeClock } from '../helpers/fake-clock.js';
import { FaultProxy, onRequests, type ProxiedRequest, type ProxyFault } from '../helpers/fault-proxy.js';
import { initiatePath, reasonByStatus, send, type HttpResult } from '../helpers/http.js';
import { parseSamples, valueOf } from '../helpers/metrics.js';
import { reconcilerIdle } from '../helpers/reconciler.js';
import { demoToken, startTestServer, type TestServer } from '../helpers/server.js';
import { storeTargets } from '../helpers/stores.js';
import { loginUrl } from '../console/helpers.js';

const coreTimeoutMs = 1_500;
const source = '1000000001';
const expense = '1000000002';
const loanPath = '/v1/merchandising-loan/7000000001/repayment-schedules/1/execute';
const constitutions = '/core/v1/term-deposit-constitutions/';
const executions = '/core/v1/loan-installment-executions/';

const isDepositCommand = (request: ProxiedRequest) => request.method === 'POST' && request.path.startsWith(constitutions);
const isLoanCommand = (request: ProxiedRequest) => request.method === 'POST' && request.path.startsWith(executions);

/** The proxy answering for the core, never forwarding: the core never sees the command. */
const answer = (body: unknown, status = 200, contentType = 'application/json'): ProxyFault => ({ kind: 'respond', status, body: typeof body === 'string' ? body : JSON.stringify(body), contentType });
const refusal = (name: string, code: string, message = 'the account is frozen by the bank\'s compliance team') => answer({ status: 'Rejected', refusal: { name, code, message } });

/** A well-formed term deposit result, for answers that are well-formed but for another question. */
function depositResult(changes: Record<string, unknown>): Record<string, unknown> {
  const deposit: TermDeposit = {
    contractNumber: 'TD000000000000001',
    customerReference: 'C0001',
    productCode: 'TDFIX',
    componentCode: 'TD30-365',
    principalMinor: 100_000n,
    currency: 'USD',
    ratePercent: '5.25',
    dayCount: 'ACT/360',
    valueDate: '2026-03-02',
    maturityDate: '2026-06-01',
    numberOfDays: 91,
    sourceAccount: source,
    interestAccount: expense,
    description: null,
    operationReference: 'someone-else',
    status: 'Active',
    expectedInterestMinor: 1327n,
  };
  return { ...(termDepositToWire(deposit) as unknown as Record<string, unknown>), ...changes };
}

function initiate(server: TestServer, token: string, correlationId: string, body: unknown = depositBody()): Promise<HttpResult> {
  return send(`${server.url}${initiatePath}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json', 'x-correlation-id': correlationId },
    body: JSON.stringify(body),
  });
}

function executeLoan(server: TestServer, token: string, correlationId: string, amountValue: number): Promise<HttpResult> {
  const body = {
    merchandisingLoanFacilityParameterType: 'DocumentaryRemittance',
    merchandisingLoanType: 'CRDE',
    merchandisingLoanFacilityReference: { loanInstallmentSequence: 1, loanAmount: { amountValue, amountCurrency: { currencyCode: 'USD' } } },
    accountReferences: [
      { accountIdentification: { accountIdentificationType: 'PaymentAccount', identifierValue: source } },
      { accountIdentification: { accountIdentificationType: 'ExpenseAccount', identifierValue: expense } },
    ],
  };
  return send(`${server.url}${loanPath}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json', 'x-correlation-id': correlationId },
    body: JSON.stringify(body),
  });
}

/** The error record of an answer (a loan's is wrapped in {error}). */
function errorOf(response: HttpResult): { status: number; reason: string; message: string; errordetail?: Array<{ code: string; reason: string; message: string }> } {
  return response.body?.error ?? response.body;
}

for (const target of storeTargets) {
  describe(`a core's definitive answer is never turned into an unknown outcome [${target.name}]`, { skip: target.skip }, () => {
    let core: TestCoreServer | undefined;
    let proxy: FaultProxy | undefined;
    let api: TestServer | undefined;
    let apiDbUrl = '';
    const drops: Array<() => Promise<void>> = [];
    // At the real time, so that the core (on the system's clock) and the API agree on dates.
    const clock = new FakeClock(Date.now());
    /** The references settled with REJECTED_BY_CORE so far: `coregate check` must name each. */
    const unrecognised: string[] = [];

    before(async () => {
      const coreDb = await target.create();
      drops.push(coreDb.drop);
      const apiDb = await target.create();
      drops.push(apiDb.drop);
      apiDbUrl = apiDb.url;
      core = await startTestCoreServer({ db: coreDb.url });
      proxy = await FaultProxy.start(core.url);
      api = await startTestServer({
        db: apiDb.url,
        clock,
        deployment: 'embedded',
        flags: { coreUrl: proxy.url, coreTimeoutMs: String(coreTimeoutMs), operatorApi: true, ...reconcilerIdle },
      });
    });
    after(async () => {
      await api?.close();
      await proxy?.close();
      await core?.close();
      for (const drop of drops) await drop();
    });

    const server = () => api as TestServer;
    const coreServer = () => core as TestCoreServer;
    const wire = () => proxy as FaultProxy;

    const operationOf = async (correlationId: string) => {
      const row = await server().coregate.store.db.selectFrom('operations').select('reference').where('correlation_id', '=', correlationId).executeTakeFirst();
      const record = row && (await findOperation(server().coregate.store.db, row.reference));
      if (!record) throw new Error(`no operation for x-correlation-id ${correlationId}`);
      return record;
    };
    const violations = async (kind: string) => valueOf(parseSamples(await server().coregate.metrics.render()), 'coregate_core_protocol_violations_total', { kind }) ?? Number.NaN;
    /** The error-level log lines reporting a protocol violation about `reference`. */
    const violationLines = (reference: string) =>
      server()
        .logLines.map((line) => JSON.parse(line) as Record<string, unknown>)
        .filter((line) => line.level === 50 && line.reference === reference && String(line.msg).startsWith('core protocol violation'));

    const unrecognisedCases: Array<{ what: string; loan: boolean; fault: ProxyFault; kind: string; field: string; value: string; code: string }> = [
      { what: 'a refusal name the catalogue does not know', loan: false, fault: refusal('accountFrozen', 'TD-422-077'), kind: 'unknown_refusal', field: 'refusal.name', value: 'accountFrozen', code: 'TD-422-091' },
      { what: 'a known name with a code of the other family', loan: false, fault: refusal('insufficientFundsSource', 'ML-422-002'), kind: 'refusal_family_mismatch', field: 'refusal.code', value: 'ML-422-002', code: 'TD-422-091' },
      { what: 'a name whose code disagrees (another entry\'s)', loan: false, fault: refusal('insufficientFundsSource', 'TD-422-005'), kind: 'refusal_code_mismatch', field: 'refusal.code', value: 'TD-422-005', code: 'TD-422-091' },
      { what: 'a loan refused with a term deposit\'s refusal name', loan: true, fault: refusal('customerBlocked', 'TD-422-001'), kind: 'refusal_family_mismatch', field: 'refusal.name', value: 'customerBlocked', code: 'ML-422-091' },
      { what: 'a loan refused with a name the catalogue does not know', loan: true, fault: refusal('collateralMissing', 'ML-422-042'), kind: 'unknown_refusal', field: 'refusal.name', value: 'collateralMissing', code: 'ML-422-091' },
      { what: 'a refusal whose name breaks the protocol\'s pattern (upper case and underscores)', loan: false, fault: refusal('ACCOUNT_FROZEN', 'TD-422-077'), kind: 'unknown_refusal', field: 'refusal.name', value: 'ACCOUNT_FROZEN', code: 'TD-422-091' },
      { what: 'one of the API\'s own answers sent as a refusal (coreUnavailable)', loan: false, fault: refusal('coreUnavailable', 'TD-502-001'), kind: 'unknown_refusal', field: 'refusal.name', value: 'coreUnavailable', code: 'TD-422-091' },
    ];

    for (const { what, loan, fault, kind, field, value, code } of unrecognisedCases) {
      test(`a Rejected answer with ${what} stays Rejected: 422 REJECTED_BY_CORE (${code}) quoting the core's refusal; the operation resource, its operation.rejected event and audit record say Rejected; a repeat answers 409 naming it; an error log line names ${field} = ${value}; counted as ${kind}; the breaker stays closed`, async () => {
        const token = await demoToken(server());
        const id = randomUUID();
        const before = await violations(kind);
        const balanceBefore = await coreServer().balanceOf(source);
        const call = () => (loan ? executeLoan(server(), token, id, 500) : initiate(server(), token, id, depositBody(1234)));
        const response = await wire().withFault(onRequests(loan ? isLoanCommand : isDepositCommand, fault), call);

        assert.equal(response.status, 422, JSON.stringify(response.body));
        const error = errorOf(response);
        assert.equal(error.reason, reasonByStatus[422]);
        assert.equal(error.errordetail?.[0]?.code, code);
        assert.equal(error.errordetail?.[0]?.reason, 'REJECTED_BY_CORE');
        const message = error.errordetail?.[0]?.message ?? '';
        assert.match(message, /the account is frozen by the bank's compliance team/, 'the core\'s message');
        assert.ok(message.includes(value), `the field that did not map: ${message}`);

        const record = await operationOf(id);
        assert.equal(record.status, 'Rejected', 'settled as the core said, not held unknown');
        assert.equal(record.httpStatus, 422);
        const view = await send(`${server().url}/v1/operations/${record.reference}`, { headers: { authorization: `Bearer ${token}` } });
        assert.equal(view.body.status, 'Rejected');
        assert.equal(view.body.error.errordetail[0].code, code);
        const events = await server().coregate.store.db.selectFrom('webhook_events').select('type').where('reference', '=', record.reference).execute();
        assert.deepEqual(events.map((row) => row.type), ['operation.rejected']);
        await server().coregate.background.auditChainer.idle();
        const audits = await server().coregate.store.db.selectFrom('audit_records').select(['outcome', 'http_status']).where('reference', '=', record.reference).execute();
        assert.deepEqual(audits.map((row) => [row.outcome, Number(row.http_status)]), [['Rejected', 422]]);

        const repeat = await (loan ? executeLoan(server(), token, id, 500) : initiate(server(), token, id, depositBody(1234)));
        assert.equal(repeat.status, 409, JSON.stringify(repeat.body));
        assert.ok(errorOf(repeat).message.includes(`${record.reference} (Rejected with 422 ${code})`), errorOf(repeat).message);

        assert.equal(await coreServer().balanceOf(source), balanceBefore, 'nothing moved');
        assert.equal(await violations(kind), before + 1);
        const lines = violationLines(record.reference);
        assert.equal(lines.length, 1, JSON.stringify(lines));
        assert.equal(lines[0]?.kind, kind);
        assert.equal(lines[0]?.field, field);
        assert.equal(lines[0]?.value, value);
        assert.equal(server().coregate.remoteCore?.circuitState, 'closed');
        unrecognised.push(record.reference);
      });
    }

    const malformedCases: Array<{ what: string; fault: ProxyFault; kind: string; field: string }> = [
      { what: 'a body that is not JSON', fault: answer('<html><body>Service temporarily unavailable</body></html>'), kind: 'malformed_answer', field: 'body' },
      { what: 'a body that fails the schema', fault: answer({ status: 'Executed', result: { principalMinor: '111100' } }), kind: 'malformed_answer', field: '/result/contractNumber' },
      { what: 'an outcome status outside the protocol', fault: answer({ status: 'Accepted' }), kind: 'malformed_answer', field: '/status' },
      { what: 'an HTTP status the protocol does not answer (201)', fault: answer({ status: 'Executed', result: depositResult({}) }, 201), kind: 'unexpected_status', field: 'status' },
      { what: 'the result of another reference', fault: answer({ status: 'Executed', result: depositResult({}) }), kind: 'foreign_answer', field: '/result/operationReference' },
      { what: 'an Executed result whose money is not strict minor units', fault: answer({ status: 'Executed', result: depositResult({ principalMinor: '1000.00' }) }), kind: 'malformed_answer', field: '/result/principalMinor' },
    ];

    for (const { what, fault, kind, field } of malformedCases) {
      test(`only a missing, malformed or contradictory answer is unknown: ${what} → 502 CORE_UNAVAILABLE, held Unknown, an error log line naming ${field}, counted as ${kind}; the breaker stays closed and the repeat executes once`, async () => {
        const token = await demoToken(server());
        const id = randomUUID();
        const before = await violations(kind);
        const balanceBefore = await coreServer().balanceOf(source);
        const response = await wire().withFault(onRequests(isDepositCommand, fault), () => initiate(server(), token, id, depositBody(1011)));
        assert.equal(response.status, 502, JSON.stringify(response.body));
        assert.equal(errorOf(response).errordetail?.[0]?.code, 'TD-502-001');
        const record = await operationOf(id);
        assert.equal(record.status, 'Unknown');
        assert.equal(await violations(kind), before + 1);
        const lines = violationLines(record.reference);
        assert.equal(lines.length, 1, JSON.stringify(lines));
        assert.equal(lines[0]?.kind, kind);
        assert.equal(lines[0]?.field, field);
        assert.equal(server().coregate.remoteCore?.circuitState, 'closed');

        const repeat = await initiate(server(), token, id, depositBody(1011));
        assert.equal(repeat.status, 200, JSON.stringify(repeat.body));
        assert.equal(balanceBefore - (await coreServer().balanceOf(source)), 101100n, 'executed once, by the repeat');
      });
    }

    test('a protocol violation never counts toward the circuit breaker: ten refusals coregate cannot name and ten malformed answers in a row leave it closed, and well-formed calls keep working', async () => {
      const token = await demoToken(server());
      const states: string[] = [];
      const before = await server().coregate.metrics.render();
      for (let call = 0; call < 10; call += 1) {
        const id = randomUUID();
        const response = await wire().withFault(onRequests(isDepositCommand, refusal('accountFrozen', 'TD-422-077')), () => initiate(server(), token, id, depositBody(1012)));
        assert.equal(response.status, 422);
        unrecognised.push((await operationOf(id)).reference);
      }
      states.push(server().coregate.remoteCore?.circuitState ?? 'none');
      for (let call = 0; call < 10; call += 1) {
        const response = await wire().withFault(onRequests(isDepositCommand, answer('not json')), () => initiate(server(), token, randomUUID(), depositBody(1013)));
        assert.equal(response.status, 502);
      }
      states.push(server().coregate.remoteCore?.circuitState ?? 'none');
      assert.deepEqual(states, ['closed', 'closed']);
      const wellFormed = await initiate(server(), token, randomUUID(), depositBody(1014));
      assert.equal(wellFormed.status, 200, JSON.stringify(wellFormed.body));
      assert.doesNotMatch(before, /coregate_circuit_state\{target="core",state="open"\} 1/);
      assert.doesNotMatch(await server().coregate.metrics.render(), /coregate_circuit_state\{target="core",state="open"\} 1/);
    });

    test('the reconciler never asks the same reference again without a growing pause: lookups meeting protocol violations are repeated after a back-off that grows per reference (simulated minutes, counted at the wire), and a lookup answering a refusal coregate cannot name settles at once', async () => {
      // The webhook relay polls the core's events on the instance's clock: moved a simulated second
      // at a time while such a poll is on the wire, the poll would time out and count toward the
      // breaker, whose open state would then fail the reconciler's attempts. Nothing here needs it.
      await server().coregate.background.webhooks.stop();
      const token = await demoToken(server());
      // Three operations held Unknown by a malformed answer to their command.
      const references: string[] = [];
      for (const amount of [1021, 1022, 1023]) {
        const id = randomUUID();
        const response = await wire().withFault(onRequests(isDepositCommand, answer('<html>proxy error</html>')), () => initiate(server(), token, id, depositBody(amount)));
        assert.equal(response.status, 502);
        references.push((await operationOf(id)).reference);
        // B is held a little later than A: each reference keeps its own schedule.
        clock.advance(7_000);
      }
      const [a = '', b = '', c = ''] = references;
      // Their lookups answer: A and B malformed, C a refusal coregate cannot name. Fences pass (the core closes the references).
      const lookups = new Map<string, number[]>(references.map((reference) => [reference, []]));
      wire().rule = (request) => {
        const reference = request.method === 'GET' && request.path.startsWith(constitutions) ? decodeURIComponent(request.path.slice(constitutions.length)) : undefined;
        const times = reference === undefined ? undefined : lookups.get(reference);
        if (reference === undefined || times === undefined) return { kind: 'pass' };
        times.push(clock.now());
        return reference === c ? refusal('accountFrozen', 'TD-422-077') : answer({ status: 'Executed', result: { principalMinor: 'lots' } });
      };
      const minutes = 10;
      try {
        for (let second = 0; second < minutes * 60; second += 1) {
          clock.advance(1_000);
          await server().coregate.background.reconciler.runOnce();
        }
      } finally {
        wire().rule = () => ({ kind: 'pass' });
      }

      // C: one lookup, settled Rejected as the core said.
      assert.equal(lookups.get(c)?.length, 1, 'a lookup that answers a refusal settles the reference: never asked again');
      const settled = await findOperation(server().coregate.store.db, c);
      assert.equal(settled?.status, 'Rejected');
      assert.equal((settled?.error as { errordetail: Array<{ code: string }> }).errordetail[0]?.code, 'TD-422-091');
      unrecognised.push(c);

      // A and B: the failed execution held each with 1 attempt, each failed lookup adds one, and the
      // pause after attempt n is between half of min(cap, base × 2^n) and all of it
      // (retry-schedule.ts: full jitter on the upper half), which doubles up to the cap.
      const intervalAfter = (attempts: number) => Math.min(retryIntervalMaxMs, retryBaseMs * 2 ** attempts);
      for (const reference of [a, b]) {
        const times = lookups.get(reference) ?? [];
        const gaps = times.slice(1).map((time, index) => time - (times[index] ?? 0));
        assert.ok(times.length >= 5, `${reference} was looked up ${times.length} times`);
        // Without a pause the reconciler asked at every pass: here once a simulated second, 600 times.
        assert.ok(times.length <= 5 + (minutes * 60_000) / (retryIntervalMaxMs / 2), `${reference} was looked up ${times.length} times in ${minutes} simulated minutes: ${gaps.join(', ')} ms apart`);
        gaps.forEach((gap, index) => {
          const intervalMs = intervalAfter(index + 2);
          // Lookups happen on whole simulated seconds: one may come up to a second late, moving the gaps around it by as much.
          assert.ok(gap >= intervalMs / 2 - 1_000 && gap <= intervalMs + 1_000, `gap ${index + 1} of ${reference} is ${gap} ms, not within half of ${intervalMs} ms and all of it: ${gaps.join(', ')}`);
        });
        assert.ok((gaps[3] ?? 0) > (gaps[0] ?? 0) * 2, `the pause grows: ${gaps.join(', ')}`);
      }
      // Per reference: B's schedule is its own, started by its own failure, not A's.
      assert.ok((lookups.get(b)?.[0] ?? 0) < (lookups.get(a)?.at(-1) ?? 0), 'B was looked up while A was');
      assert.ok((lookups.get(b)?.[1] ?? 0) - (lookups.get(b)?.[0] ?? 0) <= intervalAfter(2) + 1_000, 'B\'s second lookup came after its own short pause');
      assert.equal((await findOperation(server().coregate.store.db, a))?.status, 'Unknown', 'a malformed answer settles nothing');

      // The core answers again: the next due attempt of each settles it (fenced before its lookups, so NOT_EXECUTED).
      clock.advance(retryIntervalMaxMs);
      await server().coregate.background.reconciler.runOnce();
      for (const reference of [a, b]) {
        const record = await findOperation(server().coregate.store.db, reference);
        assert.equal(record?.status, 'Rejected', reference);
        assert.equal((record?.error as { errordetail: Array<{ code: string }> }).errordetail[0]?.code, 'TD-502-002');
      }
    });

    test('coregate check reports the operations the core refused with a refusal coregate cannot name, read from the operations table, with what to do; --json counts them; the operator API answers them for the console', async () => {
      // Its own refusals, besides those the tests before it settled (it may run alone).
      const token = await demoToken(server());
      for (const loan of [false, true]) {
        const id = randomUUID();
        const call = () => (loan ? executeLoan(server(), token, id, 500) : initiate(server(), token, id, depositBody(1234)));
        const response = await wire().withFault(onRequests(loan ? isLoanCommand : isDepositCommand, refusal('accountFrozen', loan ? 'ML-422-077' : 'TD-422-077')), call);
        assert.equal(response.status, 422, JSON.stringify(response.body));
        const record = await operationOf(id);
        if (!unrecognised.includes(record.reference)) unrecognised.push(record.reference);
      }
      const cli = (args: string[]) => runCli(['check', '--db', apiDbUrl, '--core-url', coreServer().url, '--unknown-age-limit', '31536000', ...args], { env: { ...process.env, COREGATE_LOG_LEVEL: 'error' } });
      const check = await cli([]);
      assert.equal(check.code, 1, check.stdout + check.stderr);
      assert.match(check.stdout, /^Ledger OK: /m);
      assert.match(check.stdout, /^Operations BROKEN /m);
      for (const reference of unrecognised) assert.match(check.stdout, new RegExp(`operation ${reference} \\([^)]*\\) was refused by the core with a refusal coregate cannot name, settled Rejected (TD|ML)-422-091: `));
      assert.match(check.stdout, /What to do \(refused with a refusal coregate cannot name\): nothing to repair in the ledger/);
      assert.match(check.stdout, /docs\/core-protocol\.md/);
      const json = await cli(['--json']);
      assert.equal(json.code, 1);
      const report = JSON.parse(json.stdout) as { operations: { unrecognisedCoreRefusals: { count: number; lookbackDays: number; operations: Array<{ reference: string }> } } };
      assert.equal(report.operations.unrecognisedCoreRefusals.count, unrecognised.length);
      assert.equal(report.operations.unrecognisedCoreRefusals.lookbackDays, 7);
      assert.deepEqual(new Set(report.operations.unrecognisedCoreRefusals.operations.map((row) => row.reference)), new Set(unrecognised));

      const { url } = await loginUrl(server(), clock.now());
      const login = await fetch(url, { redirect: 'manual' });
      const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
      const found = await send(`${server().url}/operator/v1/findings/unrecognised-core-refusals`, { headers: { cookie } });
      assert.equal(found.status, 200, JSON.stringify(found.body));
      assert.equal(found.body.reason, 'REJECTED_BY_CORE');
      assert.equal(found.body.count, unrecognised.length);
      assert.equal(found.body.operations.length, Math.min(20, unrecognised.length), 'the newest 20');
      assert.match(found.body.operations[0].message, /^The core refused the operation: /);
    });
  });
}
