/**
 * The sandbox request log keeps no credential whatever the header's name (docs/sandbox.md, "What
 * is not kept"): besides the headers named like credentials (request-log.test.ts), a value that is
 * a JWT, a Bearer/DPoP/Basic credential, a secret shaped like those coregate generates, or the
 * logging client's own secret is replaced by `[redacted: ...]`, in request and response headers.
 * Correlation ids, UUIDs and ordinary values stay as they were sent.
 */
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { generateClientSecret } from '../../src/auth/client-secret.js';
import { createLogger } from '../../src/log.js';
import { credentialShapeOf, redactedValue, RequestLog, type LoggedExchange } from '../../src/sandbox/request-log.js';
import { newEndpointSecret } from '../../src/webhooks/secret.js';
import { systemClock } from '../../src/clock/system-clock.js';
import { depositBody } from '../helpers/bodies.js';
import { initiatePath, send } from '../helpers/http.js';
import { demo, demoToken, startTestServer, type TestServer } from '../helpers/server.js';
import { storeTargets } from '../helpers/stores.js';

const base64url = (text: string) => Buffer.from(text).toString('base64url');
/** A JWT as AWS's ALB sends `x-amzn-oidc-data`: base64 with its padding. */
const paddedJwt = `${Buffer.from('{"typ":"JWT","kid":"k1","alg":"ES256","iss":"alb"}').toString('base64')}.${Buffer.from('{"sub":"1234","email":"a@b.example"}').toString('base64')}.${randomBytes(64).toString('base64')}`;
/** A compact JWE: five segments, the encrypted key empty (`dir`). */
const jwe = `${base64url('{"alg":"dir","enc":"A256GCM"}')}..${randomBytes(12).toString('base64url')}.${randomBytes(40).toString('base64url')}.${randomBytes(16).toString('base64url')}`;

describe('the rules, value by value (credentialShapeOf)', () => {
  test('jwt: a compact JWS or JWE anywhere in a value, padded or not, its payload or signature possibly empty', () => {
    const jws = `${base64url('{"alg":"RS256","kid":"x"}')}.${base64url('{"sub":"svc"}')}.${randomBytes(256).toString('base64url')}`;
    for (const value of [jws, paddedJwt, jwe, `token=${jws}; Path=/`, `${base64url('{"alg":"none"}')}.${base64url('{}')}.`, `${base64url('{"alg":"HS256"}')}..${randomBytes(32).toString('base64url')}`]) {
      assert.equal(credentialShapeOf(value, 'x-jwt'), 'jwt', value);
    }
  });

  test('authorization-credential: Bearer, DPoP or Basic and a credential, in any case, also after a comma', () => {
    for (const value of ['Bearer abc.def', 'bearer x', 'DPoP 2YotnFZFEjr1zCsicMWpAA', 'dpop x', 'Basic dHJlYXN1cnktYXBwOnM=', 'BASIC x', 'Negotiate y, Bearer x']) {
      assert.equal(credentialShapeOf(value, 'x-upstream'), 'authorization-credential', value);
    }
  });

  test('generated-secret: 43 characters of base64url (clients create, rotate-secret, console sessions) and whsec_ webhook secrets', () => {
    for (let attempt = 0; attempt < 50; attempt += 1) {
      const secret = generateClientSecret();
      assert.equal(credentialShapeOf(secret, 'x-client'), 'generated-secret', secret);
      assert.equal(credentialShapeOf(`treasury-app:${secret}`, 'x-client'), 'generated-secret', secret);
    }
    assert.equal(credentialShapeOf(newEndpointSecret(), 'x-webhook'), 'generated-secret');
  });

  test('ordinary values are kept: correlation ids, UUIDs, traceparent, versions, host names, media types, user agents, a 43-character correlation id', () => {
    const ordinary = [
      randomUUID(),
      'try-123456789',
      `00-${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-01`,
      '1.2.3',
      'api.bank.example',
      'application/json; charset=utf-8',
      'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36',
      'undici',
      'gzip, deflate, br',
      '/v1/operations/0190f3c2-7a9e-7cc1-9d2e-52c0a3f0b1d4',
      randomBytes(32).toString('hex'),
      'W/"a1b2c3"',
      'true',
    ];
    for (const value of ordinary) assert.equal(credentialShapeOf(value, 'x-anything'), undefined, value);
    const orderId = 'Order-2026-03-02-BranchSeven-Counter0000001';
    assert.equal(orderId.length, 43);
    assert.equal(credentialShapeOf(orderId, 'x-correlation-id'), undefined, 'a correlation id of 43 characters is the entry\'s own correlation id: kept');
  });
});

