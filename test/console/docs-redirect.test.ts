/**
 * The API docs page the console links to (/docs): its old address with a query string,
 * /docs/static/index.html?url=..., once redirected to itself for ever (@fastify/swagger-ui rewrites
 * the path's end, which the query hides). It now leads to the page in one redirect.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { storeTargets } from '../helpers/stores.js';
import { operatorDataFile } from './helpers.js';

let server: TestServer;
let drop: () => Promise<void>;

before(async () => {
  const sqlite = storeTargets[0];
  assert.ok(sqlite);
  const created = await sqlite.create();
  drop = created.drop;
  server = await startTestServer({ db: created.url, data: operatorDataFile(), flags: { sandbox: true }, deployment: 'embedded' });
});

after(async () => {
  await server?.close();
  await drop?.();
});

test('/docs/static/index.html?url=... redirects once, to /docs with its query, and that serves the docs page (never a redirect to itself)', async () => {
  for (const query of ['?url=/openapi.json', '?url=https%3A%2F%2Fexample.com%2Fapi.json&x=1']) {
    const first = await fetch(`${server.url}/docs/static/index.html${query}`, { redirect: 'manual' });
    assert.equal(first.status, 302, query);
    const location = first.headers.get('location') ?? '';
    assert.equal(location, `/docs${query}`);
    const page = await fetch(`${server.url}${location}`, { redirect: 'manual' });
    assert.equal(page.status, 200, `${location} serves the page`);
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
    assert.match(await page.text(), /<div id="swagger-ui">/);
  }
});

test('/docs/static/index.html without a query still leads to the page', async () => {
  const page = await fetch(`${server.url}/docs/static/index.html`);
  assert.equal(page.status, 200);
  assert.match(await page.text(), /<div id="swagger-ui">/);
});
