/**
 * A maturity reaches the client as a signed event, end to end (docs/webhooks.md, "Events"): a
 * deposit through the business API, the business date advanced past its maturity through the
 * operator route, the core's event relayed to the client's endpoint, signed, with the amounts the
 * core repaid. Runs with the embedded core and (COREGATE_TEST_DEPLOYMENT=remote-core) with a remote
 * one.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { Vault } from '../../src/auth/vault.js';
import { verifyWebhook } from '../../src/sdk/index.js';
import { registerEndpoint } from '../../src/webhooks/endpoints.js';
import { relayIntervalMs } from '../../src/webhooks/webhook-service.js';
import { depositBodyWithTerms } from '../helpers/bodies.js';
import { initiatePath, send } from '../helpers/http.js';
import { demo, demoToken } from '../helpers/server.js';
import { describeEachStore } from '../helpers/suite.js';
import { FakeClock } from '../helpers/fake-clock.js';
import { drainWebhooks, loopbackEnv, loopbackTargets, Receiver } from './receiver.js';

/** The instance's clock: the core's events are relayed when the test moves it and drains the webhooks. */
const clock = new FakeClock(Date.now());
const masterKey = 'webhooks-maturity-master-key-0123456789abcdef';

describeEachStore(
  'maturity events end to end',
  ({ server }) => {
    let receiver: Receiver;
    let secret: string;
    before(async () => {
      receiver = await Receiver.start();
      secret = (await registerEndpoint(server().coregate.store.db, new Vault(masterKey), { realm: demo.realm, clientId: demo.treasury.clientId, url: receiver.url }, loopbackTargets, clock.now())).secret;
    });
    after(() => receiver.close());

    test('advancing past a maturity sends one termDeposit.matured event to the client that made the deposit, signed, with principal and interest', async () => {
      const token = await demoToken(server());
      // 10,000.00 USD at 5.25 % for 30 days from 2026-03-02, ACT/360: maturity 2026-04-01, interest 43.75.
      const response = await send(`${server().url}${initiatePath}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'x-correlation-id': randomUUID() },
        body: JSON.stringify(depositBodyWithTerms({ amount: 10000, rate: 5.25, days: 30, valueDate: '2026-03-02' })),
      });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      const contract = String(response.body.termDepositAccount);
      assert.equal(response.body.termDepositPeriod.maturityDate, '2026-04-01');

      const report = await server().coregate.core.advanceBusinessDate('2026-04-02');
      assert.ok(report.maturedDeposits >= 1);

      // The core's event log is read at most every relayIntervalMs: the next relay is due then.
      clock.advance(relayIntervalMs);
      await drainWebhooks(server());
      const matured = receiver.received.filter((request) => request.event.type === 'termDeposit.matured' && request.event.data.contractNumber === contract);
      assert.equal(matured.length, 1, 'one event per maturity');
      const [request] = matured as [(typeof matured)[number]];
      const headers = request.headers as Record<string, string>;
      new Webhook(secret).verify(request.body, headers);
      const event = verifyWebhook(request.body, headers, secret);
      assert.equal(event.type, 'termDeposit.matured');
      assert.deepEqual(event.data.principal, { amount: '10000.00', currency: 'USD' });
      assert.deepEqual(event.data.interest, { amount: '43.75', currency: 'USD' });
      assert.equal(event.data.clientId, demo.treasury.clientId);
      assert.equal(event.data.operationReference, response.body.operationReference);

      const retrieved = await send(`${server().url}/v1/term-deposits/${contract}/retrieve`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(retrieved.body.termDepositStatus, 'Matured');
    });
  },
  { env: { COREGATE_MASTER_KEY: masterKey, ...loopbackEnv }, clock },
);
