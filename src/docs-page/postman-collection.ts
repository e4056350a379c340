/**
 * GET /collections/postman.json (docs/collections.md): a Postman collection (v2.1) made from the
 * served OpenAPI document, so that it never drifts from the routes: the client-credentials token
 * request (the document's OAuth 2.0 scheme), then every business operation (`/v1/...`) with its
 * example, in the document's order and grouped by tag. Each request checks its documented success
 * status; a fresh x-correlation-id per request (`{{$guid}}`) keeps a second run from being a
 * duplicate. The document's links become collection variables: the initiation stores the contract
 * number that the retrieve then reads. Outside sandbox mode the `clientSecret` variable is empty:
 * the demo client's secret is sample data for a sandbox, and a production server hands out no
 * secret (the user fills in their client's).
 */
import { operationsOf, parameterExample, type OpenApiDocument } from './dated-document.js';

export const postmanCollectionPath = '/collections/postman.json';
const schemaUrl = 'https://schema.getpostman.com/json/collection/v2.1.0/collection.json';

interface Variable {
  key: string;
  value: string;
  type?: string;
  description?: string;
}

interface Item {
  name: string;
  request: Record<string, unknown>;
  event: Array<{ listen: 'test'; script: { type: 'text/javascript'; exec: string[] } }>;
}

export interface PostmanCollection {
  info: { name: string; description: string; schema: string };
  auth: Record<string, unknown>;
  variable: Variable[];
  item: Array<{ name: string; item: Item[] }>;
}

// The document is plain JSON: walked freely.
type Json = any;

function testScript(lines: string[]): Item['event'] {
  return [{ listen: 'test', script: { type: 'text/javascript', exec: lines } }];
}

/** `{{baseUrl}}` and the path's segments, as Postman's URL object holds them. */
function urlOf(path: string): Record<string, unknown> {
  return { raw: `{{baseUrl}}${path}`, host: ['{{baseUrl}}'], path: path.split('/').filter((segment) => segment !== '') };
}

/** The status a request with its example answers: the lowest documented 2xx. */
function successStatus(operation: Json): number {
  const statuses = Object.keys(operation.responses ?? {}).map(Number).filter((status) => status >= 200 && status < 300);
  return Math.min(...statuses);
}

/** `$response.body#/a/b` → the JavaScript that reads it from the answer in a Postman script. */
function bodyReader(expression: string): string {
  const pointer = expression.replace(/^\$response\.body#/, '');
  const keys = pointer.split('/').slice(1).map((key) => key.replace(/~1/g, '/').replace(/~0/g, '~'));
  return `pm.response.json()${keys.map((key) => `[${JSON.stringify(key)}]`).join('')}`;
}

/** The token request: the client-credentials flow of the document's OAuth 2.0 scheme, its token kept in `accessToken`. */
function tokenItem(doc: OpenApiDocument): { item: Item; clientId: string; clientSecret: string } {
  const flow = doc.components?.securitySchemes?.oauth2?.flows?.clientCredentials;
  if (!flow?.tokenUrl) throw new Error('the OpenAPI document declares no OAuth 2.0 client-credentials scheme');
  const tokenOperation = operationsOf(doc).find(([, , operation]) => operation.operationId === 'requestToken')?.[2];
  const example = Object.values((tokenOperation?.requestBody?.content ?? {}) as Record<string, Json>)[0]?.example ?? {};
  const item: Item = {
    name: 'Obtain an access token (client credentials)',
    request: {
      method: 'POST',
      auth: { type: 'basic', basic: [{ key: 'username', value: '{{clientId}}', type: 'string' }, { key: 'password', value: '{{clientSecret}}', type: 'string' }] },
      header: [{ key: 'Content-Type', value: 'application/x-www-form-urlencoded' }],
      // No scope: every scope of the client (RFC 6749 §3.3 as the realm applies it), whichever client is set.
      body: { mode: 'urlencoded', urlencoded: [{ key: 'grant_type', value: 'client_credentials' }] },
      url: urlOf(flow.tokenUrl),
      description: 'RFC 6749 §4.4 with HTTP Basic client authentication; the access token is kept in the collection variable accessToken for the requests that follow.',
    },
    event: testScript([
      "pm.test('the token endpoint answers 200', function () { pm.response.to.have.status(200); });",
      "pm.collectionVariables.set('accessToken', pm.response.json().access_token);",
    ]),
  };
  return { item, clientId: String(example.client_id ?? ''), clientSecret: String(example.client_secret ?? '') };
}

/** Which path parameters an earlier answer fills: operationId → parameter → the variable's default. */
function linkedParameters(doc: OpenApiDocument): Map<string, Map<string, string>> {
  const linked = new Map<string, Map<string, string>>();
  for (const [, , operation] of operationsOf(doc)) {
    for (const response of Object.values((operation.responses ?? {}) as Record<string, Json>)) {
      for (const link of Object.values((response.links ?? {}) as Record<string, Json>)) {
        const parameters = linked.get(link.operationId) ?? new Map<string, string>();
        for (const name of Object.keys(link.parameters ?? {})) parameters.set(name, '');
        linked.set(link.operationId, parameters);
      }
    }
  }
  return linked;
}

function businessItem(path: string, method: string, operation: Json, linked: Map<string, string> | undefined): Item {
  const status = successStatus(operation);
  const concrete = path.replace(/\{([^}]+)\}/g, (_whole, name: string) => (linked?.has(name) ? `{{${name}}}` : encodeURIComponent(String(parameterExample(operation, name)))));
  const [mediaType, media] = Object.entries((operation.requestBody?.content ?? {}) as Record<string, Json>)[0] ?? [];
  const header = [{ key: 'x-correlation-id', value: '{{$guid}}', description: 'A new id per request: a repeat of a used one is 409 (docs/api.md)' }];
  if (mediaType !== undefined) header.push({ key: 'Content-Type', value: mediaType, description: '' });
  const request: Record<string, unknown> = { method: method.toUpperCase(), header, url: urlOf(concrete), description: operation.description ?? operation.summary ?? '' };
  if (media?.example !== undefined) request.body = { mode: 'raw', raw: JSON.stringify(media.example, null, 2), options: { raw: { language: 'json' } } };
  const keeps = Object.values((operation.responses?.[String(status)]?.links ?? {}) as Record<string, Json>).flatMap((link) =>
    Object.entries((link.parameters ?? {}) as Record<string, string>).map(([name, expression]) => `pm.collectionVariables.set(${JSON.stringify(name)}, ${bodyReader(expression)});`),
  );
  return {
    name: operation.summary ?? `${method.toUpperCase()} ${path}`,
    request,
    event: testScript([`pm.test(${JSON.stringify(`${method.toUpperCase()} ${path} answers ${status}`)}, function () { pm.response.to.have.status(${status}); });`, ...new Set(keeps)]),
  };
}

