/**
 * How the API tests' requests reach a server started in their own process (docs/testing.md,
 * "Requests without a socket"). A test server of the embedded deployment is one Fastify instance in
 * the test's process: `send` and `postForm` (http.ts, server.ts) hand it their requests through
 * Fastify's `inject` — the same routing, hooks, validation, handlers and serialization, without a
 * socket, an HTTP parser or a client on either side. The deployments that need HTTP (a remote core,
 * two instances behind a balancer) and every request a test makes with `fetch` itself, a raw
 * socket or the SDK go over real HTTP, as do requests whose shape only a real client gives
 * (repeated headers, a body that is not text, redirects followed, a signal).
 * COREGATE_TEST_TRANSPORT=http sends everything over HTTP (to compare the two).
 */
import type { FastifyInstance } from 'fastify';

/** The in-process servers by origin (http://127.0.0.1:port), registered while they run. */
const injectable = new Map<string, FastifyInstance>();

/** Registers `app` as the server at `origin` until the returned function is called. */
export function serveWithoutSocket(origin: string, app: FastifyInstance): () => void {
  if (process.env.COREGATE_TEST_TRANSPORT === 'http') return () => {};
  injectable.set(origin, app);
  return () => {
    if (injectable.get(origin) === app) injectable.delete(origin);
  };
}

export interface Exchange {
  status: number;
  headers: Headers;
  text: string;
}

/** What fetch sends of its own; a request through inject carries the same, so that the server sees one client. */
const fetchDefaults: Readonly<Record<string, string>> = { accept: '*/*', 'accept-language': '*', 'accept-encoding': 'gzip, deflate', 'user-agent': 'node', 'sec-fetch-mode': 'cors' };

/** The request to `url` as fetch would make it, answered by the in-process server when there is one. */
export async function exchange(url: string, init: RequestInit = {}): Promise<Exchange> {
  const target = new URL(url);
  const app = injectable.get(target.origin);
  const headers = app === undefined ? undefined : injectableHeaders(init);
  const body = init.body;
  if (app === undefined || headers === undefined || init.signal || init.redirect !== undefined || (body !== undefined && body !== null && typeof body !== 'string')) {
    const response = await fetch(url, init);
    return { status: response.status, headers: response.headers, text: await response.text() };
  }
  const answer = await app.inject({ method: (init.method ?? 'GET') as 'GET', url: `${target.pathname}${target.search}`, headers, ...(typeof body === 'string' ? { payload: body } : {}) });
  const responseHeaders = new Headers();
  for (const [name, value] of Object.entries(answer.headers)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) responseHeaders.append(name, String(one));
  }
  return { status: answer.statusCode, headers: responseHeaders, text: answer.body };
}

/** The request's headers as a record, fetch's defaults added; undefined when a name repeats (only real HTTP sends that as sent). */
function injectableHeaders(init: RequestInit): Record<string, string> | undefined {
  const given: Array<[string, string]> = [];
  const source = init.headers;
  if (source instanceof Headers) source.forEach((value, name) => given.push([name, value]));
  else if (Array.isArray(source)) for (const [name, value] of source) given.push([String(name), String(value)]);
  else if (source !== undefined) for (const [name, value] of Object.entries(source)) given.push([name, String(value)]);
  const headers: Record<string, string> = {};
  for (const [name, value] of given) {
    const lower = name.toLowerCase();
    if (Object.hasOwn(headers, lower)) return undefined;
    headers[lower] = value;
  }
  for (const [name, value] of Object.entries(fetchDefaults)) if (!Object.hasOwn(headers, name)) headers[name] = value;
  if (typeof init.body === 'string' && !Object.hasOwn(headers, 'content-type')) headers['content-type'] = 'text/plain;charset=UTF-8';
  return headers;
}
