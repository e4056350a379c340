/**
 * Every path that settles an operation writes its event (docs/webhooks.md, "The outbox guarantee"),
 * and only a final state does: the pending worker (202), the reconciler settling an unknown outcome
 * from the core (Executed) or fencing it (Rejected), and nothing while the outcome is unknown. The
 * core's faults are injected at the port.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { findOperationByCorrelation, type OperationRecord } from '../../src/store/operations.js';
import { listEventsOf } from '../../src/store/webhooks.js';
import { depositBody } from '../helpers/bodies.js';
import { FaultyCore } from '../helpers/faulty-core.js';
import { initiatePath, send, type HttpResult } from '../helpers/http.js';
import { demoToken, type TestServer } from '../helpers/server.js';
import { describeEachStore } from '../helpers/suite.js';
import { runPendingWorkers } from '../helpers/background.js';
import { reconcilerIdle } from '../helpers/reconciler.js';

const faulty = new FaultyCore();

async function initiate(server: TestServer, correlationId: string, prefer?: string): Promise<HttpResult> {
  const headers: Record<string, string> = { authorization: `Bearer ${await demoToken(server)}`, 'content-type': 'application/json', 'x-correlation-id': correlationId };
  if (prefer) headers.prefer = prefer;
  return send(`${server.url}${initiatePath}`, { method: 'POST', headers, body: JSON.stringify(depositBody()) });
}

async function stored(server: TestServer, correlationId: string): Promise<OperationRecord> {
  const row = await server.coregate.store.db.selectFrom('operations').select('client_key').where('correlation_id', '=', correlationId).executeTakeFirstOrThrow();
  const record = await findOperationByCorrelation(server.coregate.store.db, row.client_key, correlationId);
  if (!record) throw new Error(`no operation for ${correlationId}`);
  return record;
}

async function eventTypes(server: TestServer, reference: string): Promise<string[]> {
  return (await listEventsOf(server.coregate.store.db, { reference })).map((event) => event.type);
}

describeEachStore(
  'an event for every settlement path',
  ({ server }) => {
    test('a 202 executed by the pending worker produces one operation.executed event', async () => {
      const correlationId = randomUUID();
      const response = await initiate(server(), correlationId, 'respond-async');
      assert.equal(response.status, 202);
      await runPendingWorkers(server());
      const record = await stored(server(), correlationId);
      assert.equal(record.status, 'Executed');
      assert.deepEqual(await eventTypes(server(), record.reference), ['operation.executed']);
    });

    test('an unknown outcome writes no event; fenced by the reconciler it becomes Rejected with one operation.rejected event', async () => {
      const correlationId = randomUUID();
      const failed = await faulty.withFault({ kind: 'unavailable' }, () => initiate(server(), correlationId));
      assert.equal(failed.status, 502);
      const unknown = await stored(server(), correlationId);
      assert.equal(unknown.status, 'Unknown');
      assert.deepEqual(await eventTypes(server(), unknown.reference), [], 'no event before a final state');
      const settled = await server().coregate.reconciler.reconcile(unknown);
      assert.equal(settled.status, 'Rejected');
      const [event] = await listEventsOf(server().coregate.store.db, { reference: unknown.reference });
      assert.equal(event?.type, 'operation.rejected');
      const payload = JSON.parse(event?.payload ?? '{}') as { data: { error: { errordetail: Array<{ code: string }> }; correlationId: string } };
      assert.equal(payload.data.error.errordetail[0]?.code, 'TD-502-002');
      assert.equal(payload.data.correlationId, correlationId);
    });

    test('a 202 whose execution met a core failure, executed later by the reconciler, produces one operation.executed event', async () => {
      const correlationId = randomUUID();
      await faulty.withFault({ kind: 'unavailable' }, async () => {
        assert.equal((await initiate(server(), correlationId, 'respond-async')).status, 202);
        await runPendingWorkers(server());
        assert.equal((await stored(server(), correlationId)).status, 'Unknown', 'the worker met the failure');
      });
      const unknown = await stored(server(), correlationId);
      assert.deepEqual(await eventTypes(server(), unknown.reference), []);
      const settled = await server().coregate.reconciler.reconcile(unknown);
      assert.equal(settled.status, 'Executed');
      assert.deepEqual(await eventTypes(server(), unknown.reference), ['operation.executed']);
      // A repeat of the correlation id answers the settled operation (409) and writes nothing more.
      assert.equal((await initiate(server(), correlationId)).status, 409);
      assert.deepEqual(await eventTypes(server(), unknown.reference), ['operation.executed']);
    });
  },
  { wrapCore: faulty.wrap, flags: { coreTimeoutMs: '500', ...reconcilerIdle } },
);
