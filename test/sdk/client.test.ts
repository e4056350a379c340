/**
 * The client SDK (`coregate/sdk`): typed calls of the business API (200 / 202 / 204, operations),
 * correlation ids passed through and kept across retries, time-outs and abort signals, bounded
 * retries with back-off that never execute twice (a 409 answering the SDK's own retry resolves to
 * the original result), typed errors for top-level and wrapped error records and for the token
 * endpoint, the client secret kept out of every printable thing, and the package entry point
 * loading no server code. Real HTTP against a started server on each store; time-outs against a
 * local stub that never answers.
 */
// @starts-early: among the slowest files of a quiet run
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { inspect } from 'node:util';
import { after, before, describe, test } from 'node:test';
import {
  CoregateApiError,
  CoregateAuthError,
  CoregateClient,
  CoregateNetworkError,
  CoregateTimeoutError,
  TokenProvider,
  type CoregateClientOptions,
  type Execution,
  type LoanExecutionRequest,
  type OperationView,
  type SdkEvent,
  type TermDepositInitiationRequest,
} from '../../src/sdk/index.js';
import { checkLedger } from '../../src/reference-core/storage/ledger.js';
import { openStore } from '../../src/store/connect.js';
import { depositBody as jsonDepositBody } from '../helpers/bodies.js';
import { FaultyCore } from '../helpers/faulty-core.js';
import { initiatePath, uuidPattern } from '../helpers/http.js';
import { demo, type TestServer } from '../helpers/server.js';
import { describeEachStore } from '../helpers/suite.js';
import { runPendingWorkers } from '../helpers/background.js';
import { coreTablesOf } from '../../src/reference-core/storage/core-db.js';
import { embedded } from '../helpers/stores.js';
import { repoRoot } from '../helpers/repo-root.js';

const { treasury } = demo;
const loanId = '7000000001';
/** 300 000 USD: more than account 1000000001 ever holds (250 000), within the product's limits. */
const unaffordable = 300_000;

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/** The shared deposit body, typed for the SDK. */
const depositBody = (amountValue?: number) => jsonDepositBody(amountValue) as TermDepositInitiationRequest;

function loanBody(amountValue = 5000): LoanExecutionRequest {
  return {
    merchandisingLoanFacilityParameterType: 'DocumentaryRemittance',
    merchandisingLoanType: 'CRDE',
    merchandisingLoanFacilityReference: { loanAmount: { amountValue, amountCurrency: { currencyCode: 'USD' } } },
    accountReferences: [
      { accountIdentification: { accountIdentificationType: 'PaymentAccount', identifierValue: '1000000001' } },
      { accountIdentification: { accountIdentificationType: 'ExpenseAccount', identifierValue: '1000000001' } },
    ],
  } as LoanExecutionRequest;
}

function clientFor(baseUrl: string, options: Partial<CoregateClientOptions> = {}): CoregateClient {
  return new CoregateClient({ baseUrl, realm: demo.realm, clientId: treasury.clientId, clientSecret: treasury.secret, ...options });
}

/** The result of a 200 execution (fails the test on any other status). */
function done<TDone, TAccepted>(outcome: Execution<TDone, TAccepted>): TDone {
  assert.equal(outcome.status, 200, JSON.stringify(outcome));
  if (outcome.status !== 200) throw new Error('unreachable');
  return outcome.result;
}

function accepted<TDone, TAccepted>(outcome: Execution<TDone, TAccepted>): { accepted: TAccepted; reference: string } {
  assert.equal(outcome.status, 202, JSON.stringify(outcome));
  if (outcome.status !== 202) throw new Error('unreachable');
  return outcome;
}

/** Runs the pending worker of every instance, then answers the operation, which has left Pending. */
async function settled(server: TestServer, client: CoregateClient, reference: string): Promise<OperationView> {
  await runPendingWorkers(server);
  const { result: view } = await client.operations.get(reference);
  assert.notEqual(view.status, 'Pending', `operation ${reference} still Pending after the pending workers ran`);
  return view;
}

/** Settles `promise` or fails after `ms`: a test about a time-out must itself be bounded. */
async function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: still running after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

interface SentRequest {
  method: string;
  path: string;
  correlationId: string | null;
  startedAt: number;
  status?: number;
  echoedCorrelationId?: string | null;
}

/**
 * Wraps fetch: records every business request (not token requests) and its response, and lets a
 * test act before a request (`beforeSend`) or replace its response (`afterReceive`).
 */
function recordingFetch(hooks: {
  beforeSend?: (request: SentRequest, index: number) => void;
  afterReceive?: (request: SentRequest, response: Response, index: number) => Promise<Response> | Response;
} = {}): { fetch: typeof fetch; sent: SentRequest[] } {
  const sent: SentRequest[] = [];
  const wrapped: typeof fetch = async (input, init) => {
    const url = new URL(String(input));
    if (url.pathname.includes('/protocol/openid-connect/')) return fetch(input, init);
    const headers = new Headers(init?.headers);
    const request: SentRequest = { method: init?.method ?? 'GET', path: url.pathname, correlationId: headers.get('x-correlation-id'), startedAt: Date.now() };
    const index = sent.length;
    sent.push(request);
    hooks.beforeSend?.(request, index);
    const response = await fetch(input, init);
    request.status = response.status;
    request.echoedCorrelationId = response.headers.get('x-correlation-id');
    return hooks.afterReceive ? hooks.afterReceive(request, response, index) : response;
  };
  return { fetch: wrapped, sent };
}

/** recordingFetch that loses the first response to `path` after the server answered it, as a dropped connection would. */
function losingFirstResponse(path: string): { fetch: typeof fetch; sent: SentRequest[] } {
  let lost = false;
  return recordingFetch({
    afterReceive: async (request, response) => {
      if (!lost && request.path === path) {
        lost = true;
        await response.arrayBuffer();
        throw new TypeError('fetch failed');
      }
      return response;
    },
  });
}

