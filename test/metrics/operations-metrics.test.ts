/**
 * The operations layer reports to the metrics (issue 8, item 6): operations by outcome, core calls
 * by result, the reconciler's backlog and its settlements, limits degraded.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { depositBody } from '../helpers/bodies.js';
import { FaultyCore } from '../helpers/faulty-core.js';
import { initiatePath, send } from '../helpers/http.js';
import { scrape, parseSamples, valueOf } from '../helpers/metrics.js';
import { demoToken, type TestServer } from '../helpers/server.js';
import { describeEachStore } from '../helpers/suite.js';
import { reconcilerIdle } from '../helpers/reconciler.js';

const faulty = new FaultyCore();

const initiate = (server: TestServer, token: string, correlationId: string) =>
  send(`${server.url}${initiatePath}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'x-correlation-id': correlationId },
    body: JSON.stringify(depositBody(1111, '1000000001')),
  });

async function samples(server: TestServer) {
  const answer = await scrape(server.coregate.metricsUrl);
  assert.equal(answer.status, 200);
  return parseSamples(answer.text);
}

describeEachStore(
  'metrics of operations, core calls and the reconciler',
  ({ server }) => {
    test('an executed operation counts Executed and an ok core call with its latency; a 502 counts Unknown, an unavailable call and a backlog of one; the reconciler\'s settlement empties it and counts its final transition once', async () => {
      const token = await demoToken(server());
      assert.equal((await initiate(server(), token, randomUUID())).status, 200);
      let now = await samples(server());
      assert.equal(valueOf(now, 'coregate_operations_total', { operation: 'initiateTermDeposit', outcome: 'Executed' }), 1);
      assert.equal(valueOf(now, 'coregate_core_calls_total', { call: 'initiateTermDeposit', result: 'ok' }), 1);
      assert.equal(valueOf(now, 'coregate_core_call_duration_seconds_count', { call: 'initiateTermDeposit', result: 'ok' }), 1);

      const id = randomUUID();
      assert.equal((await faulty.withFault({ kind: 'unavailable' }, () => initiate(server(), token, id))).status, 502);
      now = await samples(server());
      assert.equal(valueOf(now, 'coregate_operations_total', { operation: 'initiateTermDeposit', outcome: 'Unknown' }), 1);
      assert.equal(valueOf(now, 'coregate_core_calls_total', { call: 'initiateTermDeposit', result: 'unavailable' }), 1);
      assert.equal(valueOf(now, 'coregate_reconciler_backlog', { state: 'unknown' }), 1);

      const unknown = await server().coregate.store.db.selectFrom('operations').select('reference').where('correlation_id', '=', id).executeTakeFirstOrThrow();
      const record = await server().coregate.store.db.selectFrom('operations').selectAll().where('reference', '=', unknown.reference).executeTakeFirstOrThrow();
      assert.equal(record.status, 'Unknown');
      const { findOperation } = await import('../../src/store/operations.js');
      const stored = await findOperation(server().coregate.store.db, unknown.reference);
      if (!stored) throw new Error('operation not found');
      await server().coregate.reconciler.reconcile(stored);
      now = await samples(server());
      assert.equal(valueOf(now, 'coregate_reconciler_backlog', { state: 'unknown' }), 0);
      assert.equal(valueOf(now, 'coregate_reconciler_settled_total', { result: 'Rejected' }), 1);
      // The final transition is counted where it commits (operation-settlement.ts), whoever settled it.
      assert.equal(valueOf(now, 'coregate_operations_total', { operation: 'initiateTermDeposit', outcome: 'Rejected' }), 1);
      assert.equal(valueOf(now, 'coregate_operations_total', { operation: 'initiateTermDeposit', outcome: 'Unknown' }), 1, 'a reconciliation is not another unknown outcome');
      assert.equal(valueOf(now, 'coregate_core_calls_total', { call: 'fence', result: 'ok' }), 1);
      assert.equal(valueOf(now, 'coregate_limits_degraded'), 0);
    });

    test('a repeated correlation id is not a core call (no protocol_error), and a refusal counts as refused', async () => {
      const token = await demoToken(server());
      const before = await samples(server());
      const counted = (now: typeof before, result: string) => valueOf(now, 'coregate_core_calls_total', { call: 'initiateTermDeposit', result }) ?? 0;
      const id = randomUUID();
      // Three at once: two of them lose the correlation claim inside the timed unit of work.
      const racing = await Promise.all([initiate(server(), token, id), initiate(server(), token, id), initiate(server(), token, id)]);
      assert.deepEqual(racing.map((answer) => answer.status).sort(), [200, 409, 409], 'one executes, the repeats are duplicates');
      const poor = await send(`${server().url}${initiatePath}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'x-correlation-id': randomUUID() },
        body: JSON.stringify(depositBody(99_999_999, '1000000001')),
      });
      assert.equal(poor.status, 422, JSON.stringify(poor.body));
      const after = await samples(server());
      assert.equal(counted(after, 'ok') - counted(before, 'ok'), 1, 'one core call for one operation');
      assert.equal(counted(after, 'protocol_error') - counted(before, 'protocol_error'), 0);
      assert.equal(counted(after, 'refused') - counted(before, 'refused'), 1);
    });
  },
  { wrapCore: faulty.wrap, flags: { ...reconcilerIdle } },
);