describe('the request log of a sandbox server', () => {
  const target = storeTargets[0]!;
  let server: TestServer;
  let drop: (() => Promise<void>) | undefined;
  before(async () => {
    const created = await target.create();
    drop = created.drop;
    server = await startTestServer({ db: created.url, deployment: 'embedded', flags: { sandbox: true } });
  });
  after(async () => {
    await server?.close();
    await drop?.();
  });

  async function logged(correlationId: string, token: string): Promise<Record<string, any>> {
    const listed = await send(`${server.url}/v1/sandbox/requests?correlationId=${correlationId}`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(listed.status, 200, JSON.stringify(listed.body));
    assert.equal(listed.body.requests.length, 1, JSON.stringify(listed.body));
    return listed.body.requests[0] as Record<string, any>;
  }

  test('each rule whatever the header\'s name (x-jwt, x-amzn-oidc-data, ...), the client\'s own secret included; the correlation id, UUIDs and ordinary values are kept; no credential anywhere in the table', async () => {
    const token = await demoToken(server);
    const generated = generateClientSecret();
    const webhookSecret = newEndpointSecret();
    const correlationId = randomUUID();
    const requestId = randomUUID();
    const sent: Record<string, string> = {
      'x-jwt': token,
      'x-amzn-oidc-data': paddedJwt,
      'x-encrypted': jwe,
      'x-upstream': `Bearer ${randomBytes(20).toString('hex')}`,
      'x-proxy-user': `basic ${Buffer.from('treasury-app:pw').toString('base64')}`,
      'x-bound': `DPoP ${randomBytes(20).toString('base64url')}`,
      'x-client': demo.treasury.secret,
      'x-pair': `${demo.treasury.clientId}:${demo.treasury.secret}`,
      'x-rotated': generated,
      'x-webhook': webhookSecret,
      'x-request-id': requestId,
      'x-branch': 'WS-BRANCH-07',
      'user-agent': 'treasury-app/2.3.1 (node)',
    };
    const answer = await send(`${server.url}${initiatePath}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'x-correlation-id': correlationId, ...sent },
      body: JSON.stringify(depositBody()),
    });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));

    const entry = await logged(correlationId, token);
    const headers = entry.request.headers as Record<string, string>;
    assert.deepEqual(
      {
        'x-jwt': headers['x-jwt'],
        'x-amzn-oidc-data': headers['x-amzn-oidc-data'],
        'x-encrypted': headers['x-encrypted'],
        'x-upstream': headers['x-upstream'],
        'x-proxy-user': headers['x-proxy-user'],
        'x-bound': headers['x-bound'],
        'x-client': headers['x-client'],
        'x-pair': headers['x-pair'],
        'x-rotated': headers['x-rotated'],
        'x-webhook': headers['x-webhook'],
      },
      {
        'x-jwt': redactedValue.jwt,
        'x-amzn-oidc-data': redactedValue.jwt,
        'x-encrypted': redactedValue.jwt,
        'x-upstream': redactedValue['authorization-credential'],
        'x-proxy-user': redactedValue['authorization-credential'],
        'x-bound': redactedValue['authorization-credential'],
        'x-client': redactedValue['client-secret'],
        'x-pair': redactedValue['client-secret'],
        'x-rotated': redactedValue['generated-secret'],
        'x-webhook': redactedValue['generated-secret'],
      },
    );
    assert.equal(headers['x-correlation-id'], correlationId);
    assert.equal(headers['x-request-id'], requestId);
    assert.equal(headers['x-branch'], 'WS-BRANCH-07');
    assert.equal(headers['user-agent'], 'treasury-app/2.3.1 (node)');
    assert.equal(headers['content-type'], 'application/json');
    assert.equal(entry.correlationId, correlationId);
    const responseHeaders = entry.response.headers as Record<string, string>;
    assert.equal(responseHeaders['x-correlation-id'], correlationId, 'the answer\'s headers are kept too');

    const rows = await server.coregate.store.db.selectFrom('request_log').selectAll().execute();
    const everything = JSON.stringify(rows);
    for (const [name, value] of Object.entries({ token, paddedJwt, jwe, secret: demo.treasury.secret, generated, webhookSecret, upstream: sent['x-upstream'] ?? '', proxyUser: sent['x-proxy-user'] ?? '', bound: sent['x-bound'] ?? '' })) {
      assert.ok(!everything.includes(value.split(' ').pop() ?? value), `${name} is not in the log table`);
    }
  });

  test('client-secret: only the logging client\'s own secret is recognised (its stored hash); a batch whose clients\' secrets cannot be read is not written, and the log says so', async () => {
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk, _encoding, callback) {
        lines.push(String(chunk));
        callback();
      },
    });
    const logger = createLogger({ level: 'warn', destination });
    const failing = new RequestLog({
      store: server.coregate.store,
      clock: systemClock,
      logger,
      clientSecrets: { hashKey: randomBytes(32), publicUrl: () => server.coregate.publicUrl, client: () => Promise.reject(new Error('snapshot unavailable')) },
    });
    const correlationId = `unreadable-${randomUUID()}`;
    const exchange: LoggedExchange = {
      clientKey: `${server.coregate.publicUrl}/realms/sandbox#${demo.treasury.clientId}`,
      method: 'GET',
      path: '/v1/operations/x',
      status: 404,
      correlationId,
      startedAtMs: Date.now(),
      operationReference: undefined,
      scenario: undefined,
      requestHeaders: { 'x-client': demo.treasury.secret },
      responseHeaders: {},
      requestBody: undefined,
      responseBody: undefined,
    };
    failing.record(exchange);
    await failing.flush();
    const kept = await server.coregate.store.db.selectFrom('request_log').select('id').where('correlation_id', '=', correlationId).execute();
    assert.deepEqual(kept, [], 'nothing written');
    assert.ok(lines.some((line) => line.includes('request log entries not written')), lines.join('\n'));
  });
});