/** Business requests the server logged ("incoming request") whose path starts with `prefix`. */
function serverSaw(server: TestServer, prefix: string): number {
  let count = 0;
  for (const line of server.logLines) {
    try {
      const entry = JSON.parse(line) as { msg?: string; req?: { url?: string } };
      if (entry.msg === 'incoming request' && entry.req?.url?.startsWith(prefix)) count += 1;
    } catch {
      // not a JSON line
    }
  }
  return count;
}

async function termDepositCount(server: TestServer): Promise<number> {
  return (await embedded(server.coregate.store.db).selectFrom('term_deposits').select('contract_number').execute()).length;
}

async function storedOperation(server: TestServer, correlationId: string) {
  return server.coregate.store.db
    .selectFrom('operations')
    .select(['reference', 'status', 'correlation_id'])
    .where('correlation_id', '=', correlationId)
    .executeTakeFirst();
}

/** Runs `work` with Math.random pinned (the back-off's full jitter then waits its whole ceiling). */
async function withRandom<T>(value: number, work: () => Promise<T>): Promise<T> {
  const original = Math.random;
  Math.random = () => value;
  try {
    return await work();
  } finally {
    Math.random = original;
  }
}

/**
 * A stub of the server on a free port: the token endpoint answers a (fake) token unless told to
 * hang; business paths hang, or stall after the response headers.
 */
interface Stub {
  url: string;
  tokenRequests: number;
  businessRequests: number;
  /** Resolves when the next business request has reached the stub. */
  businessArrived(): Promise<void>;
  close(): Promise<void>;
}

async function startStub(behaviour: { token: 'answer' | 'hang'; business: 'hang' | 'stall-body' }): Promise<Stub> {
  const stub = { tokenRequests: 0, businessRequests: 0 } as Stub;
  let arrivals: Array<() => void> = [];
  stub.businessArrived = () => new Promise((resolve) => arrivals.push(resolve));
  const server: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
    request.resume();
    if (request.url?.includes('/protocol/openid-connect/token')) {
      stub.tokenRequests += 1;
      if (behaviour.token === 'answer') {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ access_token: 'stub-token', token_type: 'Bearer', expires_in: 300 }));
      }
      return;
    }
    stub.businessRequests += 1;
    const waiting = arrivals;
    arrivals = [];
    for (const resolve of waiting) resolve();
    if (behaviour.business === 'stall-body') {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('{"termDepositAccount":');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  stub.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  stub.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return stub;
}

/** A URL on which nothing listens. */
async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

/** Everything a person or a log could print of an error. */
function printable(error: unknown): string {
  const parts = [String(error), inspect(error, { depth: 10, showHidden: true })];
  if (error instanceof Error) parts.push(error.message, error.stack ?? '', JSON.stringify(error), String((error as { cause?: unknown }).cause ?? ''));
  return parts.join('\n');
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  assert.fail('expected the call to be rejected');
}

// =============================================================================================
// Typed calls
// =============================================================================================

