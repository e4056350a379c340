/**
 * SIGTERM under load (issue 8): a serve process is stopped while clients keep initiating term
 * deposits. No request is lost or half done: every 200 is an executed operation with exactly one
 * movement, every request cut off by the shutdown left either nothing or a complete outcome, and
 * `coregate check` passes afterwards.
 */
// @lane process: starts coregate processes (docs/testing.md, "Lanes")
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { openStore } from '../../src/store/connect.js';
import { depositBody } from '../helpers/bodies.js';
import { runCli } from '../helpers/cli.js';
import { initiatePath } from '../helpers/http.js';
import { spawnCoregate } from '../helpers/processes.js';
import { demo, postForm } from '../helpers/server.js';
import { sleep } from '../helpers/wait.js';
import { embedded } from '../helpers/stores.js';

const dir = mkdtempSync(join(tmpdir(), 'coregate-sigterm-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Concurrent clients, each sending one request after another until the server is gone. */
const clientsCount = 16;

test('SIGTERM under load: no request lost or half done; every 200 executed once; the process exits 0; check passes', async () => {
  const db = `sqlite:${join(dir, 'coregate.db')}`;
  const serve = await spawnCoregate(['serve', '--data', 'demo/sandbox.json', '--db', db], { env: { COREGATE_SHUTDOWN_GRACE_MS: '10000' } });
  const token = (
    await postForm(`${serve.url}/realms/sandbox/protocol/openid-connect/token`, {
      grant_type: 'client_credentials',
      client_id: demo.treasury.clientId,
      client_secret: demo.treasury.secret,
    })
  ).body.access_token as string;

  const outcomes: Array<{ correlationId: string; status: number | 'network-error' }> = [];
  let stopping = false;
  const client = async () => {
    while (!stopping || outcomes.length < clientsCount * 2) {
      const correlationId = randomUUID();
      try {
        const response = await fetch(`${serve.url}${initiatePath}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'x-correlation-id': correlationId },
          body: JSON.stringify(depositBody(1000, '1000000001')),
        });
        await response.arrayBuffer();
        outcomes.push({ correlationId, status: response.status });
      } catch {
        outcomes.push({ correlationId, status: 'network-error' });
        return;
      }
      if (stopping && outcomes.length >= clientsCount * 2) return;
    }
  };
  const clients = Array.from({ length: clientsCount }, client);
  await sleep(700);
  stopping = true;
  const exited = serve.stop('SIGTERM');
  await Promise.all(clients);
  const { code, signal } = await exited;
  assert.equal(signal, null);
  assert.equal(code, 0, serve.output().stderr);

  const ok = outcomes.filter((outcome) => outcome.status === 200);
  assert.ok(ok.length > 0, 'requests were served before the shutdown');
  // 422: the source account ran out of money (TD-422-002) on a fast machine: a complete refusal.
  for (const outcome of outcomes) {
    assert.ok([200, 422, 503, 'network-error'].includes(outcome.status), `unexpected status ${outcome.status}`);
  }
  const store = await openStore(db);
  try {
    for (const outcome of outcomes) {
      const operation = await store.db.selectFrom('operations').select(['reference', 'status']).where('correlation_id', '=', outcome.correlationId).executeTakeFirst();
      const movements = operation ? (await embedded(store.db).selectFrom('movements').select('id').where('reference', '=', operation.reference).execute()).length : 0;
      if (outcome.status === 200) {
        assert.equal(operation?.status, 'Executed', 'an acknowledged operation is executed');
        assert.equal(movements, 1, 'exactly one movement');
      } else if (outcome.status === 422) {
        assert.equal(operation?.status, 'Rejected', 'a refusal is recorded as rejected');
        assert.equal(movements, 0, 'a refusal moves no money');
      } else {
        // Cut off: nothing at all, or a complete outcome; never an operation without its movement.
        assert.ok(!operation || (operation.status === 'Executed' && movements === 1) || (operation.status === 'Rejected' && movements === 0), JSON.stringify({ outcome, operation, movements }));
      }
    }
  } finally {
    await store.close();
  }
  const check = await runCli(['check', '--db', db]);
  assert.equal(check.code, 0, check.stdout + check.stderr);
});
