/**
 * A refused body keeps its connection when its length was declared and bounded (issue 28,
 * src/skipped-bodies.ts): fastify closed the connection after every 413 and every
 * malformed JSON body, so a client paid a new connection per refusal and, still sending, met a
 * reset. Node reads and discards the rest of a declared body once the answer is sent; past
 * bodySkipBytesMax, or for a chunked body, the connection is still closed. Real sockets through a
 * keep-alive agent against a started server.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Agent, createServer, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { connect } from 'node:net';
import { after, before, test } from 'node:test';
import { bodySkipBytesMax, refusedBodyCanBeSkipped, SkippedBodies } from '../../src/skipped-bodies.js';
import type { FastifyRequest } from 'fastify';
import { depositBody } from '../helpers/bodies.js';
import { initiatePath } from '../helpers/http.js';
import { demoToken, startTestServer, type TestServer } from '../helpers/server.js';
import { storeTargets } from '../helpers/stores.js';

const sqlite = storeTargets.find((target) => target.name === 'sqlite');
let server: TestServer;
let drop: (() => Promise<void>) | undefined;
let token: string;

before(async () => {
  if (!sqlite) throw new Error('no SQLite store target');
  const store = await sqlite.create();
  drop = store.drop;
  server = await startTestServer({ db: store.url, deployment: 'embedded', flags: { sandbox: true } });
  token = await demoToken(server);
});
after(async () => {
  await server?.close();
  await drop?.();
});

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  reusedSocket: boolean;
}

/** One request through `agent`; `body` is written whole, or `sent` bytes of a declared `declared`. */
function exchange(agent: Agent, options: { method: string; path: string; headers?: Record<string, string>; body?: Buffer; declared?: number }): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...options.headers };
    if (options.declared !== undefined) headers['content-length'] = String(options.declared);
    const request = httpRequest(`${server.url}${options.path}`, { method: options.method, headers, agent }, (response) => {
      const parts: Buffer[] = [];
      response.on('data', (part: Buffer) => parts.push(part));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(parts).toString('utf8'), reusedSocket: request.reusedSocket }));
      response.on('error', reject);
    });
    // A reset while the rest of a refused body is still being written is what the closing case shows.
    request.on('error', (error) => ((error as NodeJS.ErrnoException).code === 'EPIPE' || (error as NodeJS.ErrnoException).code === 'ECONNRESET' ? undefined : reject(error)));
    if (options.body) request.write(options.body);
    if (options.declared === undefined) request.end();
  });
}

const businessHeaders = () => ({ authorization: `Bearer ${token}`, 'content-type': 'application/json', 'x-correlation-id': randomUUID() });

function paddedBody(bytes: number): Buffer {
  const base = JSON.stringify({ ...depositBody(), padding: '' });
  return Buffer.from(JSON.stringify({ ...depositBody(), padding: 'x'.repeat(bytes - Buffer.byteLength(base)) }));
}

test('a 413 for a declared body over 64 KiB keeps the connection: the next request on it is answered on the same socket', async () => {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const body = paddedBody(70 * 1024);
    const refused = await exchange(agent, { method: 'POST', path: initiatePath, headers: { ...businessHeaders(), 'content-length': String(body.length) }, body });
    assert.equal(refused.status, 413, refused.body);
    assert.equal((JSON.parse(refused.body) as { reason?: string }).reason, 'PAYLOAD_TOO_LARGE');
    assert.notEqual(refused.headers.connection, 'close');
    const next = await exchange(agent, { method: 'GET', path: '/health/live' });
    assert.equal(next.status, 200);
    assert.equal(next.reusedSocket, true, 'the refused request\'s connection served the next one');
  } finally {
    agent.destroy();
  }
});

test('a 400 for malformed JSON keeps the connection too (its body was read whole)', async () => {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const body = Buffer.from('{"customerReference": ');
    const refused = await exchange(agent, { method: 'POST', path: initiatePath, headers: { ...businessHeaders(), 'content-length': String(body.length) }, body });
    assert.equal(refused.status, 400, refused.body);
    assert.notEqual(refused.headers.connection, 'close');
    const next = await exchange(agent, { method: 'GET', path: '/health/live' });
    assert.equal(next.reusedSocket, true);
  } finally {
    agent.destroy();
  }
});