describeEachStore('SDK client: typed calls', ({ server }) => {
  test('termDeposits.initiate → 200 with the initiation response and the call\'s correlation id', async () => {
    const client = clientFor(server().url);
    const outcome = await client.termDeposits.initiate(depositBody(1500));
    const deposit = done(outcome);
    assert.match(outcome.correlationId, uuidPattern, 'a generated correlation id');
    assert.match(deposit.termDepositAccount, /^TD\d+$/);
    assert.equal(deposit.customerReference, 'C0001');
    assert.deepEqual(deposit.principalAmount, { amountValue: 1500, amountCurrency: { currencycode: 'USD' } });
    assert.deepEqual(deposit.termDepositPeriod, { numberOfDays: 91, maturityDate: '2026-06-01' });
    assert.equal(deposit.valueDate, '2026-03-02');
    assert.match(deposit.operationReference, uuidPattern);
  });

  test('termDeposits.initiate with respondAsync → 202 with the reference; operations.get then shows it Executed with the result', async () => {
    const client = clientFor(server().url);
    const outcome = await client.termDeposits.initiate(depositBody(1600), { respondAsync: true });
    const { accepted: body, reference } = accepted(outcome);
    assert.match(reference, uuidPattern);
    assert.deepEqual(body, { operationReference: reference, termDepositStatus: 'Pending' });
    const view = await settled(server(), client, reference);
    assert.equal(view.reference, reference);
    assert.equal(view.operation, 'initiateTermDeposit');
    assert.equal(view.status, 'Executed');
    const result = view.result as { operationReference: string; principalAmount: unknown };
    assert.equal(result.operationReference, reference);
    assert.deepEqual(result.principalAmount, { amountValue: 1600, amountCurrency: { currencycode: 'USD' } });
  });

  test('termDeposits.retrieve → the contract with its status and the interest expected at maturity', async () => {
    const client = clientFor(server().url);
    const deposit = done(await client.termDeposits.initiate(depositBody(1700)));
    const read = await client.termDeposits.retrieve(deposit.termDepositAccount);
    // One shape for every call: a read answers { status, result, correlationId } as an execution does.
    assert.equal(read.status, 200);
    assert.equal(typeof read.correlationId, 'string');
    const retrieved = read.result;
    assert.equal(retrieved.termDepositAccount, deposit.termDepositAccount);
    assert.equal(retrieved.customerReference, 'C0001');
    assert.deepEqual(retrieved.principalAmount, deposit.principalAmount);
    assert.deepEqual(retrieved.termDepositPeriod, deposit.termDepositPeriod);
    assert.equal(retrieved.operationReference, deposit.operationReference);
    assert.equal(typeof retrieved.termDepositStatus, 'string');
    assert.equal(retrieved.expectedInterestAmount.amountCurrency.currencycode, 'USD');
    assert.ok(retrieved.expectedInterestAmount.amountValue > 0);
  });

  test('termDeposits.retrieve of an unknown contract → CoregateApiError 404', async () => {
    const error = await rejection(clientFor(server().url).termDeposits.retrieve('TD0000000000'));
    assert.ok(error instanceof CoregateApiError);
    assert.equal(error.status, 404);
    assert.equal(error.reason, 'NOT_FOUND');
  });

  test('merchandisingLoans.executeInstallment → 200 PartiallyExecuted; operations.get(executionReference) → Executed with the same result', async () => {
    const client = clientFor(server().url);
    const execution = done(await client.merchandisingLoans.executeInstallment(loanId, 1, loanBody(5000)));
    assert.equal(execution.merchandisingLoanFacilityStatus, 'PartiallyExecuted');
    assert.match(execution.executionReference, uuidPattern);
    assert.equal(typeof execution.merchandisingLoanOperationId, 'string');
    assert.ok(!Number.isNaN(Date.parse(execution.executionDateTime)));
    const { result: view } = await client.operations.get(execution.executionReference);
    assert.deepEqual(view, { reference: execution.executionReference, operation: 'executeMerchandisingLoanPayment', status: 'Executed', result: execution });
  });

  test('merchandisingLoans.executeInstallment with returnMinimal → 204, no result; the installment is paid', async () => {
    const client = clientFor(server().url);
    const paid = async () =>
      BigInt(
        (await embedded(server().coregate.store.db).selectFrom('loan_installments').select('paid_minor').where('loan_id', '=', loanId).where('sequence', '=', 1).executeTakeFirstOrThrow())
          .paid_minor,
      );
    const before = await paid();
    const outcome = await client.merchandisingLoans.executeInstallment(loanId, 1, loanBody(5001), { returnMinimal: true });
    assert.equal(outcome.status, 204);
    assert.equal(outcome.result, undefined);
    assert.equal((await paid()) - before, 500_100n);
  });

  test('merchandisingLoans.executeInstallment with respondAsync → 202 Pending; operations.get then shows it Executed', async () => {
    const client = clientFor(server().url);
    const { accepted: body, reference } = accepted(await client.merchandisingLoans.executeInstallment(loanId, 1, loanBody(5002), { respondAsync: true }));
    assert.equal(body.merchandisingLoanFacilityStatus, 'Pending');
    assert.equal(body.executionReference, reference);
    const view = await settled(server(), client, reference);
    assert.equal(view.status, 'Executed');
    assert.equal((view.result as { executionReference: string }).executionReference, reference);
  });

  test('operations.get of an unknown reference → CoregateApiError 404', async () => {
    const error = await rejection(clientFor(server().url).operations.get(randomUUID()));
    assert.ok(error instanceof CoregateApiError);
    assert.equal(error.status, 404);
  });

  test('correlationId is passed through: sent, echoed by the server, recorded, and answered', async () => {
    const recording = recordingFetch();
    const events: SdkEvent[] = [];
    const client = clientFor(server().url, { fetch: recording.fetch, onEvent: (event) => events.push(event) });
    const correlationId = `sdk-test:${randomUUID()}`;
    const outcome = await client.termDeposits.initiate(depositBody(), { correlationId });
    assert.equal(outcome.correlationId, correlationId);
    assert.equal(recording.sent.length, 1);
    assert.equal(recording.sent[0]?.correlationId, correlationId);
    assert.equal(recording.sent[0]?.echoedCorrelationId, correlationId, 'echoed by the server');
    assert.equal((await storedOperation(server(), correlationId))?.reference, done(outcome).operationReference);
    assert.deepEqual(events.map((event) => [event.method, event.path, event.status, event.correlationId, event.attempt]), [['POST', initiatePath, 200, correlationId, 1]]);

    const readId = `sdk-read:${randomUUID()}`;
    await client.termDeposits.retrieve(done(outcome).termDepositAccount, { correlationId: readId });
    assert.equal(recording.sent[1]?.correlationId, readId);
    assert.equal(recording.sent[1]?.echoedCorrelationId, readId);
  });

  test('without a correlationId each call gets a fresh generated one', async () => {
    const recording = recordingFetch();
    const client = clientFor(server().url, { fetch: recording.fetch });
    const first = await client.termDeposits.initiate(depositBody());
    const second = await client.termDeposits.initiate(depositBody());
    assert.notEqual(first.correlationId, second.correlationId);
    assert.deepEqual(recording.sent.map((request) => request.echoedCorrelationId), [first.correlationId, second.correlationId]);
  });

  test('issue 12 item 1: the same call made twice without a correlationId is refused the second time (409 TD-409-002), as a raw request without the header is; an own correlationId makes a deliberate repeat', async () => {
    const recording = recordingFetch();
    const client = clientFor(server().url, { fetch: recording.fetch });
    const body = depositBody();
    const first = await client.termDeposits.initiate(body);
    assert.equal(first.status, 200);
    const error = await rejection(client.termDeposits.initiate(body));
    assert.ok(error instanceof CoregateApiError, String(error));
    assert.equal(error.status, 409);
    assert.equal(error.code, 'TD-409-002');
    assert.match(error.message, new RegExp(done(first).operationReference));
    assert.equal(recording.sent.length, 2, 'one attempt each: a 409 is not retried');
    const deliberate = await client.termDeposits.initiate(body, { correlationId: `again:${randomUUID()}` });
    assert.equal(deliberate.status, 200, 'an id of the caller\'s own is a decision: no duplicate window');
    assert.notEqual(done(deliberate).operationReference, done(first).operationReference);
  });

  test('issue 12 item 6: an unreachable server is a CoregateNetworkError naming the cause (ECONNREFUSED host:port), not "fetch failed"', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const client = clientFor(`http://127.0.0.1:${port}`, { retry: { attempts: 1 } });
    const error = await rejection(client.termDeposits.initiate(depositBody()));
    assert.ok(error instanceof CoregateNetworkError, String(error));
    assert.match(error.message, new RegExp(`ECONNREFUSED 127\\.0\\.0\\.1:${port}`));
    assert.doesNotMatch(error.message, /fetch failed/);
  });

  test('channel is sent as x-channel and recorded in the audit trail', async () => {
    const client = clientFor(server().url);
    const correlationId = randomUUID();
    await client.termDeposits.initiate(depositBody(), { correlationId, channel: 'MOBILE' });
    const audit = await server().coregate.store.db.selectFrom('audit_records').select('details').where('correlation_id', '=', correlationId).executeTakeFirstOrThrow();
    assert.equal((JSON.parse(audit.details) as { channel: string }).channel, 'MOBILE');
  });
});

