/**
 * Slow and greedy clients (src/connection-limits.ts, docs/security.md): a connection that sends
 * nothing, or its request head one byte at a time, is closed after the headers time-out while
 * others are served; 500 idle connections do not stop a request; beyond the connection cap new
 * connections are refused, and served again once others close. Real sockets against a started server.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { resolveConfig } from '../../src/config.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { closedWithin, openSocket } from '../helpers/sockets.js';

const dir = mkdtempSync(join(tmpdir(), 'coregate-connections-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const headersTimeoutMs = 600;

async function server(name: string, env: Record<string, string>): Promise<TestServer> {
  return startTestServer({ db: `sqlite:${join(dir, `${name}.db`)}`, env, deployment: 'embedded' });
}

async function ready(url: string): Promise<number> {
  const response = await fetch(`${url}/health/ready`);
  await response.arrayBuffer();
  return response.status;
}

test('headers time-out: a connection that sends nothing, and one that sends its head a byte at a time, are closed; others are served meanwhile', async () => {
  const s = await server('slow', { COREGATE_HEADERS_TIMEOUT_MS: String(headersTimeoutMs) });
  try {
    const silent = await openSocket(s.url);
    const slow = await openSocket(s.url);
    const head = 'GET /health/ready HTTP/1.1\r\nHost: x\r\nX-Slow: ' + 'a'.repeat(100);
    let sent = 0;
    const drip = setInterval(() => {
      if (!slow.destroyed && sent < head.length) slow.write(head[sent++] ?? '');
    }, 50);
    try {
      assert.equal(await ready(s.url), 200, 'served while the slow clients hold their connections');
      // Within 10 s of the time-out: well before node's own check of a started head (every 30 s),
      // so it is the service's limit that closed them, however late a loaded machine runs its timer.
      await Promise.all([closedWithin(silent, headersTimeoutMs + 10_000), closedWithin(slow, headersTimeoutMs + 10_000)]);
    } finally {
      clearInterval(drip);
    }
    assert.equal(await ready(s.url), 200);
  } finally {
    await s.close();
  }
});

test('500 idle connections do not stop a request', async () => {
  const s = await server('idle', {});
  const sockets: Socket[] = [];
  try {
    for (let i = 0; i < 500; i += 1) sockets.push(await openSocket(s.url));
    assert.equal(await ready(s.url), 200);
  } finally {
    for (const socket of sockets) socket.destroy();
    await s.close();
  }
});

test('connection cap: beyond COREGATE_CONNECTIONS_MAX a new connection is refused; once others close, it is served again', async () => {
  const s = await server('cap', { COREGATE_CONNECTIONS_MAX: '5' });
  const sockets: Socket[] = [];
  try {
    for (let i = 0; i < 5; i += 1) sockets.push(await openSocket(s.url));
    const extra = await openSocket(s.url);
    await closedWithin(extra, 3_000);
    for (const socket of sockets.splice(0)) socket.destroy();
    let status = 0;
    for (let attempt = 0; attempt < 20 && status !== 200; attempt += 1) {
      status = await ready(s.url).catch(() => 0);
      if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.equal(status, 200);
  } finally {
    for (const socket of sockets) socket.destroy();
    await s.close();
  }
});

test('a headers time-out longer than the request time-out is refused at start, naming both settings', () => {
  assert.throws(
    () => resolveConfig({}, { COREGATE_HEADERS_TIMEOUT_MS: '40000', COREGATE_REQUEST_TIMEOUT_MS: '30000' }),
    /COREGATE_HEADERS_TIMEOUT_MS \(40000\) must not exceed COREGATE_REQUEST_TIMEOUT_MS \(30000\)/,
  );
  assert.equal(resolveConfig({}, { COREGATE_HEADERS_TIMEOUT_MS: '30000', COREGATE_REQUEST_TIMEOUT_MS: '30000' }).connectionLimits.headersTimeoutMs, 30000);
});
