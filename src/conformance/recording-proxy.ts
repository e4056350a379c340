/**
 * A recording proxy between the kit's HttpCore and the core under test (docs/conformance.md,
 * "Reading a failure"): it forwards the adapter's request as it came — method, path, headers,
 * body bytes — and pipes the core's answer back byte for byte, status and headers included, so
 * that HttpCore meets exactly what the core sends (a compressed answer, a strange header), as it
 * would behind the API. What crossed is written to the log: the request, the status, the
 * Content-Type and Content-Encoding, and the first bytes of the body. It listens on 127.0.0.1
 * only, for the kit's own adapter.
 */
import { Agent as HttpAgent, createServer, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type OutgoingHttpHeaders, type Server } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { exchangeTextMax, type ExchangeLog } from './exchange-log.js';
import { networkReason } from './wire-client.js';

/** Connections kept to the core (HttpCore keeps 16 to the proxy). */
const coreConnectionsMax = 16;
/** Bytes of each body kept for the log: a little more than the log shows. */
const recordedBytesMax = exchangeTextMax + 64;

export interface RecordingProxy {
  /** The proxy's URL with the core's path prefix: give it to the adapter instead of the core's. */
  readonly url: string;
  close(): Promise<void>;
}

/** Headers that belong to one connection, not to the message (RFC 9110 §7.6.1): each hop writes its own. */
const hopByHop = new Set(['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

function endToEnd(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  const named = new Set(String(headers.connection ?? '').toLowerCase().split(',').map((name) => name.trim()));
  return Object.fromEntries(Object.entries(headers).filter(([name, value]) => value !== undefined && !hopByHop.has(name) && !named.has(name)));
}

/** The first bytes of a stream, kept as they pass. */
class Recorded {
  readonly #chunks: Buffer[] = [];
  #kept = 0;
  total = 0;

  keep(chunk: Buffer): void {
    this.total += chunk.length;
    if (this.#kept >= recordedBytesMax) return;
    const part = chunk.subarray(0, recordedBytesMax - this.#kept);
    this.#chunks.push(part);
    this.#kept += part.length;
  }

  /** As text: UTF-8 where it is, each byte that is not shown as \xNN. */
  text(): string {
    const bytes = Buffer.concat(this.#chunks);
    let text: string;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      text = [...bytes].map((byte) => (byte >= 0x20 && byte < 0x7f ? String.fromCharCode(byte) : `\\x${byte.toString(16).padStart(2, '0')}`)).join('');
    }
    return this.total > this.#kept ? `${text}… (${this.total} bytes)` : text;
  }
}

export async function startRecordingProxy(coreUrl: string, log: ExchangeLog): Promise<RecordingProxy> {
  const target = new URL(coreUrl);
  const secure = target.protocol === 'https:';
  const agent = secure ? new HttpsAgent({ keepAlive: true, maxSockets: coreConnectionsMax }) : new HttpAgent({ keepAlive: true, maxSockets: coreConnectionsMax });
  const send = secure ? httpsRequest : httpRequest;
  const sockets = new Set<Socket>();

  const server: Server = createServer((request, response) => {
    const path = request.url ?? '/';
    const method = request.method ?? 'GET';
    const sent = new Recorded();
    const described = () => `${method} ${path}${sent.total > 0 ? ` ${sent.text()}` : ''}`;
    let settled = false;
    const fail = (answer: string) => {
      if (settled) return;
      settled = true;
      log.record({ request: described(), answer });
      // As the core did: the adapter sees a connection that failed, not an answer.
      response.destroy();
    };
    const outgoing = send({ protocol: target.protocol, hostname: target.hostname, port: target.port, method, path, agent, headers: { ...endToEnd(request.headers), host: target.host } }, (answer: IncomingMessage) => {
      const received = new Recorded();
      const status = answer.statusCode ?? 502;
      answer.on('data', (chunk: Buffer) => received.keep(chunk));
      answer.on('end', () => {
        if (settled) return;
        settled = true;
        const header = (name: string) => String(answer.headers[name] ?? '');
        const encoding = header('content-encoding');
        log.record({ request: described(), answer: `${status} ${header('content-type')}${encoding === '' ? '' : ` (Content-Encoding ${encoding})`} ${received.text()}` });
      });
      answer.on('error', (error) => fail(`${status}, then no complete body: ${networkReason(error)}`));
      response.writeHead(status, answer.statusMessage, endToEnd(answer.headers));
      answer.pipe(response);
    });
    outgoing.on('error', (error) => fail(`no answer: ${networkReason(error)}`));
    // The adapter gave up on this call (its time-out), or the core's answer went out whole: either way the exchange is over.
    response.once('close', () => {
      if (!response.writableFinished) outgoing.destroy();
    });
    request.on('data', (chunk: Buffer) => sent.keep(chunk));
    request.pipe(outgoing);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
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
        for (const socket of sockets) socket.destroy();
        agent.destroy();
        server.close(() => resolve());
      }),
  };
}