// =============================================================================================
// Time-outs and abort signals (against a stub that never answers)
// =============================================================================================

describe('SDK client: time-outs and abort signals', () => {
  const stubs: Stub[] = [];
  after(async () => {
    for (const stub of stubs) await stub.close();
  });
  async function stub(behaviour: Parameters<typeof startStub>[0]): Promise<Stub> {
    const started = await startStub(behaviour);
    stubs.push(started);
    return started;
  }

  test('timeoutMs ends a call the server never answers with CoregateTimeoutError, without retrying it', async () => {
    const hanging = await stub({ token: 'answer', business: 'hang' });
    const client = clientFor(hanging.url, { retry: { attempts: 3, baseDelayMs: 1 } });
    const started = Date.now();
    const error = await within(5_000, 'the timed-out call', rejection(client.termDeposits.retrieve('TD1', { timeoutMs: 300 })));
    assert.ok(error instanceof CoregateTimeoutError, String(error));
    assert.match(error.message, /timed out after 300 ms/);
    assert.ok(Date.now() - started >= 290);
    assert.equal(hanging.businessRequests, 1);
  });

  test('the client-wide timeoutMs applies when the call gives none', async () => {
    const hanging = await stub({ token: 'answer', business: 'hang' });
    const client = clientFor(hanging.url, { timeoutMs: 250 });
    const error = await within(5_000, 'the timed-out call', rejection(client.termDeposits.initiate(depositBody())));
    assert.ok(error instanceof CoregateTimeoutError, String(error));
  });

  test('an AbortSignal aborts a call in flight with the signal\'s reason', async () => {
    const hanging = await stub({ token: 'answer', business: 'hang' });
    const client = clientFor(hanging.url);
    const controller = new AbortController();
    const reason = new Error('the user went away');
    // Aborted once the request is in flight (it reached the server), not after a guessed delay.
    void hanging.businessArrived().then(() => controller.abort(reason));
    const error = await within(30_000, 'the aborted call', rejection(client.termDeposits.initiate(depositBody(), { signal: controller.signal })));
    assert.equal(error, reason);
    assert.equal(hanging.businessRequests, 1);
  });

  test('an already aborted signal fails the call at once', async () => {
    const hanging = await stub({ token: 'answer', business: 'hang' });
    const client = clientFor(hanging.url);
    const error = await within(3_000, 'the aborted call', rejection(client.termDeposits.retrieve('TD1', { signal: AbortSignal.abort() })));
    assert.equal((error as Error).name, 'AbortError');
  });

  test('an AbortSignal aborts a call while its token request is still pending', async () => {
    const hanging = await stub({ token: 'hang', business: 'hang' });
    const client = clientFor(hanging.url);
    const controller = new AbortController();
    const reason = new Error('the user went away');
    setTimeout(() => controller.abort(reason), 100);
    const error = await within(3_000, 'the aborted call', rejection(client.termDeposits.retrieve('TD1', { signal: controller.signal })));
    assert.equal(error, reason);
  });

  test('timeoutMs bounds a call while its token request is still pending', async () => {
    const hanging = await stub({ token: 'hang', business: 'hang' });
    const client = clientFor(hanging.url);
    const error = await within(3_000, 'the timed-out call', rejection(client.termDeposits.retrieve('TD1', { timeoutMs: 300 })));
    assert.ok(error instanceof CoregateTimeoutError, String(error));
  });

  test('timeoutMs still ends a call whose response body stalls after the headers, with CoregateTimeoutError', async () => {
    const stalling = await stub({ token: 'answer', business: 'stall-body' });
    const client = clientFor(stalling.url);
    const error = await within(3_000, 'the stalled call', rejection(client.termDeposits.retrieve('TD1', { timeoutMs: 300 })));
    assert.ok(error instanceof CoregateTimeoutError, `expected CoregateTimeoutError, got ${inspect(error)}`);
  });

  test('a server that cannot be reached → CoregateNetworkError once the attempts run out', async () => {
    const url = await closedPortUrl();
    const client = clientFor(url, { authUrl: (await stub({ token: 'answer', business: 'hang' })).url, retry: { attempts: 2, baseDelayMs: 1 } });
    const error = await within(5_000, 'the unreachable call', rejection(client.termDeposits.retrieve('TD1')));
    assert.ok(error instanceof CoregateNetworkError, String(error));
  });
});

// =============================================================================================
// Safe retries
// =============================================================================================

const faulty = new FaultyCore();

