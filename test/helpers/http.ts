/** Plain HTTP plumbing the API tests share: the response shape, a JSON-reading fetch, common patterns. */
import { readFileSync } from 'node:fs';
import { repoRoot } from './repo-root.js';
import { join } from 'node:path';
import { exchange } from './transport.js';

export const initiatePath = '/v1/term-deposits/initiate';

export const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export interface HttpResult {
  status: number;
  headers: Headers;
  body: any;
}

/**
 * A request as fetch makes it, with the body parsed as JSON (undefined when empty; a body that is
 * not JSON throws). To a server in the test's own process it goes without a socket (transport.ts).
 */
export async function send(url: string, init: RequestInit): Promise<HttpResult> {
  const { status, headers, text } = await exchange(url, init);
  return { status, headers, body: text === '' ? undefined : JSON.parse(text) };
}

/** The error record's `reason` per HTTP status (docs/errors.md, "The error record"; an oracle independent of src/). */
export const reasonByStatus: Readonly<Record<number, string>> = {
  400: 'VALIDATION_ERROR',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  422: 'BUSINESS_RULE_VIOLATION',
  429: 'TOO_MANY_REQUESTS',
  500: 'INTERNAL_ERROR',
  502: 'CORE_UNAVAILABLE',
  503: 'SERVICE_UNAVAILABLE',
  504: 'CORE_TIMEOUT',
};

/** docs/errors.md's domain-code table: code → documented HTTP status and errordetail reason. */
export const documentedCodes: ReadonlyMap<string, { status: number; reason: string }> = new Map(
  [...readFileSync(join(repoRoot, 'docs/errors.md'), 'utf8').matchAll(/^\| `((?:TD|ML)-\d{3}-\d{3})` \| (\d{3}) \| `([A-Z_]+)` \|/gm)].map(
    (match) => [match[1] ?? '', { status: Number(match[2]), reason: match[3] ?? '' }],
  ),
);
