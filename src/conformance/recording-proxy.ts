/**
 * A recording proxy between the kit's HttpCore and the core under test: every exchange passes
 * through unchanged and is written to the log, so that a broken rule shows the request and the
 * answer as they were on the wire (docs/conformance.md, "Reading a failure"). It listens on
 * 127.0.0.1 only, for the kit's own adapter.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ExchangeLog } from './exchange-log.js';
import { networkReason, readBounded } from './wire-client.js';

/** The largest body either way (the protocol's data load is at most 4 MiB). */
const bodyBytesMax = 5 * 1024 * 1024;

export interface RecordingProxy {
  /** The proxy's URL with the core's path prefix: give it to the adapter instead of the core's. */
  readonly url: string;
  close(): Promise<void>;
}

export async function startRecordingProxy(coreUrl: string, log: ExchangeLog): Promise<RecordingProxy> {
  const target = new URL(coreUrl);
  const server: Server = createServer((request, response) => {
    void (async () => {
      const path = request.url ?? '/';
      const body = await readBody(request);
      const method = request.method ?? 'GET';
      const described = `${method} ${path}${body.length > 0 ? ` ${body.toString('utf8')}` : ''}`;
      // The adapter gave up on this call (its time-out): so does the proxy, rather than wait on the core.
      const upstream = new AbortController();
      response.once('close', () => upstream.abort());
      let answer: Response;
      try {
        const headers: Record<string, string> = {};
        for (const name of ['content-type', 'accept', 'traceparent']) {
          const value = request.headers[name];
          if (typeof value === 'string') headers[name] = value;
        }
        answer = await fetch(`${target.origin}${path}`, { method, headers, ...(body.length > 0 ? { body } : {}), redirect: 'manual', signal: upstream.signal });
      } catch (error) {
        log.record({ request: described, answer: `no answer: ${networkReason(error)}` });
        // As the core did: the adapter sees a connection that failed, not an answer.
        response.destroy();
        return;
      }
      let text: Buffer;
      try {
        text = await readBounded(answer, bodyBytesMax + 1, upstream);
        if (text.length > bodyBytesMax) throw new Error(`an answer above ${bodyBytesMax} bytes`);
      } catch (error) {
        log.record({ request: described, answer: `${answer.status}, then no complete body: ${networkReason(error)}` });
        response.destroy();
        return;
      }
      const contentType = answer.headers.get('content-type') ?? '';
      log.record({ request: described, answer: `${answer.status} ${contentType} ${text.subarray(0, 64 * 1024).toString('utf8')}` });
      response.writeHead(answer.status, contentType === '' ? {} : { 'content-type': contentType });
      response.end(text);
    })().catch(() => response.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${target.pathname.replace(/\/+$/, '')}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > bodyBytesMax) throw new Error(`a request body above ${bodyBytesMax} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
