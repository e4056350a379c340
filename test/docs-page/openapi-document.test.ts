/**
 * The OpenAPI document behind the docs page (/openapi.json), over plain HTTP: the OAuth 2.0
 * client-credentials scheme on every business route, the tags with their descriptions, an
 * example on every request body and path parameter, and each example tried on a started server
 * with the demo data: it succeeds (issue 11 §6: "every request schema carries an example that
 * succeeds when tried on the demo data").
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fetchDocument, type Json } from '../helpers/openapi.js';
import { demo, demoToken } from '../helpers/server.js';
import { describeEachStore } from '../helpers/suite.js';

const businessScopes = ['termDeposit:initiate', 'termDeposit:retrieve', 'merchandisingLoan:execute'];

/** Every operation of the document: [path template, method, operation object]. */
function operationsOf(doc: Json): Array<[string, string, Json]> {
  return Object.entries(doc.paths as Record<string, Record<string, Json>>).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]): [string, string, Json] => [path, method, operation]),
  );
}

function resolve(doc: Json, schema: Json): Json {
  const ref = schema?.$ref;
  return typeof ref === 'string' ? doc.components.schemas[ref.replace('#/components/schemas/', '')] : schema;
}

/** The request body's example, wherever OpenAPI allows it: the media type, or its schema. */
function bodyExample(doc: Json, operation: Json): { mediaType: string; example: Json } | undefined {
  const [mediaType, media] = Object.entries((operation.requestBody?.content ?? {}) as Record<string, Json>)[0] ?? [];
  if (mediaType === undefined) return undefined;
  const example = media.example ?? (Object.values(media.examples ?? {}) as Json[])[0]?.value ?? resolve(doc, media.schema)?.examples?.[0];
  return { mediaType, example };
}

/** The path with each parameter replaced by its documented example. */
function examplePath(path: string, operation: Json): string {
  return path.replace(/\{([^}]+)\}/g, (_whole, name: string) => {
    const parameter = (operation.parameters as Json[]).find((p) => p.in === 'path' && p.name === name);
    const example = parameter?.example ?? parameter?.schema?.examples?.[0] ?? parameter?.examples?.[0];
    assert.ok(example !== undefined, `${path}: the path parameter ${name} has an example`);
    return encodeURIComponent(String(example));
  });
}

describeEachStore('API docs page: the OpenAPI document (/openapi.json)', ({ server }) => {
  test('declares the OAuth 2.0 client-credentials scheme at the sandbox realm\'s token endpoint, with the three scopes described', async () => {
    const doc = await fetchDocument(server());
    const scheme = doc.components.securitySchemes.oauth2;
    assert.equal(scheme.type, 'oauth2');
    const flow = scheme.flows.clientCredentials;
    assert.equal(flow.tokenUrl, '/realms/sandbox/protocol/openid-connect/token');
    assert.deepEqual(Object.keys(flow.scopes).sort(), [...businessScopes].sort());
    for (const scope of businessScopes) assert.ok(String(flow.scopes[scope]).length > 10, `${scope} is described`);
    // The token URL resolves against the server's origin: it is the real token endpoint.
    const response = await fetch(new URL(flow.tokenUrl, server().url), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${btoa(`${demo.treasury.clientId}:${demo.treasury.secret}`)}` },
      body: new URLSearchParams({ grant_type: 'client_credentials', scope: businessScopes.join(' ') }),
    });
    assert.equal(response.status, 200);
  });

  test('every business route accepts a token from that scheme (or a pasted bearer token) with its scope', async () => {
    const doc = await fetchDocument(server());
    const business = operationsOf(doc).filter(([path]) => path.startsWith('/v1/'));
    assert.ok(business.length >= 5);
    for (const [path, method, operation] of business) {
      const oauth = (operation.security as Array<Record<string, string[]>>).find((requirement) => 'oauth2' in requirement);
      assert.ok(oauth, `${method.toUpperCase()} ${path} references the oauth2 scheme`);
      for (const scope of oauth.oauth2 ?? []) assert.ok(businessScopes.includes(scope), `${path}: ${scope} is a declared scope`);
    }
  });

  test('tags: "Auth service" holds the auth endpoints; every tag used is declared with a description; nothing is left under "default"', async () => {
    const doc = await fetchDocument(server());
    const declared = new Map((doc.tags as Json[]).map((tag) => [tag.name as string, tag.description as string]));
    for (const [path, method, operation] of operationsOf(doc)) {
      assert.ok(Array.isArray(operation.tags) && operation.tags.length > 0, `${method.toUpperCase()} ${path} has a tag`);
      for (const tag of operation.tags) assert.ok((declared.get(tag) ?? '').length > 20, `tag ${tag} is declared with a description`);
      if (path.startsWith('/realms/')) assert.deepEqual(operation.tags, ['Auth service'], `${path} is under "Auth service"`);
    }
    const token = doc.paths['/realms/{realm}/protocol/openid-connect/token'].post;
    assert.deepEqual(Object.keys(token.requestBody.content), ['application/x-www-form-urlencoded']);
    const fields = resolve(doc, token.requestBody.content['application/x-www-form-urlencoded'].schema).properties;
    assert.deepEqual(Object.keys(fields).sort(), ['client_id', 'client_secret', 'grant_type', 'scope', 'username', 'workstation']);
    for (const status of ['200', '400', '401']) assert.ok(token.responses[status], `the token endpoint documents ${status}`);
    assert.match(doc.info.description, /\[operator console\]\(\/console\)/);
  });

  test('every request body and path parameter carries an example, and each example succeeds on the demo data', async () => {
    const doc = await fetchDocument(server());
    const token = await demoToken(server(), demo.treasury);
    const tried: string[] = [];
    for (const [path, method, operation] of operationsOf(doc)) {
      examplePath(path, operation);
      if (!operation.requestBody) continue;
      const found = bodyExample(doc, operation);
      assert.ok(found?.example !== undefined, `${method.toUpperCase()} ${path} has a request example`);
      const url = `${server().url}${examplePath(path, operation)}`;
      const form = found.mediaType === 'application/x-www-form-urlencoded';
      const response = await fetch(url, {
        method: method.toUpperCase(),
        headers: {
          'content-type': found.mediaType,
          ...(path.startsWith('/v1/') ? { authorization: `Bearer ${token}` } : {}),
        },
        body: form ? new URLSearchParams(found.example as Record<string, string>) : JSON.stringify(found.example),
      });
      const text = await response.text();
      assert.equal(response.status, 200, `${method.toUpperCase()} ${path} with its example: ${text}`);
      tried.push(`${method.toUpperCase()} ${path}`);
    }
    assert.deepEqual(tried.sort(), [
      'POST /realms/{realm}/protocol/openid-connect/token',
      'POST /realms/{realm}/protocol/openid-connect/token/introspect',
      'POST /v1/merchandising-loan/{merchandisingLoanId}/repayment-schedules/{installmentSequence}/execute',
      'POST /v1/term-deposits/initiate',
    ]);
  });
}, { flags: { sandbox: true } }); // The examples carry the demo client's secret in a sandbox only (docs/deployment.md, "The database and the master key").