test(`a declared body over ${bodySkipBytesMax} bytes is not read to keep the connection: 413 with Connection: close`, async () => {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const refused = await exchange(agent, { method: 'POST', path: initiatePath, headers: businessHeaders(), body: Buffer.alloc(16 * 1024, 0x20), declared: bodySkipBytesMax + 1 });
    assert.equal(refused.status, 413, refused.body);
    assert.equal(refused.headers.connection, 'close');
  } finally {
    agent.destroy();
  }
});

test('a chunked body over 64 KiB (its end unknown) is answered 413 with Connection: close', async () => {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const refused = await new Promise<Answer>((resolve, reject) => {
      const request = httpRequest(`${server.url}${initiatePath}`, { method: 'POST', headers: businessHeaders(), agent }, (response) => {
        const parts: Buffer[] = [];
        response.on('data', (part: Buffer) => parts.push(part));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(parts).toString('utf8'), reusedSocket: false }));
      });
      request.on('error', (error) => ((error as NodeJS.ErrnoException).code === 'EPIPE' || (error as NodeJS.ErrnoException).code === 'ECONNRESET' ? undefined : reject(error)));
      const body = paddedBody(80 * 1024);
      request.write(body.subarray(0, 40_000));
      request.write(body.subarray(40_000));
    });
    assert.equal(refused.status, 413, refused.body);
    assert.equal(refused.headers.connection, 'close');
  } finally {
    agent.destroy();
  }
});

test('the skipped rest of a refused body has the request time-out: a client trickling it (slow loris) loses the connection', async () => {
  if (!sqlite) throw new Error('no SQLite store target');
  const store = await sqlite.create();
  const strict = await startTestServer({ db: store.url, deployment: 'embedded', flags: { sandbox: true }, env: { COREGATE_REQUEST_TIMEOUT_MS: '1500', COREGATE_HEADERS_TIMEOUT_MS: '1000' } });
  try {
    const strictToken = await demoToken(strict);
    const url = new URL(strict.url);
    const socket = connect(Number(url.port), url.hostname);
    let received = '';
    socket.on('data', (data: Buffer) => (received += data.toString('latin1')));
    const answered = new Promise<string>((resolve) => socket.once('data', (data: Buffer) => resolve(data.toString('latin1').split('\r\n')[0] ?? '')));
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.on('error', () => undefined);
    socket.write(`POST ${initiatePath} HTTP/1.1\r\nhost: coregate\r\nauthorization: Bearer ${strictToken}\r\ncontent-type: application/json\r\ncontent-length: 500000\r\n\r\n`);
    // 100 bytes every 50 ms: 500,000 bytes would take over four minutes.
    const trickle = setInterval(() => socket.writable && socket.write('x'.repeat(100)), 50);
    try {
      assert.equal(await answered, 'HTTP/1.1 413 Payload Too Large');
      let limit: NodeJS.Timeout | undefined;
      const outcome = await Promise.race([closed.then(() => 'closed by the server'), new Promise((resolve) => (limit = setTimeout(resolve, 20_000, 'still open after 20 s')))]);
      clearTimeout(limit);
      assert.equal(outcome, 'closed by the server');
      assert.equal(received.match(/HTTP\/1\.1 \d{3}/g)?.length, 1, `one answer only (no 408 after the 413): ${received.slice(0, 200)}`);
    } finally {
      clearInterval(trickle);
      socket.destroy();
    }
  } finally {
    await strict.close();
    await store.drop();
  }
});

/** Sends `head`, then `parts` one after another, each once the socket has read `waitFor(i)` answers; answers what came back. */
function rawExchange(url: URL, writes: Array<{ bytes: string; afterAnswers: number }>, answers: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    let received = '';
    let next = 0;
    const count = () => received.match(/HTTP\/1\.1 \d{3}/g)?.length ?? 0;
    const pump = () => {
      while (next < writes.length && count() >= (writes[next] as { afterAnswers: number }).afterAnswers) socket.write((writes[next++] as { bytes: string }).bytes);
    };
    socket.on('data', (data: Buffer) => {
      received += data.toString('latin1');
      pump();
      if (count() >= answers && /\r\n\r\n[^]*$/.test(received)) {
        // Give the last body a moment to arrive whole.
        setTimeout(() => {
          socket.destroy();
          resolve(received);
        }, 50);
      }
    });
    socket.on('error', reject);
    socket.on('connect', pump);
  });
}