describeEachStore(
  'SDK client: safe retries',
  ({ server, dbUrl }) => {
    /** Sets `fault` for the first business request to `path` only; cleared once its response arrived. */
    function faultOnFirst(fault: FaultyCore['fault'], path: string) {
      let armed = true;
      return recordingFetch({
        beforeSend: (request) => {
          if (armed && request.path === path) faulty.fault = fault;
        },
        afterReceive: (request, response) => {
          if (armed && request.path === path) {
            armed = false;
            faulty.fault = { kind: 'none' };
          }
          return response;
        },
      });
    }

    test('core unavailable on the first attempt only → the SDK retries with the same correlation id and succeeds, executed once', async () => {
      const recording = faultOnFirst({ kind: 'unavailable' }, initiatePath);
      const events: SdkEvent[] = [];
      const client = clientFor(server().url, { fetch: recording.fetch, onEvent: (event) => events.push(event), retry: { attempts: 3, baseDelayMs: 10 } });
      const contractsBefore = await termDepositCount(server());
      const seenBefore = serverSaw(server(), initiatePath);
      const correlationId = randomUUID();
      const outcome = await client.termDeposits.initiate(depositBody(), { correlationId });
      const deposit = done(outcome);
      assert.equal(outcome.correlationId, correlationId);
      assert.deepEqual(recording.sent.map((request) => [request.status, request.correlationId]), [[502, correlationId], [200, correlationId]]);
      assert.deepEqual(events.map((event) => [event.status, event.attempt, event.correlationId]), [[502, 1, correlationId], [200, 2, correlationId]]);
      assert.equal(serverSaw(server(), initiatePath) - seenBefore, 2);
      assert.equal(await termDepositCount(server()), contractsBefore + 1, 'executed exactly once');
      assert.equal((await storedOperation(server(), correlationId))?.reference, deposit.operationReference, 'the retry executed the original operation');
    });

    test('retries are bounded by the attempts option and back off exponentially (jitter pinned at its ceiling)', async () => {
      const recording = recordingFetch();
      const client = clientFor(server().url, { fetch: recording.fetch, retry: { attempts: 3, baseDelayMs: 150, maxDelayMs: 5_000 } });
      const contractsBefore = await termDepositCount(server());
      const writesBefore = faulty.writes;
      const seenBefore = serverSaw(server(), initiatePath);
      const correlationId = randomUUID();
      const error = await faulty.withFault({ kind: 'unavailable' }, () => withRandom(0.999, () => rejection(client.termDeposits.initiate(depositBody(), { correlationId }))));
      assert.ok(error instanceof CoregateApiError, String(error));
      assert.equal(error.status, 502);
      assert.equal(error.reason, 'CORE_UNAVAILABLE');
      assert.equal(error.code, 'TD-502-001');
      assert.equal(serverSaw(server(), initiatePath) - seenBefore, 3, 'three attempts, no more');
      assert.deepEqual(recording.sent.map((request) => request.correlationId), [correlationId, correlationId, correlationId]);
      const [first, second, third] = recording.sent.map((request) => request.startedAt);
      assert.ok(second! - first! >= 140, `first back-off ≈ 150 ms, was ${second! - first!} ms`);
      assert.ok(third! - second! >= 290, `second back-off ≈ 300 ms, was ${third! - second!} ms`);
      assert.equal(faulty.writes, writesBefore, 'the core was never written to');
      assert.equal(await termDepositCount(server()), contractsBefore);
    });

    test('the back-off never exceeds maxDelayMs', async () => {
      const recording = recordingFetch();
      // The delays the client waits, recorded rather than timed: a loaded machine stretches real gaps.
      const delays: number[] = [];
      const sleep = async (delayMs: number) => {
        delays.push(delayMs);
      };
      const client = clientFor(server().url, { fetch: recording.fetch, sleep, retry: { attempts: 4, baseDelayMs: 200, maxDelayMs: 200 } });
      await faulty.withFault({ kind: 'unavailable' }, () => withRandom(0.999, () => rejection(client.termDeposits.initiate(depositBody()))));
      assert.equal(recording.sent.length, 4);
      assert.equal(delays.length, 3, 'one back-off between each two of the four attempts');
      for (const delay of delays) assert.ok(delay >= 190 && delay <= 200, `each back-off is ≈ 200 ms (the cap), was ${delay} ms`);
      // Uncapped, the third delay would be 800 ms.
      assert.ok(delays[2]! <= 200, `the third back-off is capped at 200 ms, was ${delays[2]} ms`);
    });

    test('attempts: 1 → no retry; attempts above 10 are capped at 10', async () => {
      const single = recordingFetch();
      await faulty.withFault({ kind: 'unavailable' }, () => rejection(clientFor(server().url, { fetch: single.fetch, retry: { attempts: 1 } }).termDeposits.initiate(depositBody())));
      assert.equal(single.sent.length, 1);

      const many = recordingFetch();
      const error = await faulty.withFault({ kind: 'unavailable' }, () =>
        rejection(clientFor(server().url, { fetch: many.fetch, retry: { attempts: 50, baseDelayMs: 1, maxDelayMs: 2 } }).termDeposits.initiate(depositBody())),
      );
      assert.ok(error instanceof CoregateApiError);
      assert.equal(many.sent.length, 10);
    });

    test('a business refusal (422) is final: never retried', async () => {
      const recording = recordingFetch();
      const client = clientFor(server().url, { fetch: recording.fetch, retry: { attempts: 5, baseDelayMs: 1 } });
      const error = await rejection(client.termDeposits.initiate(depositBody(unaffordable)));
      assert.ok(error instanceof CoregateApiError);
      assert.equal(error.status, 422);
      assert.equal(recording.sent.length, 1, `one request, never retried: ${JSON.stringify(recording.sent)}`);
    });

    test('a lost response after the server executed: the retry gets 409 for its own id and returns the ORIGINAL result via operations.get', async () => {
      const recording = losingFirstResponse(initiatePath);
      const client = clientFor(server().url, { fetch: recording.fetch, retry: { attempts: 3, baseDelayMs: 10 } });
      const contractsBefore = await termDepositCount(server());
      const correlationId = randomUUID();
      const deposit = done(await client.termDeposits.initiate(depositBody(2100), { correlationId }));
      const stored = await storedOperation(server(), correlationId);
      assert.equal(deposit.operationReference, stored?.reference, 'the original operation\'s result');
      assert.deepEqual(deposit.principalAmount, { amountValue: 2100, amountCurrency: { currencycode: 'USD' } });
      assert.deepEqual(
        recording.sent.map((request) => [request.method, request.path, request.status]),
        [
          ['POST', initiatePath, 200],
          ['POST', initiatePath, 409],
          ['GET', `/v1/operations/${stored?.reference}`, 200],
        ],
      );
      assert.equal(recording.sent[0]?.correlationId, correlationId);
      assert.equal(recording.sent[1]?.correlationId, correlationId);
      assert.equal(await termDepositCount(server()), contractsBefore + 1, 'executed once');
    });

    test('a lost response after the server refused: the retry resolves to the ORIGINAL refusal (422 TD-422-002), not a 409', async () => {
      const recording = losingFirstResponse(initiatePath);
      const client = clientFor(server().url, { fetch: recording.fetch, retry: { attempts: 3, baseDelayMs: 10 } });
      const correlationId = randomUUID();
      const error = await rejection(client.termDeposits.initiate(depositBody(unaffordable), { correlationId }));
      assert.ok(error instanceof CoregateApiError, String(error));
      assert.equal(error.status, 422);
      assert.equal(error.code, 'TD-422-002');
      assert.equal(error.correlationId, correlationId);
      assert.deepEqual(recording.sent.map((request) => request.status), [422, 409, 200]);
    });

    test('a lost loan response: the retry resolves to the original execution (wrapped 409 of the loan route)', async () => {
      const path = `/v1/merchandising-loan/${loanId}/repayment-schedules/2/execute`;
      const recording = losingFirstResponse(path);
      const client = clientFor(server().url, { fetch: recording.fetch, retry: { attempts: 3, baseDelayMs: 10 } });
      const execution = done(await client.merchandisingLoans.executeInstallment(loanId, 2, loanBody(5000)));
      assert.deepEqual(recording.sent.map((request) => request.status), [200, 409, 200]);
      const executions = await embedded(server().coregate.store.db).selectFrom('loan_executions').select('execution_reference').where('loan_id', '=', loanId).where('sequence', '=', 2).execute();
      assert.deepEqual(executions.map((row) => row.execution_reference), [execution.executionReference], 'executed once');
    });

    test('a caller reusing a consumed correlation id (not a retry) gets the 409, not the other operation\'s result', async () => {
      const client = clientFor(server().url);
      const correlationId = randomUUID();
      done(await client.termDeposits.initiate(depositBody(), { correlationId }));
      const error = await rejection(client.termDeposits.initiate(depositBody(), { correlationId }));
      assert.ok(error instanceof CoregateApiError, String(error));
      assert.equal(error.status, 409);
      assert.equal(error.code, 'TD-409-001');
    });

    test('fault injection: the core times out after committing (slow-after-commit) → 504; the SDK\'s retry gets 409 for its own id and returns the original result; the ledger shows one execution', async () => {
      const recording = faultOnFirst({ kind: 'slow-after-commit', delayMs: 600 }, initiatePath);
      const client = clientFor(server().url, { fetch: recording.fetch, retry: { attempts: 6, baseDelayMs: 100, maxDelayMs: 400 } });
      const contractsBefore = await termDepositCount(server());
      const correlationId = randomUUID();
      const outcome = await client.termDeposits.initiate(depositBody(2500), { correlationId });
      const deposit = done(outcome);

      const posts = recording.sent.filter((request) => request.method === 'POST');
      assert.equal(posts[0]?.status, 504, 'the first attempt timed out at the API');
      assert.equal(posts.at(-1)?.status, 409, 'the last attempt answered the SDK\'s own retry with 409');
      for (const post of posts) assert.equal(post.correlationId, correlationId);
      const stored = await storedOperation(server(), correlationId);
      assert.equal(stored?.status, 'Executed');
      assert.equal(recording.sent.at(-1)?.path, `/v1/operations/${stored?.reference}`);
      assert.equal(deposit.operationReference, stored?.reference, 'the original operation\'s result');
      assert.deepEqual(deposit.principalAmount, { amountValue: 2500, amountCurrency: { currencycode: 'USD' } });

      // The ledger, read through a store of its own: exactly one execution, every movement balanced.
      const store = await openStore(dbUrl());
      try {
        const contracts = await embedded(store.db).selectFrom('term_deposits').select('contract_number').execute();
        assert.equal(contracts.length, contractsBefore + 1);
        const movements = await embedded(store.db).selectFrom('movements').select('id').where('reference', '=', String(stored?.reference)).execute();
        assert.equal(movements.length, 1);
        const ledger = await checkLedger(coreTablesOf(store.db));
        assert.deepEqual([ledger.unbalancedMovements, ledger.balanceMismatches, ledger.negativeCustomerAccounts], [[], [], []]);
      } finally {
        await store.close();
      }
    });

    test('an AbortSignal stops the retries during a back-off', async () => {
      const recording = recordingFetch();
      const client = clientFor(server().url, { fetch: recording.fetch, retry: { attempts: 5, baseDelayMs: 2_000, maxDelayMs: 2_000 } });
      const controller = new AbortController();
      const reason = new Error('cancelled by the caller');
      const error = await faulty.withFault({ kind: 'unavailable' }, () =>
        withRandom(0.999, () => {
          const call = rejection(client.termDeposits.initiate(depositBody(), { signal: controller.signal }));
          setTimeout(() => controller.abort(reason), 400);
          return within(1_500, 'the aborted retries', call);
        }),
      );
      assert.equal(error, reason);
      assert.equal(recording.sent.length, 1);
    });
  },
  { wrapCore: faulty.wrap, flags: { coreTimeoutMs: '300' } },
);

