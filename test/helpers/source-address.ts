/**
 * Requests from a chosen source address. Linux routes all of 127.0.0.0/8 to the loopback
 * interface, so a client socket bound to 127.0.0.2 reaches a server on 127.0.0.1 and the server
 * sees 127.0.0.2 as the peer: a second "machine" for per-address limits.
 */
import { request } from 'node:http';
import type { HttpResult } from './http.js';

/** POSTs a form from `localAddress` (a fresh connection each time) and parses the JSON answer. */
export function postFormFrom(
  localAddress: string,
  url: string,
  fields: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<HttpResult> {
  const body = new URLSearchParams(fields).toString();
  return new Promise((resolve, reject) => {
    const outgoing = request(
      url,
      {
        method: 'POST',
        localAddress,
        agent: false,
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': String(Buffer.byteLength(body)), ...headers },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', reject);
        response.on('end', () => {
          const responseHeaders = new Headers();
          for (const [name, value] of Object.entries(response.headers)) {
            for (const item of Array.isArray(value) ? value : value === undefined ? [] : [value]) responseHeaders.append(name, item);
          }
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: response.statusCode ?? 0, headers: responseHeaders, body: text === '' ? undefined : JSON.parse(text) });
        });
      },
    );
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}