test('a refused body whose rest arrives after the answer: the connection serves the next request once the rest is in', async () => {
  const url = new URL(server.url);
  const declared = 300_000;
  const head = `POST ${initiatePath} HTTP/1.1\r\nhost: coregate\r\nauthorization: Bearer ${token}\r\ncontent-type: application/json\r\nx-correlation-id: ${randomUUID()}\r\ncontent-length: ${declared}\r\n\r\n`;
  const received = await rawExchange(url, [
    { bytes: head + 'x'.repeat(100_000), afterAnswers: 0 },
    { bytes: 'x'.repeat(declared - 100_000), afterAnswers: 1 },
    { bytes: 'GET /health/live HTTP/1.1\r\nhost: coregate\r\n\r\n', afterAnswers: 1 },
  ], 2);
  assert.deepEqual(received.match(/HTTP\/1\.1 \d{3}/g), ['HTTP/1.1 413', 'HTTP/1.1 200']);
});

test(`refusedBodyCanBeSkipped: a declared length up to ${bodySkipBytesMax} bytes, nothing else`, () => {
  const of = (length: string | undefined) => refusedBodyCanBeSkipped({ headers: length === undefined ? {} : { 'content-length': length } } as unknown as FastifyRequest);
  assert.equal(of(String(bodySkipBytesMax)), true);
  assert.equal(of(String(bodySkipBytesMax + 1)), false);
  assert.equal(of('0'), true);
  assert.equal(of(undefined), false, 'chunked: its end is unknown');
  for (const odd of ['', ' 10', '10 ', '+10', '1e3', '0x10', '-1', '99999999999999999']) assert.equal(of(odd), false, odd);
});

test('SkippedBodies: a client that hangs up while its refused body is skipped leaves nothing waiting; closeAll closes those still skipping', async () => {
  const skipped = new SkippedBodies();
  const http = createServer((request, response) => {
    skipped.skip(request, 60_000);
    response.statusCode = 413;
    response.end();
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = http.address() as { port: number };
    const open = (): Promise<ReturnType<typeof connect>> =>
      new Promise((resolve) => {
        const socket = connect(port, '127.0.0.1');
        socket.on('error', () => undefined);
        socket.write('POST / HTTP/1.1\r\nhost: x\r\ncontent-length: 1000\r\n\r\n0123456789');
        socket.once('data', () => resolve(socket));
      });
    const leaving = await open();
    assert.equal(skipped.size, 1);
    const gone = new Promise((resolve) => http.once('connection', resolve));
    leaving.destroy();
    for (let i = 0; i < 100 && skipped.size > 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.equal(skipped.size, 0, 'the hang-up ended the wait');
    void gone;
    const staying = await open();
    assert.equal(skipped.size, 1);
    const closed = new Promise((resolve) => staying.once('close', resolve));
    skipped.closeAll();
    await closed;
    assert.equal(skipped.size, 0);
  } finally {
    http.closeAllConnections();
    await new Promise((resolve) => http.close(resolve));
  }
});

test('shutting down closes a connection still skipping a refused body at once, not after the request time-out', async () => {
  if (!sqlite) throw new Error('no SQLite store target');
  const store = await sqlite.create();
  const patient = await startTestServer({ db: store.url, deployment: 'embedded', flags: { sandbox: true }, env: { COREGATE_REQUEST_TIMEOUT_MS: '60000' } });
  let closedAfterMs = Number.POSITIVE_INFINITY;
  try {
    const patientToken = await demoToken(patient);
    const url = new URL(patient.url);
    const socket = connect(Number(url.port), url.hostname);
    socket.on('error', () => undefined);
    const answered = new Promise((resolve) => socket.once('data', resolve));
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.write(`POST ${initiatePath} HTTP/1.1\r\nhost: coregate\r\nauthorization: Bearer ${patientToken}\r\ncontent-type: application/json\r\ncontent-length: 500000\r\n\r\n${'x'.repeat(1000)}`);
    await answered;
    const started = Date.now();
    await patient.close();
    await closed;
    closedAfterMs = Date.now() - started;
  } finally {
    await store.drop();
  }
  assert.ok(closedAfterMs < 20_000, `closed ${closedAfterMs} ms after the shutdown began`);
});
