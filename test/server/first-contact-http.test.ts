/**
 * First contact over HTTP (issue 12 item 7): GET / leads to the API docs, the OpenAPI document
 * and the console; a GET on the token endpoint is 405 with Allow: POST, as Keycloak answers.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';

const dir = mkdtempSync(join(tmpdir(), 'coregate-first-contact-'));
let server: TestServer;
before(async () => {
  server = await startTestServer({ db: `sqlite:${join(dir, 'first.db')}`, deployment: 'embedded', flags: { sandbox: true } });
});
after(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

test('issue 12 item 7: GET / answers a JSON index of the docs, the OpenAPI document and the console; each link answers', async () => {
  const response = await fetch(`${server.url}/`);
  assert.equal(response.status, 200);
  const index = (await response.json()) as { service: string; version: string; links: Record<string, string> };
  assert.equal(index.service, 'coregate');
  assert.equal(index.links.docs, '/docs');
  assert.equal(index.links.openapi, '/openapi.json');
  assert.equal(index.links.postman, '/collections/postman.json');
  assert.equal(index.links.console, '/console');
  for (const link of ['/docs', '/openapi.json', '/console', '/health/ready']) {
    assert.equal((await fetch(`${server.url}${link}`)).status, 200, link);
  }
});

test('issue 12 item 7: a browser at / gets a page linking the docs and the console', async () => {
  const response = await fetch(`${server.url}/`, { headers: { accept: 'text/html' } });
  assert.match(response.headers.get('content-type') ?? '', /^text\/html/);
  const page = await response.text();
  assert.match(page, /href="\/docs"/);
  assert.match(page, /href="\/openapi.json"/);
  assert.match(page, /href="\/console"/);
});

test('issue 12 item 7: GET on the token endpoint (and on introspection) is 405 with Allow: POST and an OAuth error body', async () => {
  for (const path of ['/realms/sandbox/protocol/openid-connect/token', '/realms/sandbox/protocol/openid-connect/token/introspect']) {
    const response = await fetch(`${server.url}${path}`);
    assert.equal(response.status, 405, path);
    assert.equal(response.headers.get('allow'), 'POST');
    const body = (await response.json()) as { error: string; error_description: string };
    assert.equal(body.error, 'invalid_request');
    assert.match(body.error_description, /send a POST/);
  }
});
