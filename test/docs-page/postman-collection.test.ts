/**
 * The Postman collection (docs/collections.md; issue 27): GET /collections/postman.json, made from
 * the served OpenAPI document, runs green with newman against a fresh sandbox configured as `npm
 * start` configures it (`--sandbox --webhook-allow-private`, demo/sandbox.json, a new store; in
 * this process, over real HTTP, as newman needs): the token request, then every business operation
 * with its example. It runs twice, green both times (a fresh x-correlation-id per request), and
 * names every /v1 operation of the document.
 */
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { after, before, test } from 'node:test';
import { fetchDocument, type Json } from '../helpers/openapi.js';
import { demo, startTestServer, type TestServer } from '../helpers/server.js';
import { storeTargets } from '../helpers/stores.js';
import { operationsOf } from '../../src/docs-page/dated-document.js';

/** The part of newman's Node API this test uses (newman ships no types). */
interface NewmanSummary {
  run: {
    stats: { requests: { total: number; failed: number }; assertions: { total: number; failed: number } };
    failures: Array<{ error: { message: string; test?: string }; source?: { name?: string } }>;
    executions: Array<{ item: { name: string }; response?: { code: number } }>;
  };
}
interface Newman {
  run(options: { collection: unknown; reporters?: string[]; timeoutRequest?: number }, callback: (error: Error | null, summary: NewmanSummary) => void): unknown;
}
const newman = createRequire(import.meta.url)('newman') as Newman;

const sqlite = storeTargets.find((target) => target.name === 'sqlite');
let server: TestServer;
let drop: (() => Promise<void>) | undefined;

before(async () => {
  if (!sqlite) throw new Error('no SQLite store target');
  const store = await sqlite.create();
  drop = store.drop;
  // npm start's store is SQLite and its core embedded, whatever deployment the run tests.
  server = await startTestServer({ db: store.url, deployment: 'embedded', flags: { sandbox: true, webhookAllowPrivate: true } });
});
after(async () => {
  await server?.close();
  await drop?.();
});

async function collection(): Promise<Json> {
  const response = await fetch(`${server.url}/collections/postman.json`);
  assert.equal(response.status, 200);
  assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
  return response.json();
}

const requestsOf = (served: Json): Json[] => (served.item as Json[]).flatMap((folder) => folder.item as Json[]);

function run(served: Json): Promise<NewmanSummary> {
  return new Promise((resolve, reject) => {
    // No reporter: the summary is asserted; a bound on each request stops a hung one.
    newman.run({ collection: served, reporters: [], timeoutRequest: 30_000 }, (error, summary) => (error ? reject(error) : resolve(summary)));
  });
}

function assertGreen(summary: NewmanSummary, served: Json): void {
  const failures = summary.run.failures.map((failure) => `${failure.source?.name ?? '?'}: ${failure.error.test ?? ''} ${failure.error.message}`);
  assert.deepEqual(failures, []);
  assert.equal(summary.run.stats.requests.total, requestsOf(served).length);
  assert.equal(summary.run.stats.requests.failed, 0);
  assert.equal(summary.run.stats.assertions.failed, 0);
  assert.equal(summary.run.stats.assertions.total, requestsOf(served).length, 'one status check per request');
}

test('the collection is v2.1, with the token request first, every business operation of the document, and the base URL, client id and secret as variables', async () => {
  const served = await collection();
  const document = await fetchDocument(server);
  assert.equal(served.info.schema, 'https://schema.getpostman.com/json/collection/v2.1.0/collection.json');
  assert.equal(served.info.name, document.info.title);
  const variables = Object.fromEntries((served.variable as Json[]).map((variable) => [variable.key, variable.value]));
  assert.equal(variables.baseUrl, server.url);
  assert.equal(variables.clientId, demo.treasury.clientId);
  assert.equal(variables.clientSecret, demo.treasury.secret);
  const requests = requestsOf(served);
  assert.equal(requests[0].request.url.raw, '{{baseUrl}}/realms/sandbox/protocol/openid-connect/token');
  assert.match(requests[0].event[0].script.exec.join('\n'), /pm\.collectionVariables\.set\('accessToken'/);
  const business = operationsOf(document).filter(([path]) => path.startsWith('/v1/'));
  assert.equal(requests.length, 1 + business.length);
  for (const item of requests.slice(1)) {
    assert.ok(item.request.url.raw.startsWith('{{baseUrl}}/v1/'), item.request.url.raw);
    assert.deepEqual(item.request.header.find((header: Json) => header.key === 'x-correlation-id')?.value, '{{$guid}}', item.name);
  }
  // The bodies are the document's examples: the same real demo data, the same business date.
  const initiate = requests.find((item) => item.request.url.raw === '{{baseUrl}}/v1/term-deposits/initiate');
  assert.deepEqual(JSON.parse(initiate.request.body.raw), document.paths['/v1/term-deposits/initiate'].post.requestBody.content['application/json'].example);
  // The retrieve reads the contract the initiation created (the document's link).
  assert.equal(requests.find((item) => item.name.startsWith('Retrieve a term deposit')).request.url.raw, '{{baseUrl}}/v1/term-deposits/{{termDepositId}}/retrieve');
});

test('newman runs the served collection green against a fresh sandbox, twice in a row', async () => {
  const served = await collection();
  assertGreen(await run(served), served);
  // A second run makes new operations (a new x-correlation-id per request), never a 409.
  const again = await run(served);
  assertGreen(again, served);
  assert.deepEqual(again.run.executions.map((execution) => execution.response?.code), requestsOf(served).map(() => 200));
});

test('behind a proxy: with --public-url the collection\'s baseUrl is the public URL, not the Host the request reached this instance by', async () => {
  if (!sqlite) throw new Error('no SQLite store target');
  const store = await sqlite.create();
  const proxied = await startTestServer({ db: store.url, deployment: 'embedded', publicUrl: 'https://api.bank.example' });
  try {
    const response = await fetch(`${proxied.url}/collections/postman.json`, { headers: { host: 'coregate-7.internal:8080' } });
    assert.equal(response.status, 200);
    const served = (await response.json()) as Json;
    const variables = Object.fromEntries((served.variable as Json[]).map((variable) => [variable.key, variable.value]));
    assert.equal(variables.baseUrl, 'https://api.bank.example');
  } finally {
    await proxied.close();
    await store.drop();
  }
});
