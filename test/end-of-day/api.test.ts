/**
 * Business days through the business API and the operator route module
 * (docs/business-days.md), on each store and in each deployment (COREGATE_TEST_DEPLOYMENT: the
 * embedded core, or the API in front of a remote core): the route module registered on a bare
 * Fastify instance over the API's own core port, the retrieve showing Matured, the value-date rule
 * on the moved date, and a second API instance on the same PostgreSQL database seeing the new date.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { businessDateRoutes } from '../../src/operator/routes/business-date.js';
import { depositBodyWithTerms, type DepositTerms } from '../helpers/bodies.js';
import { send } from '../helpers/http.js';
import { demo, startTestServer, type TestServer } from '../helpers/server.js';
import { storeTargets } from '../helpers/stores.js';
import { describeEachStore } from '../helpers/suite.js';
import { cachedTokens } from '../helpers/tokens.js';

function client(server: () => TestServer) {
  const token = cachedTokens(server, { treasury: { client: demo.treasury, extra: {} } });
  return {
    async initiate(terms: DepositTerms) {
      return send(`${server().url}/v1/term-deposits/initiate`, {
        method: 'POST',
        headers: { authorization: `Bearer ${await token('treasury')}`, 'content-type': 'application/json', 'x-correlation-id': `eod-${randomUUID()}` },
        body: JSON.stringify(depositBodyWithTerms(terms)),
      });
    },
    async retrieve(id: string) {
      return send(`${server().url}/v1/term-deposits/${id}/retrieve`, { headers: { authorization: `Bearer ${await token('treasury')}` } });
    },
  };
}

describeEachStore('business days through the operator route module and the business API', ({ server }) => {
  let operator: FastifyInstance;
  const api = client(server);
  before(async () => {
    operator = Fastify();
    await operator.register(businessDateRoutes({ core: server().coregate.core }), { prefix: '/operator/v1' });
    await operator.ready();
  });
  after(async () => {
    await operator.close();
  });
  const advance = (payload: unknown) =>
    operator.inject({ method: 'POST', url: '/operator/v1/business-date/advance', headers: { 'content-type': 'application/json' }, payload: JSON.stringify(payload) });

  test('GET /business-date answers the data file\'s date', async () => {
    const response = await operator.inject({ method: 'GET', url: '/operator/v1/business-date' });
    assert.equal(response.statusCode, 200);
    assert.deepEqual(response.json(), { businessDate: '2026-03-02' });
  });

  test('POST /business-date/advance with a body that is no date → 400 {status, reason, message}', async () => {
    for (const payload of [{}, { to: '2026-02-30' }, { to: 20260401 }, { to: '01/04/2026' }]) {
      const response = await advance(payload);
      assert.equal(response.statusCode, 400, JSON.stringify(payload));
      const body = response.json();
      assert.equal(body.status, 400);
      assert.equal(body.reason, 'VALIDATION_ERROR');
      assert.match(body.message, /YYYY-MM-DD/);
    }
  });

  test('a deposit initiated through the API matures when the date advances past its maturity: the retrieve shows Matured', async () => {
    const initiated = await api.initiate({ days: 30, amount: 1500, interest: '1000000002' }); // matures Wednesday 2026-04-01
    assert.equal(initiated.status, 200, JSON.stringify(initiated.body));
    const id = (initiated.body as { termDepositAccount: string }).termDepositAccount;
    const response = await advance({ to: '2026-04-02' });
    assert.equal(response.statusCode, 200, response.body);
    const report = response.json();
    assert.equal(report.from, '2026-03-02');
    assert.equal(report.to, '2026-04-02');
    assert.equal(report.daysClosed.at(-1), '2026-04-01');
    assert.ok(report.maturedDeposits >= 1);
    assert.ok(report.overdueInstallments >= 1, 'the demo facility\'s installment due 2026-03-31 is overdue');
    const retrieved = await api.retrieve(id);
    assert.equal(retrieved.status, 200, JSON.stringify(retrieved.body));
    const body = retrieved.body as { termDepositStatus: string; expectedInterestAmount: { amountValue: number } };
    assert.equal(body.termDepositStatus, 'Matured');
    // 1500.00 × 5.25 % × 30 / 360 = 6.5625 → 6.56
    assert.equal(body.expectedInterestAmount.amountValue, 6.56);
    assert.deepEqual((await operator.inject({ method: 'GET', url: '/operator/v1/business-date' })).json(), { businessDate: '2026-04-02' });
  });

  test('backwards → 400 naming both dates; the date is unchanged', async () => {
    const response = await advance({ to: '2026-03-31' });
    assert.equal(response.statusCode, 400);
    assert.equal(response.json().reason, 'VALIDATION_ERROR');
    assert.match(response.json().message, /2026-04-02.*2026-03-31|2026-03-31.*2026-04-02/);
    assert.equal((await advance({ to: '2026-04-02' })).json().daysClosed.length, 0, 'the current date: a no-op');
  });

  test('after the advance the API refuses a value date before the new business date and accepts it on the date', async () => {
    const refused = await api.initiate({ valueDate: '2026-04-01' });
    assert.equal(refused.status, 422, JSON.stringify(refused.body));
    assert.match(JSON.stringify(refused.body), /VALUE_DATE_BEFORE_BUSINESS_DATE|before the core's business date/);
    const accepted = await api.initiate({ valueDate: '2026-04-02' });
    assert.equal(accepted.status, 200, JSON.stringify(accepted.body));
  });
});

const postgres = storeTargets.find((target) => target.name === 'postgres');
describe('a second API instance on the same PostgreSQL database sees the advanced date at once', { skip: postgres?.skip }, () => {
  let created: { url: string; drop(): Promise<void> } | undefined;
  let first: TestServer | undefined;
  let second: TestServer | undefined;
  before(async () => {
    if (!postgres) throw new Error('no PostgreSQL target');
    created = await postgres.create();
    first = await startTestServer({ db: created.url });
    second = await startTestServer({ db: created.url });
  });
  after(async () => {
    await second?.close();
    await first?.close();
    await created?.drop();
  });

  test('advance through the first instance\'s core; the second refuses a value date before the new date, with no restart', async () => {
    const api = client(() => second as TestServer);
    assert.equal((await api.initiate({ valueDate: '2026-03-03' })).status, 200, 'before the advance, 2026-03-03 is a valid value date');
    const report = await (first as TestServer).coregate.core.advanceBusinessDate('2026-03-10');
    assert.equal(report.to, '2026-03-10');
    assert.equal(await (second as TestServer).coregate.core.businessDate(), '2026-03-10');
    const refused = await api.initiate({ valueDate: '2026-03-09' });
    assert.equal(refused.status, 422, JSON.stringify(refused.body));
    assert.match(JSON.stringify(refused.body), /2026-03-10/);
    assert.equal((await api.initiate({ valueDate: '2026-03-10' })).status, 200);
  });
});
