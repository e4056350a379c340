/**
 * The HTTP adapter (HttpCore) against a fake core at the wire: what it makes of a core that is
 * down, slow, failing or lying. A time-out is CoreTimeout; a refused or reset connection and a 5xx
 * are CoreUnavailable, and so is an answer that breaks the protocol (CoreProtocolViolation, each
 * reported with its kind, field and value); refusals and NotFound are answers, a refusal coregate
 * cannot name included (REJECTED_BY_CORE, reported too). The circuit breaker stops
 * calling a core whose transport keeps failing, never for answers; connections are kept alive and
 * bounded.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { after, describe, test } from 'node:test';
import { termDepositToWire } from '../../src/core-http/codec.js';
import { loanResultToWire } from '../../src/operations/loan-installment-execution/wire.js';
import { CoreProtocolViolation, HttpCore, type HttpCoreOptions, type ProtocolViolationReport } from '../../src/core-http/http-core-adapter.js';
import { errorCatalogue as E } from '../../src/core/error-catalogue.js';
import { CoreSideNotServed, CoreTimeout, CoreUnavailable, type LoanInstallmentResult, type TermDeposit } from '../../src/core/port.js';
import { deposit as depositCommand } from '../port/conformance.js';
import { FakeClock } from '../helpers/fake-clock.js';

const reference = '6f1d6c52-8d2e-4c53-9d4e-2f1b7a3c9e01';

const command = depositCommand({ description: null });

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
  sourceAccount: '1000000001',
  interestAccount: '1000000002',
  description: null,
  operationReference: reference,
  status: 'Active',
  expectedInterestMinor: 1327n,
};

const execution: LoanInstallmentResult = {
  operationId: 'MLO000000000000001',
  executionReference: reference,
  loanId: '7000000001',
  sequence: 1,
  amountMinor: 100_000n,
  commissionMinor: 1000n,
  feeMinor: 2500n,
  taxMinor: 560n,
  currency: 'USD',
  paymentAccount: '1000000001',
  expenseAccount: '1000000002',
  facilityStatus: 'PartiallyExecuted',
  executedAt: '2026-03-02T10:00:00.000Z',
};

const executedBody = (result: Record<string, unknown> = termDepositToWire(deposit) as Record<string, unknown>) => JSON.stringify({ status: 'Executed', result });

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

/** A fake core: answers every request with `handler`; counts requests and connections. */
async function fakeCore(handler: Handler) {
  const sockets = new Set<Socket>();
  let connections = 0;
  let requests = 0;
  let concurrent = 0;
  let concurrentMax = 0;
  const server = createServer((request, response) => {
    requests += 1;
    concurrent += 1;
    concurrentMax = Math.max(concurrentMax, concurrent);
    response.on('close', () => (concurrent -= 1));
    request.resume();
    request.on('end', () => handler(request, response));
  });
  server.on('connection', (socket) => {
    connections += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests: () => requests,
    connections: () => connections,
    concurrentMax: () => concurrentMax,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}

const json = (status: number, body: string, contentType = 'application/json'): Handler => (_request, response) => {
  response.writeHead(status, { 'content-type': contentType }).end(body);
};

/** Runs `work` against a fake core answering with `handler`, then closes both. */
async function against<T>(
  handler: Handler,
  work: (core: HttpCore, fake: Awaited<ReturnType<typeof fakeCore>>) => Promise<T>,
  timeoutMs = 2_000,
  options: Partial<HttpCoreOptions> = {},
): Promise<T> {
  const fake = await fakeCore(handler);
  const core = new HttpCore({ url: fake.url, timeoutMs, ...options });
  try {
    return await work(core, fake);
  } finally {
    await core.close().catch(() => {});
    await fake.close();
  }
}

async function unusedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

describe('HttpCore: answers', () => {
  test('an Executed answer is decoded to domain values: bigint minor units, the catalogue\'s refusal for Rejected, NotFound for 404 {status: NotFound}', async () => {
    await against(json(200, executedBody()), async (core) => {
      assert.deepEqual(await core.constituteTermDeposit(reference, command), { status: 'Executed', result: deposit });
    });
    await against(json(200, JSON.stringify({ status: 'Rejected', refusal: { name: 'insufficientFundsSource', code: 'TD-422-002', message: 'no money' } })), async (core) => {
      const outcome = await core.constituteTermDeposit(reference, command);
      assert.equal(outcome.status, 'Rejected');
      assert.equal(outcome.status === 'Rejected' && outcome.refusal.entry, E.insufficientFundsSource);
      assert.equal(outcome.status === 'Rejected' && outcome.refusal.message, 'no money');
    });
    await against(json(404, JSON.stringify({ status: 'NotFound' })), async (core) => {
      assert.deepEqual(await core.findTermDepositConstitution(reference), { status: 'NotFound' });
      assert.deepEqual(await core.findLoanInstallmentExecution(reference), { status: 'NotFound' });
      assert.equal(await core.retrieveTermDeposit('TD1'), undefined);
      assert.equal(await core.userStatus('nobody'), undefined);
    });
    await against(json(200, executedBody(loanResultToWire(execution) as unknown as Record<string, unknown>)), async (core) => {
      assert.deepEqual(await core.findLoanInstallmentExecution(reference), { status: 'Executed', result: execution });
    });
  });

  test('the command travels as the protocol says: POST to the reference\'s path, amounts as decimal strings of minor units', async () => {
    let seen: { method?: string; url?: string; body?: string } = {};
    const server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk) => (body += String(chunk)));
      request.on('end', () => {
        seen = { method: request.method, url: request.url, body };
        response.writeHead(200, { 'content-type': 'application/json' }).end(executedBody());
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const core = new HttpCore({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/bank-core/`, timeoutMs: 2_000 });
    try {
      await core.constituteTermDeposit(reference, command);
    } finally {
      await core.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
    assert.equal(seen.method, 'POST');
    assert.equal(seen.url, `/bank-core/core/v1/term-deposit-constitutions/${reference}`, 'a path prefix of the core URL is kept');
    const body = JSON.parse(seen.body ?? '{}');
    assert.equal(body.principalMinor, '100000');
    assert.equal(body.numberOfDays, 90);
    assert.equal('maturityDate' in body, false, 'an absent field is left out');
    assert.equal(body.description, null);
  });
});

describe('HttpCore: failures', () => {
  test('connection refused (the core is down) → CoreUnavailable, at once', async () => {
    const core = new HttpCore({ url: await unusedPortUrl(), timeoutMs: 5_000 });
    try {
      const startedAt = Date.now();
      await assert.rejects(core.constituteTermDeposit(reference, command), CoreUnavailable);
      assert.ok(Date.now() - startedAt < 2_000, 'no waiting for the time-out');
      await assert.rejects(core.ping(), CoreUnavailable);
    } finally {
      await core.close();
    }
  });

  test('a connection reset before any answer → CoreUnavailable', async () => {
    await against(
      (request) => request.socket.destroy(),
      async (core) => {
        await assert.rejects(core.constituteTermDeposit(reference, command), CoreUnavailable);
      },
    );
  });

  for (const status of [500, 502, 503, 504]) {
    test(`a ${status} answer → CoreUnavailable, whatever its body`, async () => {
      await against(json(status, executedBody()), async (core) => {
        await assert.rejects(core.constituteTermDeposit(reference, command), CoreUnavailable);
      });
    });
  }

  test('no answer within the time-out → CoreTimeout', async () => {
    await against(
      () => {},
      async (core) => {
        const startedAt = Date.now();
        await assert.rejects(core.constituteTermDeposit(reference, command), CoreTimeout);
        const elapsed = Date.now() - startedAt;
        assert.ok(elapsed >= 280 && elapsed < 2_000, `answered after ${elapsed} ms`);
      },
      300,
    );
  });

  test('headers in time but a body that stalls → CoreTimeout (the time-out covers the body too)', async () => {
    await against(
      (_request, response) => {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.write('{"status":"Exec');
      },
      async (core) => {
        await assert.rejects(core.constituteTermDeposit(reference, command), CoreTimeout);
      },
      300,
    );
  });

  test('the time-out runs on the clock it is given: a held answer is CoreTimeout once a fake clock passes the time-out, and not before', async () => {
    const clock = new FakeClock(Date.now());
    let arrived: () => void = () => {};
    const request = new Promise<void>((resolve) => (arrived = resolve));
    const fake = await fakeCore(() => arrived());
    const core = new HttpCore({ url: fake.url, timeoutMs: 1_000, clock });
    try {
      let settled = false;
      const call = core.constituteTermDeposit(reference, command).finally(() => (settled = true));
      await request;
      clock.advance(999);
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal(settled, false, 'no time-out before the clock reaches it');
      clock.advance(1);
      await assert.rejects(call, CoreTimeout);
    } finally {
      await core.close().catch(() => {});
      await fake.close();
    }
  });

  test('one clock per call: an answer later than the ordinary time-out but within the end of day\'s (advanceTimeoutMs) is the advance\'s report, not CoreUnavailable (undici\'s own head timer, set to the ordinary time-out, once cut it short and raced the time-out into a 502)', async () => {
    const report = { from: '2026-03-02', to: '2026-03-03', daysClosed: ['2026-03-02'], maturedDeposits: 0, overdueInstallments: 0 };
    await against(
      (_request, response) => {
        // Many ordinary time-outs late: a long end of day.
        setTimeout(() => json(200, JSON.stringify(report))(_request, response), 2_500);
      },
      async (core) => {
        assert.deepEqual(await core.advanceBusinessDate('2026-03-03'), report);
      },
      200,
    );
  });

  const result = termDepositToWire(deposit) as Record<string, unknown>;
  const breaches: Array<[string, Handler, ProtocolViolationReport['kind'], string]> = [
    ['a body that is not JSON', json(200, '<html>core says hello</html>'), 'malformed_answer', 'body'],
    ['a JSON body with another Content-Type', json(200, executedBody(), 'text/plain'), 'malformed_answer', 'content-type'],
    ['a body that is not UTF-8', (_request, response) => response.writeHead(200, { 'content-type': 'application/json' }).end(Buffer.from([0x7b, 0xff, 0xfe, 0x7d])), 'malformed_answer', 'body'],
    ['an unknown status word', json(200, JSON.stringify({ status: 'Done', result })), 'malformed_answer', '/status'],
    ['an amount as a JSON number', json(200, executedBody({ ...result, principalMinor: 100000 })), 'malformed_answer', '/result/principalMinor'],
    ['an amount with a leading zero', json(200, executedBody({ ...result, principalMinor: '0100000' })), 'malformed_answer', '/result/principalMinor'],
    ['an amount with decimals', json(200, executedBody({ ...result, principalMinor: '1000.00' })), 'malformed_answer', '/result/principalMinor'],
    ['an amount in exponent notation', json(200, executedBody({ ...result, principalMinor: '1e5' })), 'malformed_answer', '/result/principalMinor'],
    ['a negative amount', json(200, executedBody({ ...result, expectedInterestMinor: '-1' })), 'malformed_answer', '/result/expectedInterestMinor'],
    ['an amount beyond 19 digits', json(200, executedBody({ ...result, principalMinor: '12345678901234567890' })), 'malformed_answer', '/result/principalMinor'],
    ['a date that is not YYYY-MM-DD', json(200, executedBody({ ...result, maturityDate: '01/06/2026' })), 'malformed_answer', '/result/maturityDate'],
    ['a missing field', json(200, executedBody(Object.fromEntries(Object.entries(result).filter(([key]) => key !== 'contractNumber')))), 'malformed_answer', '/result/contractNumber'],
    ['the result of another reference', json(200, executedBody({ ...result, operationReference: 'someone-else' })), 'foreign_answer', '/result/operationReference'],
    ['a status the protocol does not use (201)', json(201, executedBody()), 'unexpected_status', 'status'],
    ['a 404 that is not {status: NotFound} (no such route: a wrong core URL)', json(404, JSON.stringify({ error: 'NO_ROUTE', message: 'No route' })), 'unexpected_status', 'status'],
    ['a 400 (the core refused the command as malformed)', json(400, JSON.stringify({ error: 'BAD_REQUEST', message: 'bad' })), 'unexpected_status', 'status'],
    ['an answer over 256 KiB', json(200, JSON.stringify({ status: 'Executed', result: { ...result, padding: 'x'.repeat(300 * 1024) } })), 'malformed_answer', 'body'],
  ];
  for (const [what, handler, kind, field] of breaches) {
    test(`an answer that breaks the protocol → CoreUnavailable (a CoreProtocolViolation), reported as ${kind} at ${field}: ${what}`, async () => {
      const reports: ProtocolViolationReport[] = [];
      await against(
        handler,
        async (core) => {
          await assert.rejects(core.constituteTermDeposit(reference, command), (error: unknown) => {
            assert.ok(error instanceof CoreUnavailable, String(error));
            assert.ok(error instanceof CoreProtocolViolation, String(error));
            return true;
          });
        },
        2_000,
        { onProtocolViolation: (report) => reports.push(report) },
      );
      assert.equal(reports.length, 1, JSON.stringify(reports));
      const [report] = reports;
      assert.equal(report?.kind, kind);
      assert.equal(report?.field, field);
      assert.equal(report?.settled, false);
      assert.equal(report?.call, 'POST /core/v1/term-deposit-constitutions/:reference');
      assert.equal(report?.reference, reference);
      assert.ok((report?.value ?? '').length <= 64, 'a bounded quote of the answer, never the body');
    });
  }

  test('a lookup that breaks the protocol → CoreUnavailable, never NotFound (a reconciler must not execute again on a lie)', async () => {
    await against(json(404, JSON.stringify({ status: 'Gone' })), async (core) => {
      await assert.rejects(core.findTermDepositConstitution(reference), CoreUnavailable);
      await assert.rejects(core.findLoanInstallmentExecution(reference), CoreUnavailable);
    });
  });

  test('fields a reader does not know are ignored (a newer core may add some)', async () => {
    await against(json(200, executedBody({ ...result, branch: 'HQ' })), async (core) => {
      assert.deepEqual(await core.constituteTermDeposit(reference, command), { status: 'Executed', result: deposit });
    });
  });

  test('ping: 200 {status: ready} resolves; 503 → CoreUnavailable', async () => {
    await against(json(200, JSON.stringify({ status: 'ready' })), async (core) => {
      await core.ping();
    });
    await against(json(503, JSON.stringify({ status: 'unavailable' })), async (core) => {
      await assert.rejects(core.ping(), CoreUnavailable);
    });
  });
});

describe('HttpCore: a Rejected answer is final even when coregate cannot name its refusal (REJECTED_BY_CORE)', () => {
  const rejected = (name: string, code: string, message = 'the account is frozen') => json(200, JSON.stringify({ status: 'Rejected', refusal: { name, code, message } }));
  const cases: Array<[string, Handler, ProtocolViolationReport['kind'], string, string, 'TD' | 'ML']> = [
    ['a name the catalogue does not know', rejected('accountFrozen', 'TD-422-077'), 'unknown_refusal', 'refusal.name', 'accountFrozen', 'TD'],
    ['a known name of the other family (a loan\'s refusal for a term deposit)', rejected('facilityNotFound', 'ML-404-001'), 'refusal_family_mismatch', 'refusal.name', 'facilityNotFound', 'TD'],
    ['a known name with a code of the other family', rejected('insufficientFundsSource', 'ML-422-002'), 'refusal_family_mismatch', 'refusal.code', 'ML-422-002', 'TD'],
    ['a name whose code disagrees (another entry\'s)', rejected('insufficientFundsSource', 'TD-422-003'), 'refusal_code_mismatch', 'refusal.code', 'TD-422-003', 'TD'],
    ['a loan refused with a name the catalogue does not know', rejected('collateralMissing', 'ML-422-042'), 'unknown_refusal', 'refusal.name', 'collateralMissing', 'ML'],
  ];
  for (const [what, handler, kind, field, value, family] of cases) {
    test(`${what} → Rejected with REJECTED_BY_CORE (${family}-422-091), its message quoting the core's name, code and message; reported as ${kind} at ${field}`, async () => {
      const reports: ProtocolViolationReport[] = [];
      await against(
        handler,
        async (core) => {
          const outcome = family === 'TD' ? await core.constituteTermDeposit(reference, command) : await core.executeLoanInstallment(reference, { loanId: '7000000001', sequence: 1, loanType: 'CRDE', parameterType: 'DocumentaryRemittance', maturityDate: undefined, amountMinor: 100n, currency: 'USD', paymentAccount: '1000000001', expenseAccount: '1000000002' });
          assert.equal(outcome.status, 'Rejected');
          const refusal = outcome.status === 'Rejected' ? outcome.refusal : undefined;
          assert.equal(refusal?.entry, E.unrecognisedCoreRefusal);
          assert.ok(refusal?.message.includes('the account is frozen'), refusal?.message);
          assert.ok(refusal?.message.includes(value), refusal?.message);
          // A lookup answers the same: the reference's outcome is the refusal.
          const found = family === 'TD' ? await core.findTermDepositConstitution(reference) : await core.findLoanInstallmentExecution(reference);
          assert.equal(found.status === 'Rejected' && found.refusal.entry, E.unrecognisedCoreRefusal);
        },
        2_000,
        { onProtocolViolation: (report) => reports.push(report) },
      );
      assert.equal(reports.length, 2, 'the command and the lookup');
      for (const report of reports) {
        assert.equal(report.kind, kind);
        assert.equal(report.field, field);
        assert.equal(report.value, value);
        assert.equal(report.settled, true);
        assert.equal(report.reference, reference);
      }
    });
  }

  test('the core\'s message is quoted bounded and sanitised: no control or format characters, at most 200 characters of it', async () => {
    const message = `frozen\u0000\u001b[31m by\r\nthe\u202eteam ${'é'.repeat(500)}`;
    await against(rejected('accountFrozen', 'TD-422-077', message), async (core) => {
      const outcome = await core.constituteTermDeposit(reference, command);
      const text = outcome.status === 'Rejected' ? outcome.refusal.message : '';
      assert.doesNotMatch(text, /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u, JSON.stringify(text));
      assert.match(text, /"frozen \[31m by the team é+…"/);
      assert.ok(text.length < 400, `${text.length} characters`);
    });
  });
});

describe('HttpCore: a Rejected answer whose refusal breaks the schema is still final; the API\'s own answers are never a core\'s refusal', () => {
  const rejectedWith = (refusal: unknown): Handler => json(200, JSON.stringify({ status: 'Rejected', refusal }));
  const cases: Array<[string, unknown, string, string]> = [
    ['a name in the catalogue\'s reason style (INSUFFICIENT_FUNDS_SOURCE_ACCOUNT)', { name: 'INSUFFICIENT_FUNDS_SOURCE_ACCOUNT', code: 'TD-422-002', message: 'no funds' }, 'refusal.name', 'INSUFFICIENT_FUNDS_SOURCE_ACCOUNT'],
    ['a code that is no code of the protocol ("422")', { name: 'insufficientFundsSource', code: '422', message: 'no funds' }, 'refusal.code', '422'],
    ['a name that is not text', { name: 42, code: 'TD-422-002', message: 'no funds' }, 'refusal.name', '42'],
    ['one of the API\'s own answers (coreTimeout)', { name: 'coreTimeout', code: 'TD-504-001', message: 'slow' }, 'refusal.name', 'coreTimeout'],
    ['one of the API\'s own answers (duplicateCorrelationId)', { name: 'duplicateCorrelationId', code: 'TD-409-001', message: 'again' }, 'refusal.name', 'duplicateCorrelationId'],
  ];
  for (const [what, refusal, field, value] of cases) {
    test(`${what} → Rejected with REJECTED_BY_CORE (TD-422-091), reported at ${field}: never an unknown outcome`, async () => {
      const reports: ProtocolViolationReport[] = [];
      await against(
        rejectedWith(refusal),
        async (core) => {
          const outcome = await core.constituteTermDeposit(reference, command);
          assert.equal(outcome.status === 'Rejected' && outcome.refusal.entry, E.unrecognisedCoreRefusal);
          assert.equal(core.circuitState, 'closed');
        },
        2_000,
        { onProtocolViolation: (report) => reports.push(report) },
      );
      assert.equal(reports.length, 1);
      assert.equal(reports[0]?.field, field);
      assert.equal(reports[0]?.value, value);
      assert.equal(reports[0]?.settled, true);
    });
  }

  test('a known refusal with a message over 2,048 characters is that refusal, its message cut; control characters are never quoted', async () => {
    const message = `no\u001b[31m funds ${'x'.repeat(3_000)}`;
    await against(rejectedWith({ name: 'insufficientFundsSource', code: 'TD-422-002', message }), async (core) => {
      const outcome = await core.constituteTermDeposit(reference, command);
      const refusal = outcome.status === 'Rejected' ? outcome.refusal : undefined;
      assert.equal(refusal?.entry, E.insufficientFundsSource);
      assert.ok((refusal?.message.length ?? 0) <= 2_048);
      assert.doesNotMatch(refusal?.message ?? '', /\p{Cc}/u);
    });
  });

  test('a Rejected without a refusal object is malformed: the outcome stays unknown (502)', async () => {
    await against(json(200, JSON.stringify({ status: 'Rejected' })), async (core) => {
      await assert.rejects(core.constituteTermDeposit(reference, command), CoreProtocolViolation);
    });
  });
});

describe('HttpCore: the optional sides never open the breaker the operations go through', () => {
  test('a core that serves no business-date advance: NO_ROUTE is CoreSideNotServed, not a violation', async () => {
    const reports: ProtocolViolationReport[] = [];
    await against(
      json(404, JSON.stringify({ error: 'NO_ROUTE', message: 'no such route' })),
      async (core) => {
        await assert.rejects(core.advanceBusinessDate('2026-03-03'), (error: Error) => error instanceof CoreSideNotServed && error.side === 'advance');
      },
      2_000,
      { onProtocolViolation: (report) => reports.push(report) },
    );
    assert.deepEqual(reports, []);
  });

  test('read-side and advance failures (5xx, time-outs) leave the breaker closed; operations\' failures still open it', async () => {
    await against(
      json(503, '{}'),
      async (core) => {
        for (let attempt = 0; attempt < 8; attempt += 1) {
          await assert.rejects(core.checkLedger(10), CoreUnavailable);
          await assert.rejects(core.advanceBusinessDate('2026-03-03'), CoreUnavailable);
        }
        assert.equal(core.circuitState, 'closed', 'sixteen optional failures');
        for (let attempt = 0; attempt < 5; attempt += 1) await assert.rejects(core.constituteTermDeposit(reference, command), CoreUnavailable);
        assert.equal(core.circuitState, 'open');
      },
      2_000,
      { circuit: { failuresMax: 5, coolDownMs: 60_000 } },
    );
  });
});

describe('HttpCore: circuit breaker', () => {
  test('5 consecutive failures open the breaker: the next calls answer CoreUnavailable at once, without a network call; the state is exposed', async () => {
    await against(json(503, '{}'), async (core, fake) => {
      for (let attempt = 0; attempt < 5; attempt += 1) await assert.rejects(core.constituteTermDeposit(reference, command), CoreUnavailable);
      assert.equal(fake.requests(), 5);
      assert.equal(core.circuitState, 'open');
      const startedAt = Date.now();
      await assert.rejects(core.constituteTermDeposit(reference, command), /circuit open/);
      await assert.rejects(core.findTermDepositConstitution(reference), CoreUnavailable);
      await assert.rejects(core.ping(), CoreUnavailable);
      assert.ok(Date.now() - startedAt < 100, 'answered at once');
      assert.equal(fake.requests(), 5, 'no request reached the core while the breaker is open');
    });
  });

  test('after the cool-down one trial call reaches the core; its success closes the breaker', async () => {
    let healthy = false;
    const states: string[] = [];
    const fake = await fakeCore((_request, response) => {
      if (healthy) response.writeHead(200, { 'content-type': 'application/json' }).end(executedBody());
      else response.writeHead(503).end();
    });
    // The cool-down runs on the clock the core is given: the test moves it instead of sleeping.
    const clock = new FakeClock(Date.now());
    const core = new HttpCore({ url: fake.url, timeoutMs: 2_000, clock, circuit: { failuresMax: 2, coolDownMs: 200 }, onCircuitStateChange: (state) => states.push(state) });
    try {
      await assert.rejects(core.constituteTermDeposit(reference, command), CoreUnavailable);
      await assert.rejects(core.constituteTermDeposit(reference, command), CoreUnavailable);
      assert.equal(core.circuitState, 'open');
      healthy = true;
      await assert.rejects(core.constituteTermDeposit(reference, command), /circuit open/);
      assert.equal(fake.requests(), 2);
      clock.advance(199);
      await assert.rejects(core.constituteTermDeposit(reference, command), /circuit open/, 'still open 1 ms before the cool-down ends');
      assert.equal(fake.requests(), 2);
      clock.advance(1);
      assert.equal((await core.constituteTermDeposit(reference, command)).status, 'Executed');
      assert.equal(core.circuitState, 'closed');
      assert.equal(fake.requests(), 3);
      assert.deepEqual(states, ['open', 'half-open', 'closed']);
    } finally {
      await core.close();
      await fake.close();
    }
  });

  test('a protocol violation never counts toward the circuit breaker: ten refusals coregate cannot name in a row, then ten malformed answers in a row, leave it closed, and a well-formed call then answers', async () => {
    let answer = JSON.stringify({ status: 'Rejected', refusal: { name: 'accountFrozen', code: 'TD-422-077', message: 'x' } });
    const states: string[] = [];
    await against(
      (_request, response) => response.writeHead(200, { 'content-type': 'application/json' }).end(answer),
      async (core, fake) => {
        for (let call = 0; call < 10; call += 1) assert.equal((await core.constituteTermDeposit(reference, command)).status, 'Rejected');
        assert.equal(core.circuitState, 'closed');
        answer = '<html>502 Bad Gateway</html>';
        for (let call = 0; call < 10; call += 1) await assert.rejects(core.findTermDepositConstitution(reference), CoreProtocolViolation);
        assert.equal(core.circuitState, 'closed');
        answer = executedBody();
        assert.equal((await core.constituteTermDeposit(reference, command)).status, 'Executed');
        assert.equal(fake.requests(), 21, 'every call reached the core');
      },
      2_000,
      { circuit: { failuresMax: 5, coolDownMs: 5_000 }, onCircuitStateChange: (state) => states.push(state) },
    );
    assert.deepEqual(states, [], 'the breaker never moved');
  });

  test('refusals, NotFound and time-outs: refusals and NotFound are answers that never open the breaker; time-outs are failures that do', async () => {
    await against(json(200, JSON.stringify({ status: 'Rejected', refusal: { name: 'customerNotFound', code: 'TD-404-001', message: 'x' } })), async (core) => {
      for (let attempt = 0; attempt < 8; attempt += 1) assert.equal((await core.constituteTermDeposit(reference, command)).status, 'Rejected');
      assert.equal(core.circuitState, 'closed');
    });
    await against(json(404, JSON.stringify({ status: 'NotFound' })), async (core) => {
      for (let attempt = 0; attempt < 8; attempt += 1) assert.equal((await core.findTermDepositConstitution(reference)).status, 'NotFound');
      assert.equal(core.circuitState, 'closed');
    });
    await against(
      () => {},
      async (core) => {
        for (let attempt = 0; attempt < 5; attempt += 1) await assert.rejects(core.findTermDepositConstitution(reference), CoreTimeout);
        assert.equal(core.circuitState, 'open');
      },
      50,
    );
  });
});

describe('HttpCore: connections', () => {
  const fakes: Array<{ close(): Promise<void> }> = [];
  after(async () => {
    for (const fake of fakes) await fake.close();
  });

  test('calls share keep-alive connections, at most connectionsMax at a time; the others queue', async () => {
    const fake = await fakeCore((_request, response) => {
      setTimeout(() => response.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ status: 'NotFound' })), 20);
    });
    fakes.push(fake);
    const core = new HttpCore({ url: fake.url, timeoutMs: 5_000, connectionsMax: 4 });
    try {
      const answers = await Promise.all(Array.from({ length: 40 }, () => core.findTermDepositConstitution(reference)));
      assert.ok(answers.every((answer) => answer.status === 'NotFound'));
      assert.equal(fake.requests(), 40);
      assert.ok(fake.connections() <= 4, `${fake.connections()} connections`);
      assert.ok(fake.concurrentMax() <= 4, `${fake.concurrentMax()} requests at once`);
      await core.findTermDepositConstitution(reference);
      assert.ok(fake.connections() <= 4, 'a later call reuses a kept-alive connection');
    } finally {
      await core.close();
    }
  });

  test('the core URL must be http(s) and the time-out positive', () => {
    assert.throws(() => new HttpCore({ url: 'ftp://core', timeoutMs: 1_000 }));
    assert.throws(() => new HttpCore({ url: 'http://core', timeoutMs: 0 }));
  });
});
