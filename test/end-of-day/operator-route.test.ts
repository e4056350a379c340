/**
 * The operator route module's answers when the core fails (docs/business-days.md): a remote core
 * that fails is 502, one that does not answer in time 504, each with the operator API's error
 * shape and a message that says what to do; a core refusal (backwards) is 400.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Fastify from 'fastify';
import { BusinessDateBackwards, CoreTimeout, CoreUnavailable, type CoreBankingPort } from '../../src/core/port.js';
import { businessDateRoutes } from '../../src/operator/routes/business-date.js';

function coreThat(advance: () => Promise<never>, businessDate: () => Promise<string> = async () => '2026-03-02'): CoreBankingPort {
  const unused = async (): Promise<never> => {
    throw new Error('not used by the route');
  };
  return {
    constituteTermDeposit: unused,
    findTermDepositConstitution: unused,
    executeLoanInstallment: unused,
    findLoanInstallmentExecution: unused,
    fenceOperation: unused,
    retrieveTermDeposit: unused,
    userStatus: unused,
    workstationStatus: unused,
    ping: unused,
    eventsAfter: unused,
    businessDate,
    advanceBusinessDate: advance,
  };
}

async function advanceWith(core: CoreBankingPort, to = '2026-03-10') {
  const app = Fastify();
  await app.register(businessDateRoutes({ core }), { prefix: '/operator/v1' });
  try {
    return await app.inject({ method: 'POST', url: '/operator/v1/business-date/advance', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ to }) });
  } finally {
    await app.close();
  }
}

test('a remote core that fails during an advance → 502 CORE_UNAVAILABLE saying to try again', async () => {
  const response = await advanceWith(coreThat(async () => { throw new CoreUnavailable('the core answered 500'); }));
  assert.equal(response.statusCode, 502);
  assert.deepEqual(Object.keys(response.json()).sort(), ['message', 'reason', 'status']);
  assert.equal(response.json().status, 502);
  assert.equal(response.json().reason, 'CORE_UNAVAILABLE');
  assert.match(response.json().message, /try again/);
});

test('a remote core that does not answer in time → 504 CORE_TIMEOUT saying the end of day resumes', async () => {
  const response = await advanceWith(coreThat(async () => { throw new CoreTimeout('no answer within 30000 ms'); }));
  assert.equal(response.statusCode, 504);
  assert.equal(response.json().reason, 'CORE_TIMEOUT');
  assert.match(response.json().message, /advance again to resume/);
});

test('a core that refuses the date as backwards (a concurrent advance moved it) → 400; the business date unreachable → 502', async () => {
  const backwards = await advanceWith(coreThat(async () => { throw new BusinessDateBackwards('2026-03-12', '2026-03-10'); }));
  assert.equal(backwards.statusCode, 400);
  assert.match(backwards.json().message, /2026-03-12/);
  const unreachable = await advanceWith(coreThat(async () => { throw new Error('not reached'); }, async () => { throw new CoreUnavailable('refused'); }));
  assert.equal(unreachable.statusCode, 502);
});

test('an advance spanning more than ten years → 400 asking for steps, the core not called', async () => {
  let called = false;
  const response = await advanceWith(coreThat(async () => { called = true; throw new Error('called'); }), '2040-01-01');
  assert.equal(response.statusCode, 400);
  assert.match(response.json().message, /advance in steps/);
  assert.equal(called, false);
});