export interface PostmanOptions {
  /**
   * Sandbox mode: `clientSecret` defaults to the token request's example (the demo client's secret).
   * Otherwise the variable is present and empty, for the user to fill in.
   */
  sandbox: boolean;
}

/**
 * The collection for one served document. `baseUrl` is the default of the `baseUrl` variable
 * (the server's own URL as the client reached it); the client id defaults to the token request's
 * example (the demo client of demo/sandbox.json), and so does its secret in a sandbox only.
 */
export function postmanCollection(doc: OpenApiDocument, baseUrl: string, options: PostmanOptions): PostmanCollection {
  const token = tokenItem(doc);
  const linked = linkedParameters(doc);
  const folders = new Map<string, Item[]>([[String(doc.tags?.[0]?.name ?? 'Auth service'), [token.item]]]);
  const linkedDefaults = new Map<string, string>();
  for (const [path, method, operation] of operationsOf(doc)) {
    if (!path.startsWith('/v1/')) continue;
    const parameters = linked.get(operation.operationId);
    for (const name of parameters?.keys() ?? []) linkedDefaults.set(name, String(parameterExample(operation, name) ?? ''));
    const tag = String(operation.tags?.[0] ?? 'API');
    folders.set(tag, [...(folders.get(tag) ?? []), businessItem(path, method, operation, parameters)]);
  }
  return {
    info: {
      name: String(doc.info?.title ?? 'coregate API'),
      description: `Made from /openapi.json (version ${String(doc.info?.version ?? '')}). ${options.sandbox ? '' : 'Set clientSecret to your client\'s secret first (this server gives none). '}Run "Obtain an access token" first (or the whole collection): it keeps the token in accessToken. Set baseUrl, clientId and clientSecret for another server or client.`,
      schema: schemaUrl,
    },
    auth: { type: 'bearer', bearer: [{ key: 'token', value: '{{accessToken}}', type: 'string' }] },
    variable: [
      { key: 'baseUrl', value: baseUrl, description: 'The server, without a trailing slash' },
      { key: 'clientId', value: token.clientId, description: 'A client of the realm (the demo client by default)' },
      options.sandbox
        ? { key: 'clientSecret', value: token.clientSecret, description: 'Its secret (the demo data\'s by default)' }
        : { key: 'clientSecret', value: '', description: 'Its secret: fill it in (a server outside sandbox mode hands out none)' },
      { key: 'accessToken', value: '', description: 'Set by "Obtain an access token"' },
      ...[...linkedDefaults].map(([key, value]) => ({ key, value, description: 'Set by the request that creates it; the example until then' })),
    ],
    item: [...folders].map(([name, item]) => ({ name, item })),
  };
}

/** The same collection with another default server (the requester's origin): the rest is shared. */
export function withBaseUrl(collection: PostmanCollection, baseUrl: string): PostmanCollection {
  return { ...collection, variable: collection.variable.map((variable) => (variable.key === 'baseUrl' ? { ...variable, value: baseUrl } : variable)) };
}
