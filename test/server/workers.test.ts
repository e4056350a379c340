/**
 * `coregate serve --workers 2`: two processes serve one port. The primary prepares the store
 * once; both workers answer; a correlation id raced across them executes once (docs/api.md,
 * "Correlation ids and duplicates"; docs/deployment.md, "Several instances behind a load balancer");
 * the audit chain holds; SIGTERM stops every worker and the primary exits 0.
 */
// @lane process: starts coregate processes (docs/testing.md, "Lanes")
// @starts-early: among the slowest files of a quiet run
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { depositBody } from '../helpers/bodies.js';
import { spawnCoregate, type CoregateProcess } from '../helpers/processes.js';
import { demo } from '../helpers/server.js';
import { storeTargets, withStore } from '../helpers/stores.js';
import { waitFor } from '../helpers/wait.js';
import { verifyAuditChain } from '../../src/audit/chain.js';

interface LogLine {
  msg?: string;
  worker?: number;
}

function logLines(serve: CoregateProcess): LogLine[] {
  return serve
    .output()
    .stdout.split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogLine);
}

async function token(url: string): Promise<string> {
  const response = await fetch(`${url}/realms/${demo.realm}/protocol/openid-connect/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: demo.treasury.clientId, client_secret: demo.treasury.secret }),
  });
  assert.equal(response.status, 200);
  return ((await response.json()) as { access_token: string }).access_token;
}

for (const target of storeTargets) {
  test(`serve --workers 2 [${target.name}]: one store preparation, both workers answer, a raced correlation id executes once, SIGTERM stops all`, { skip: target.skip, timeout: 120_000 }, async () => {
    const store = await target.create();
    let serve: CoregateProcess | undefined;
    try {
      serve = await spawnCoregate(['serve', '--workers', '2', '--data', 'demo/sandbox.json', '--db', store.url]);
      const url = serve.url;
      // The URL answers once one worker listens; the primary hands connections to those that do.
      // Both must be serving before the requests, or a slow second start leaves them all to the first.
      const started = serve;
      await waitFor('both workers serving', async () => (logLines(started).some((line) => line.msg === 'all workers are serving') ? true : undefined), 60_000);
      const bearer = await token(url);
      const correlationId = `workers-${Date.now()}`;
      const body = JSON.stringify(depositBody());
      // Many connections: the kernel spreads them over both workers.
      const answers = await Promise.all(
        Array.from({ length: 40 }, () =>
          fetch(`${url}/v1/term-deposits/initiate`, {
            method: 'POST',
            headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json', 'x-correlation-id': correlationId, connection: 'close' },
            body,
          }).then((response) => response.status),
        ),
      );
      assert.equal(answers.filter((status) => status === 200).length, 1, `one execution: ${answers.join(' ')}`);
      assert.ok(answers.every((status) => status === 200 || status === 409), answers.join(' '));
      for (let i = 0; i < 40; i++) await (await fetch(`${url}/health/ready`, { headers: { connection: 'close' } })).arrayBuffer();

      const lines = logLines(serve);
      assert.equal(lines.filter((line) => line.msg === 'sandbox data loaded').length, 1, 'the primary loaded the data file once');
      const servedBy = new Set(lines.filter((line) => line.msg === 'request completed').map((line) => line.worker));
      assert.deepEqual([...servedBy].sort(), [1, 2], 'both workers answered');

      const stopped = await serve.stop('SIGTERM');
      serve = undefined;
      assert.equal(stopped.code, 0);
      await withStore(store.url, async (opened) => {
        const deposits = await opened.db.selectFrom('operations').select('reference').where('correlation_id', '=', correlationId).execute();
        assert.equal(deposits.length, 1);
        const chain = await verifyAuditChain(opened);
        assert.equal(chain.ok, true, JSON.stringify(chain.problem));
      });
    } finally {
      await serve?.stop('SIGKILL');
      await store.drop();
    }
  });
}
