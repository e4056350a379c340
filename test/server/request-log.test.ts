/**
 * issue 12 item 8: one log line per request at info, as the README says: method, route, status,
 * duration, and on the business API the correlation id and the client; never the token.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { depositBody } from '../helpers/bodies.js';
import { initiatePath, send } from '../helpers/http.js';
import { demoToken, startTestServer, type TestServer } from '../helpers/server.js';

const dir = mkdtempSync(join(tmpdir(), 'coregate-request-log-'));
let server: TestServer;
before(async () => {
  server = await startTestServer({ db: `sqlite:${join(dir, 'log.db')}`, deployment: 'embedded' });
});
after(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

test('issue 12 item 8: a business request logs exactly one info line with method, route, status, duration, correlation id and client', async () => {
  const token = await demoToken(server);
  const correlationId = `log-${randomUUID()}`;
  const response = await send(`${server.url}${initiatePath}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'x-correlation-id': correlationId },
    body: JSON.stringify(depositBody()),
  });
  assert.equal(response.status, 200);
  const entries = server.logLines.map((line) => JSON.parse(line) as Record<string, any>);
  const lines = entries.filter((entry) => entry.correlationId === correlationId && entry.level >= 30 && /^request /.test(String(entry.msg)));
  assert.equal(lines.length, 1, JSON.stringify(lines));
  const [line] = lines as [Record<string, any>];
  assert.equal(line.msg, 'request completed');
  assert.equal(line.req.method, 'POST');
  assert.equal(line.route, initiatePath);
  assert.equal(line.res.statusCode, 200);
  assert.equal(typeof line.responseTime, 'number');
  assert.match(String(line.client), /\/realms\/sandbox#treasury-app$/);
  assert.ok(!server.logLines.some((text) => text.includes(token)), 'the token is never logged');
});

test('issue 12 item 8: a route with identifiers logs its template as the route', async () => {
  const response = await send(`${server.url}/v1/term-deposits/TD000000000000001/retrieve`, { headers: { authorization: `Bearer ${await demoToken(server)}` } });
  assert.equal(response.status, 404);
  const line = server.logLines.map((text) => JSON.parse(text) as Record<string, any>).filter((entry) => entry.msg === 'request completed' && entry.req?.url === '/v1/term-deposits/TD000000000000001/retrieve').at(-1);
  assert.match(String(line?.route), /^\/v1\/term-deposits\/:[A-Za-z]+\/retrieve$/);
});