// =============================================================================================
// A retry that resolves to a pending original (the core's batch window keeps it Pending)
// =============================================================================================

const utcClock = (epochSecond: number) => new Date((((epochSecond % 86_400) + 86_400) % 86_400) * 1000).toISOString().slice(11, 19);
const nowSecond = Math.floor(Date.now() / 1000);

describeEachStore(
  'SDK client: a retry resolving to a pending original',
  ({ server }) => {
    test('a lost 202 answer: the retry\'s 409 resolves to 202 with the term deposit\'s accepted body (operationReference, Pending)', async () => {
      const recording = losingFirstResponse(initiatePath);
      const client = clientFor(server().url, { fetch: recording.fetch, retry: { attempts: 3, baseDelayMs: 10 } });
      const correlationId = randomUUID();
      const outcome = await client.termDeposits.initiate(depositBody(), { correlationId });
      assert.deepEqual(recording.sent.map((request) => request.status), [202, 409, 200]);
      const { accepted: body, reference } = accepted(outcome);
      assert.equal(reference, (await storedOperation(server(), correlationId))?.reference);
      assert.deepEqual(body, { operationReference: reference, termDepositStatus: 'Pending' });
    });
  },
  // Open from a minute ago to an hour from now: every operation is queued (202) and stays Pending.
  { flags: { coreBatchWindow: `${utcClock(nowSecond - 60)}-${utcClock(nowSecond + 3_600)}` } },
);

// =============================================================================================
// Errors
// =============================================================================================

