/** Reading the served OpenAPI document, and preparing its component schemas for ajv. */
import assert from 'node:assert/strict';
import type { TestServer } from './server.js';

// The document is untyped JSON: tests walk it freely.
export type Json = any;

export const operationsTemplate = '/v1/operations/{reference}';

/** The id prefix each component gets in ajv, so that each component is its own ajv schema. */
export const componentBase = 'https://coregate.test/openapi/components/schemas/';

/** GET /openapi.json, asserting a 200 JSON answer. */
export async function fetchDocument(server: TestServer): Promise<Json> {
  const response = await fetch(`${server.url}/openapi.json`);
  assert.equal(response.status, 200);
  assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
  return response.json();
}

/** `#/components/schemas/X` → an absolute id under `componentBase`, so that ajv resolves it. */
export function rewriteRefs(schema: Json): Json {
  if (Array.isArray(schema)) return schema.map(rewriteRefs);
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Json = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === '$ref' && typeof value === 'string') {
      assert.match(value, /^#\/components\/schemas\/[^/]+$/, `only component references are expected, got ${value}`);
      out.$ref = `${componentBase}${value.slice('#/components/schemas/'.length)}`;
    } else {
      out[key] = rewriteRefs(value);
    }
  }
  return out;
}

/** One observed exchange: what the response-schema checks validate. */
export interface Observed {
  status: number;
  contentType: string | null;
  headers: Headers;
  /** The raw body; absent on hand-built observations. */
  text?: string;
  body: Json;
}

export async function call(
  server: TestServer,
  method: 'GET' | 'POST',
  path: string,
  options: { token?: string; body?: string; contentType?: string; headers?: Record<string, string> } = {},
): Promise<Observed> {
  const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  if (options.body !== undefined) headers['content-type'] = options.contentType ?? 'application/json';
  const init: RequestInit = { method, headers };
  if (options.body !== undefined) init.body = options.body;
  const response = await fetch(`${server.url}${path}`, init);
  const text = await response.text();
  return { status: response.status, contentType: response.headers.get('content-type'), headers: response.headers, text, body: text === '' ? undefined : JSON.parse(text) };
}
