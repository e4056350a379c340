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
    test('an executed operation counts Executed and an ok core call with its latency; a 502 counts Unknown, an unavailable call and a backlog of one; the reconciler\'s settlement empties it', async () => {
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
      assert.equal(valueOf(now, 'coregate_core_calls_total', { call: 'fence', result: 'ok' }), 1);
      assert.equal(valueOf(now, 'coregate_limits_degraded'), 0);
    });
  },
  { wrapCore: faulty.wrap, flags: { reconcileIntervalMs: '3600000' } },
);