describeEachStore('SDK client: errors', ({ server }) => {
  test('a top-level error record (term deposit 422) → CoregateApiError with status, reason, message, path, details and code', async () => {
    const correlationId = randomUUID();
    const error = await rejection(clientFor(server().url).termDeposits.initiate(depositBody(unaffordable), { correlationId }));
    assert.ok(error instanceof CoregateApiError);
    assert.ok(error instanceof Error);
    assert.equal(error.name, 'CoregateApiError');
    assert.equal(error.status, 422);
    assert.equal(error.reason, 'BUSINESS_RULE_VIOLATION');
    assert.match(error.message, /1000000001/);
    assert.equal(error.path, 'POST /v1/term-deposits/initiate');
    assert.equal(error.details.length, 1);
    assert.equal(error.details[0]?.code, 'TD-422-002');
    assert.equal(error.details[0]?.reason, 'INSUFFICIENT_FUNDS_SOURCE_ACCOUNT');
    assert.equal(typeof error.details[0]?.message, 'string');
    assert.equal(error.code, 'TD-422-002');
    assert.equal(error.wrapped, false);
    assert.equal(error.correlationId, correlationId);
  });

  test('a wrapped error record (loan 404) → CoregateApiError with the record\'s fields and wrapped: true', async () => {
    const error = await rejection(clientFor(server().url).merchandisingLoans.executeInstallment('7999999999', 1, loanBody()));
    assert.ok(error instanceof CoregateApiError);
    assert.equal(error.status, 404);
    assert.equal(error.reason, 'NOT_FOUND');
    assert.match(error.message, /7999999999/);
    assert.equal(error.path, 'POST /v1/merchandising-loan/7999999999/repayment-schedules/1/execute');
    assert.equal(error.code, 'ML-404-001');
    assert.equal(error.details[0]?.reason, 'FACILITY_NOT_FOUND');
    assert.equal(error.wrapped, true);
  });

  test('a wrong secret → CoregateAuthError (401 invalid_client), from a call and from token(); no business request is sent', async () => {
    const client = clientFor(server().url, { clientSecret: 'wrong-secret-0123456789abcdef' });
    const seenBefore = serverSaw(server(), '/v1/');
    for (const attempt of [() => client.termDeposits.retrieve('TD1'), () => client.token()]) {
      const error = await rejection(attempt());
      assert.ok(error instanceof CoregateAuthError, String(error));
      assert.equal(error.name, 'CoregateAuthError');
      assert.equal(error.status, 401);
      assert.equal(error.error, 'invalid_client');
      assert.equal(typeof error.description, 'string');
    }
    assert.equal(serverSaw(server(), '/v1/'), seenBefore);
  });
});

// =============================================================================================
// The client secret stays secret
// =============================================================================================

describeEachStore('SDK client: the client secret is never exposed', ({ server }) => {
  const secret = treasury.secret;

  test('util.inspect, JSON.stringify and String of the client and of a session never show the secret', async () => {
    const client = clientFor(server().url);
    await client.token();
    const session = client.session({ username: 'jdoe', workstation: 'WS-BRANCH-07' });
    const renderings = [
      inspect(client),
      inspect(client, { showHidden: true, depth: Infinity }),
      inspect(client, { customInspect: false, showHidden: true, depth: Infinity }),
      JSON.stringify(client),
      String(client),
      `${client}`,
      inspect(session, { showHidden: true, depth: Infinity }),
      JSON.stringify(session),
      String(session),
      inspect(new TokenProvider({ tokenUrl: server().tokenUrl(), clientId: treasury.clientId, clientSecret: secret }), { showHidden: true, depth: Infinity }),
      JSON.stringify(new TokenProvider({ tokenUrl: server().tokenUrl(), clientId: treasury.clientId, clientSecret: secret })),
    ];
    for (const rendering of renderings) assert.equal(rendering.includes(secret), false, rendering);
    assert.match(inspect(client), /treasury-app/, 'the client id is shown');
  });

  test('no thrown error (auth, API, network, time-out) holds the secret in its message, stack or inspection', async () => {
    const errors: unknown[] = [];
    const wrongSecret = 'wrong-secret-for-inspection-0123456789abcdef';
    errors.push(await rejection(clientFor(server().url, { clientSecret: wrongSecret }).termDeposits.retrieve('TD1')));
    errors.push(await rejection(clientFor(server().url).termDeposits.initiate(depositBody(unaffordable))));
    errors.push(await rejection(clientFor(server().url).merchandisingLoans.executeInstallment('7999999999', 1, loanBody())));
    errors.push(await rejection(clientFor(await closedPortUrl(), { retry: { attempts: 1 } }).termDeposits.retrieve('TD1')));
    const hanging = await startStub({ token: 'answer', business: 'hang' });
    try {
      errors.push(await rejection(clientFor(hanging.url).termDeposits.retrieve('TD1', { timeoutMs: 100 })));
    } finally {
      await hanging.close();
    }
    assert.ok(errors[0] instanceof CoregateAuthError);
    assert.ok(errors[1] instanceof CoregateApiError);
    assert.ok(errors[2] instanceof CoregateApiError);
    assert.ok(errors[3] instanceof CoregateNetworkError);
    assert.ok(errors[4] instanceof CoregateTimeoutError);
    for (const error of errors) {
      const text = printable(error);
      assert.equal(text.includes(secret), false, text);
      assert.equal(text.includes(wrongSecret), false, text);
    }
  });

  test('onEvent events never carry the secret nor a token', async () => {
    const events: SdkEvent[] = [];
    const client = clientFor(server().url, { onEvent: (event) => events.push(event), retry: { attempts: 1 } });
    const deposit = done(await client.termDeposits.initiate(depositBody()));
    await client.termDeposits.retrieve(deposit.termDepositAccount);
    await rejection(client.termDeposits.initiate(depositBody(unaffordable)));
    const token = await client.token();
    assert.equal(events.length, 3);
    const text = JSON.stringify(events);
    assert.equal(text.includes(secret), false);
    assert.equal(text.includes(token), false);
    for (const event of events) assert.deepEqual(Object.keys(event).sort(), ['attempt', 'correlationId', 'durationMs', 'method', 'path', 'status']);
  });

  test('constructing the client where window and document are defined (a browser) throws: the secret stays server side', () => {
    const scope = globalThis as { window?: unknown; document?: unknown };
    scope.window = {};
    scope.document = {};
    try {
      assert.throws(
        () => clientFor(server().url),
        (error: unknown) => {
          assert.ok(error instanceof Error);
          assert.match(error.message, /server side/);
          assert.match(error.message, /browser/);
          assert.equal(printable(error).includes(secret), false);
          return true;
        },
      );
    } finally {
      delete scope.window;
      delete scope.document;
    }
    assert.ok(clientFor(server().url) instanceof CoregateClient, 'outside a browser the client is built');
  });

  test('the exported TokenProvider, which holds the secret too, also refuses to be built in a browser', () => {
    const scope = globalThis as { window?: unknown; document?: unknown };
    scope.window = {};
    scope.document = {};
    try {
      assert.throws(() => new TokenProvider({ tokenUrl: server().tokenUrl(), clientId: treasury.clientId, clientSecret: secret }), /server side/);
    } finally {
      delete scope.window;
      delete scope.document;
    }
  });
});

