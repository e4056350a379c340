/**
 * The outbox guarantee (docs/webhooks.md, "The outbox guarantee"): an event committed with an
 * operation's final state is delivered even when the process dies before delivering it. A real
 * `coregate serve` process registers (from its data file) an endpoint whose receiver is down,
 * settles operations, and is killed with SIGKILL; with the receiver up, a new process on the same
 * store delivers them all.
 */
// @lane process: starts coregate processes (docs/testing.md, "Lanes")
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { listEventsOf } from '../../src/store/webhooks.js';
import { depositBody, depositBodyWithTerms } from '../helpers/bodies.js';
import { readDemoData, tempDirectory, writeTempDataFile } from '../helpers/data-files.js';
import { initiatePath, send } from '../helpers/http.js';
import { freePort, spawnCoregate, type CoregateProcess } from '../helpers/processes.js';
import { demo, postForm } from '../helpers/server.js';
import { withDb, withStore } from '../helpers/stores.js';
import { waitFor } from '../helpers/wait.js';
import { loopbackEnv, Receiver } from './receiver.js';

const secret = `whsec_${Buffer.alloc(32, 42).toString('base64')}`;

describe('the outbox survives a crash between commit and delivery', () => {
  const processes: CoregateProcess[] = [];
  let receiver: Receiver | undefined;
  after(async () => {
    for (const serve of processes) await serve.stop('SIGKILL');
    await receiver?.close();
  });

  test('never lost when the process is killed between commit and delivery: every event arrives after a restart, signed', async () => {
    const receiverPort = await freePort();
    const receiverUrl = `http://127.0.0.1:${receiverPort}/hooks`;
    const data = { ...readDemoData(), webhooks: [{ realm: demo.realm, clientId: demo.treasury.clientId, url: receiverUrl, secret }] };
    const dataFile = writeTempDataFile(data, 'coregate-webhooks-crash-');
    const db = `sqlite:${join(tempDirectory('coregate-webhooks-crash-db-'), 'coregate.db')}`;
    const env = { COREGATE_WEBHOOK_FIRST_RETRY_MS: '200', ...loopbackEnv };
    const first = await spawnCoregate(['serve', '--db', db, '--data', dataFile], { env });
    processes.push(first);

    const token = await postForm(`${first.url}/realms/${demo.realm}/protocol/openid-connect/token`, {
      grant_type: 'client_credentials',
      client_id: demo.treasury.clientId,
      client_secret: demo.treasury.secret,
    });
    assert.equal(token.status, 200);
    const correlationIds: string[] = [];
    for (let index = 0; index < 6; index += 1) {
      const correlationId = randomUUID();
      correlationIds.push(correlationId);
      // Every third one is refused: Rejected events are in the outbox too.
      const body = index % 3 === 2 ? depositBodyWithTerms({ amount: 1500.01, source: '1000000002' }) : depositBody();
      const response = await send(`${first.url}${initiatePath}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token.body.access_token as string}`, 'content-type': 'application/json', 'x-correlation-id': correlationId },
        body: JSON.stringify(body),
      });
      assert.equal(response.status, index % 3 === 2 ? 422 : 200, JSON.stringify(response.body));
    }
    await first.stop('SIGKILL');

    const events = await withStore(db, (store) => listEventsOf(store.db, {}));
    assert.equal(events.length, correlationIds.length, 'one event per final state, committed before the answer');
    receiver = await Receiver.start(receiverPort);
    const second = await spawnCoregate(['serve', '--db', db, '--data', dataFile], { env });
    processes.push(second);
    // Waits on another process (`coregate serve`, spawned): its loops cannot be driven from here.
    const arrived = await waitFor(
      'every event to arrive',
      async () => {
        const ids = new Set(receiver?.received.filter((r) => r.status === 200).map((r) => String(r.headers['webhook-id'])));
        return events.every((event) => ids.has(event.id)) ? ids : undefined;
      },
      // A delivery leased by the killed process waits for its lease to run out (25 s).
      60_000,
    );
    assert.equal(arrived.size, events.length);
    for (const request of receiver.received) new Webhook(secret).verify(request.body, request.headers as Record<string, string>);
    const aboutOperations = new Set(receiver.received.map((r) => r.event.data.correlationId as string));
    assert.deepEqual([...aboutOperations].sort(), [...correlationIds].sort());
  });
});
