/**
 * `GET /metrics` on the main port (docs/metrics.md, "Where it is served"), in the Prometheus text
 * format, on each store, over real HTTP after real traffic (a token request, a term deposit
 * initiation, an unknown route); never a secret, a token or a customer's data in it.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { before, test } from 'node:test';
import { insertAuditEntry } from '../../src/store/audit.js';
import { depositBody } from '../helpers/bodies.js';
import { initiatePath, send, type HttpResult } from '../helpers/http.js';
import { parseSamples, samplesOf, scrape, valueOf } from '../helpers/metrics.js';
import { demo, postForm } from '../helpers/server.js';
import { describeEachStore } from '../helpers/suite.js';

const tokenRoute = '/realms/:realm/protocol/openid-connect/token';

describeEachStore('GET /metrics on the main port', ({ server, target }) => {
  const correlationId = `metrics-test-${randomUUID()}`;
  const sourceAccount = '1000000001';
  const interestAccount = '1000000002';
  const customerReference = 'C0001';
  const unknownPathAccount = '1000000009';
  let accessToken = '';
  let initiation: HttpResult | undefined;

  // The traffic every test below reads: one token, one initiation and its retrieve, one unknown route, one unknown realm.
  before(async () => {
    const token = await postForm(server().tokenUrl(), {
      grant_type: 'client_credentials',
      client_id: demo.treasury.clientId,
      client_secret: demo.treasury.secret,
    });
    assert.equal(token.status, 200);
    accessToken = token.body.access_token as string;
    initiation = await send(`${server().url}${initiatePath}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json', 'x-correlation-id': correlationId },
      body: JSON.stringify(depositBody(1000, sourceAccount)),
    });
    assert.equal(initiation.status, 200, JSON.stringify(initiation.body));
    const retrieve = await send(`${server().url}/v1/term-deposits/${encodeURIComponent(String(initiation.body.termDepositAccount))}/retrieve`, {
      headers: { authorization: `Bearer ${accessToken}`, 'x-correlation-id': `${correlationId}-retrieve` },
    });
    assert.equal(retrieve.status, 200, JSON.stringify(retrieve.body));
    const unknown = await fetch(`${server().url}/v1/accounts/${unknownPathAccount}/balance?customerReference=${customerReference}`);
    assert.equal(unknown.status, 404);
    await unknown.text();
    const unknownRealm = await postForm(server().tokenUrl('no-such-realm-xyz'), { grant_type: 'client_credentials' });
    assert.equal(unknownRealm.status, 404);
  });

  test('answers 200 in the Prometheus text format without a token', async () => {
    const response = await scrape(server().coregate.metricsUrl);
    assert.equal(server().coregate.metricsUrl, `${server().url}/metrics`);
    assert.equal(response.status, 200);
    assert.match(response.contentType ?? '', /^text\/plain; version=0\.0\.4/);
    assert.match(response.text, /^# HELP coregate_http_requests_total /m);
    parseSamples(response.text); // every line is a comment or a sample
  });

  test('after one token request, coregate_tokens_issued_total{realm="sandbox"} is 1', async () => {
    const all = parseSamples((await scrape(server().coregate.metricsUrl)).text);
    assert.equal(valueOf(all, 'coregate_tokens_issued_total', { realm: 'sandbox' }), 1);
    assert.equal(valueOf(all, 'coregate_token_requests_total', { realm: 'sandbox', status: '200' }), 1);
    assert.equal(valueOf(all, 'coregate_http_requests_total', { route: tokenRoute, method: 'POST', status: '200' }), 1);
  });

  test('a token request for a realm that does not exist is counted with realm="unknown", not the name sent', async () => {
    const response = await scrape(server().coregate.metricsUrl);
    const all = parseSamples(response.text);
    assert.equal(valueOf(all, 'coregate_token_requests_total', { realm: 'unknown', status: '404' }), 1);
    assert.equal(valueOf(all, 'coregate_http_requests_total', { route: tokenRoute, method: 'POST', status: '404' }), 1);
    assert.ok(!response.text.includes('no-such-realm-xyz'));
  });

  test('the initiation is counted under its route pattern, method and status 200, with latency histogram buckets', async () => {
    const all = parseSamples((await scrape(server().coregate.metricsUrl)).text);
    const labels = { route: initiatePath, method: 'POST', status: '200' };
    assert.equal(valueOf(all, 'coregate_http_requests_total', labels), 1);
    assert.equal(valueOf(all, 'coregate_http_request_duration_seconds_count', labels), 1);
    const buckets = samplesOf(all, 'coregate_http_request_duration_seconds_bucket', labels);
    assert.deepEqual(
      buckets.map((bucket) => bucket.labels.le),
      ['0.005', '0.01', '0.025', '0.05', '0.1', '0.25', '0.5', '1', '2.5', '5', '10', '30', '+Inf'],
    );
    assert.equal(valueOf(all, 'coregate_http_request_duration_seconds_bucket', { ...labels, le: '+Inf' }), 1);
    const sum = valueOf(all, 'coregate_http_request_duration_seconds_sum', labels) ?? -1;
    assert.ok(sum > 0 && sum < 30, `duration ${sum} s`);
  });

  test('a request with a path parameter is labelled with the route pattern, not the term deposit it names', async () => {
    const all = parseSamples((await scrape(server().coregate.metricsUrl)).text);
    assert.equal(valueOf(all, 'coregate_http_requests_total', { route: '/v1/term-deposits/:termDepositId/retrieve', method: 'GET', status: '200' }), 1);
  });

  test('a request no route matches is labelled route="unmatched", never with its URL', async () => {
    const response = await scrape(server().coregate.metricsUrl);
    const all = parseSamples(response.text);
    assert.equal(valueOf(all, 'coregate_http_requests_total', { route: 'unmatched', method: 'GET', status: '404' }), 1);
    assert.ok(!response.text.includes('/v1/accounts'));
  });

  test('no secret, token or customer data anywhere in the text: client secret, access token, accounts, customer reference, correlation id, references', async () => {
    const text = (await scrape(server().coregate.metricsUrl)).text;
    const body = initiation?.body as Record<string, any>;
    const forbidden: Record<string, string> = {
      'client secret': demo.treasury.secret,
      'access token': accessToken,
      'access token signature': accessToken.split('.')[2] ?? accessToken,
      'source account': sourceAccount,
      'interest settlement account': interestAccount,
      'account in an unknown path': unknownPathAccount,
      'customer reference': customerReference,
      'correlation id': correlationId,
      'operation reference': String(body.operationReference),
      'term deposit account': String(body.termDepositAccount),
      'client id': demo.treasury.clientId,
    };
    for (const [what, value] of Object.entries(forbidden)) {
      assert.ok(value.length >= 5, `${what} is a real value (${value})`);
      assert.ok(!text.includes(value), `${what} appears in /metrics`);
    }
  });

  test('default metrics include the event-loop lag, memory and CPU', async () => {
    const all = parseSamples((await scrape(server().coregate.metricsUrl)).text);
    for (const name of ['nodejs_eventloop_lag_seconds', 'nodejs_eventloop_lag_p99_seconds', 'nodejs_heap_size_used_bytes', 'process_cpu_seconds_total']) {
      assert.ok(samplesOf(all, name).length > 0, `${name} present`);
    }
  });

  test('coregate_audit_unchained_records reads 0 once the chainer caught up and counts a record not yet chained', async () => {
    const coregate = server().coregate;
    await coregate.chainer.idle();
    assert.equal(valueOf(parseSamples((await scrape(coregate.metricsUrl)).text), 'coregate_audit_unchained_records'), 0);
    await insertAuditEntry(coregate.store.db, {
      id: randomUUID(),
      recordedAt: new Date().toISOString(),
      clientId: 'metrics-test',
      backboneUser: null,
      workstation: null,
      operation: 'metricsTest',
      correlationId: null,
      reference: null,
      httpStatus: 200,
      outcome: 'Executed',
      durationMs: 1,
      details: {},
    });
    assert.equal(valueOf(parseSamples((await scrape(coregate.metricsUrl)).text), 'coregate_audit_unchained_records'), 1);
    coregate.chainer.schedule();
    await coregate.chainer.idle();
    assert.equal(valueOf(parseSamples((await scrape(coregate.metricsUrl)).text), 'coregate_audit_unchained_records'), 0);
  });

  test(`coregate_db_pool_connections: total, idle and waiting on PostgreSQL, no series on SQLite (${target.name})`, async () => {
    const all = parseSamples((await scrape(server().coregate.metricsUrl)).text);
    if (target.name === 'sqlite') {
      assert.deepEqual(samplesOf(all, 'coregate_db_pool_connections'), []);
      return;
    }
    const total = valueOf(all, 'coregate_db_pool_connections', { state: 'total' }) ?? -1;
    const idle = valueOf(all, 'coregate_db_pool_connections', { state: 'idle' }) ?? -1;
    assert.ok(total >= 1, `total ${total}`);
    assert.ok(idle >= 0 && idle <= total, `idle ${idle} of ${total}`);
    // The scrape's own audit count may be waiting for a connection the pool is opening.
    const waiting = valueOf(all, 'coregate_db_pool_connections', { state: 'waiting' }) ?? -1;
    assert.ok(waiting >= 0, `waiting ${waiting}`);
  });

  test('the reconciler, operations and limits series exist before anything reports to them', async () => {
    const all = parseSamples((await scrape(server().coregate.metricsUrl)).text);
    assert.equal(valueOf(all, 'coregate_limits_degraded'), 0);
    assert.equal(valueOf(all, 'coregate_operations_unknown_over_age'), 0);
  });

  test('/metrics is not in the business OpenAPI document', async () => {
    const document = (await send(`${server().url}/openapi.json`, {})).body as { paths: Record<string, unknown> };
    assert.ok(Object.keys(document.paths).length > 0);
    assert.ok(!Object.keys(document.paths).some((path) => path.includes('metrics')));
  });
});