// =============================================================================================
// The package entry point: coregate/sdk loads no server code
// =============================================================================================

describe('coregate/sdk entry point', () => {
  const tempDir = mkdtempSync(join(tmpdir(), 'coregate-sdk-import-test-'));
  after(() => rmSync(tempDir, { recursive: true, force: true }));
  const serverPackages = ['fastify', 'kysely', 'pg', 'better-sqlite3'];

  before(() => {
    // These tests run the built package (npm run build); a stale build would test old code.
    const built = join(repoRoot, 'dist/src/sdk/index.js');
    assert.ok(existsSync(built), 'dist/src/sdk/index.js is missing: run `npm run build` first');
    const sources = readdirSync(join(repoRoot, 'src/sdk')).map((name) => statSync(join(repoRoot, 'src/sdk', name)).mtimeMs);
    assert.ok(statSync(built).mtimeMs >= Math.max(...sources), 'dist/ is older than src/sdk: run `npm run build` first');
  });

  /** Imports `specifier` in a child process with a resolve hook; answers every resolution. */
  async function resolutionsOf(specifier: string): Promise<Array<{ specifier: string; url: string }>> {
    const log = join(tempDir, `resolved-${randomUUID()}.jsonl`);
    const hook = join(tempDir, 'hook.mjs');
    writeFileSync(
      hook,
      [
        "import { appendFileSync } from 'node:fs';",
        'let log;',
        'export function initialize(data) { log = data.log; }',
        'export async function resolve(specifier, context, next) {',
        '  const result = await next(specifier, context);',
        "  appendFileSync(log, JSON.stringify({ specifier, url: result.url }) + '\\n');",
        '  return result;',
        '}',
      ].join('\n'),
    );
    const register = `data:text/javascript,${encodeURIComponent(
      `import { register } from 'node:module'; register(${JSON.stringify(pathToFileURL(hook).href)}, { data: { log: ${JSON.stringify(log)} } });`,
    )}`;
    const program = `const m = await import(${JSON.stringify(specifier)}); if (typeof m.CoregateClient !== 'function' && !${JSON.stringify(specifier)}.startsWith('file:')) throw new Error('no CoregateClient export'); process.exit(0);`;
    await new Promise<void>((resolve, reject) => {
      execFile(
        process.execPath,
        ['--import', register, '--input-type=module', '--eval', program],
        { cwd: repoRoot, timeout: 30_000, env: { ...process.env, NODE_OPTIONS: '' } },
        (error, _stdout, stderr) => (error ? reject(new Error(`import ${specifier} failed: ${error.message}\n${stderr}`)) : resolve()),
      );
    });
    return readFileSync(log, 'utf8')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as { specifier: string; url: string });
  }

  const loads = (resolutions: Array<{ specifier: string; url: string }>, name: string) =>
    resolutions.some((entry) => entry.specifier === name || entry.specifier.startsWith(`${name}/`) || entry.url.includes(`/node_modules/${name}/`));

  test('import(\'coregate/sdk\') resolves to the built SDK and loads neither fastify, kysely, pg nor better-sqlite3', async () => {
    const resolutions = await resolutionsOf('coregate/sdk');
    assert.ok(
      resolutions.some((entry) => entry.specifier === 'coregate/sdk' && entry.url.endsWith('/dist/src/sdk/index.js')),
      JSON.stringify(resolutions),
    );
    for (const name of serverPackages) assert.equal(loads(resolutions, name), false, `coregate/sdk loads ${name}: ${JSON.stringify(resolutions)}`);
    const serverCode = resolutions.filter((entry) => /\/dist\/src\/(api|auth|store|core|cli|sandbox|audit)\//.test(entry.url));
    assert.deepEqual(serverCode, [], 'no server module of coregate is loaded');
  });

  test('control: the same hook does see fastify and kysely when the server module is imported, and each database driver when its dialect opens', async () => {
    // The drivers load with the first database of their kind (src/store/engine/open-database.ts).
    const server = await resolutionsOf(pathToFileURL(join(repoRoot, 'dist/src/main.js')).href);
    for (const name of ['fastify', 'kysely']) assert.equal(loads(server, name), true, `the server loads ${name}`);
    const sqlite = await resolutionsOf(pathToFileURL(join(repoRoot, 'dist/src/store/engine/open-sqlite.js')).href);
    assert.equal(loads(sqlite, 'better-sqlite3'), true, 'the SQLite dialect loads better-sqlite3');
    const postgres = await resolutionsOf(pathToFileURL(join(repoRoot, 'dist/src/store/engine/open-postgres.js')).href);
    assert.equal(loads(postgres, 'pg'), true, 'the PostgreSQL dialect loads pg');
    assert.deepEqual(serverPackages.filter((name) => ![...server, ...sqlite, ...postgres].some((entry) => loads([entry], name))), [], 'every package the SDK must not load was seen');
  });
});
