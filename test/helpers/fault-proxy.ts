/**
 * A fault-injecting HTTP proxy between the API and a remote core: the test double at the remote
 * core protocol's wire. Each request meets the fault its rule picks: passed through, delayed before
 * the core sees it, answered late after the core executed it, answered by the proxy itself (5xx,
 * garbage), reset before or after the core executed it, or never answered. The rule is a function
 * of the request, so a torture test can draw faults at random; `withFault` scopes one fault to a
 * piece of a test. Every request is logged with the fault it met and whether the core saw it.
 */
import { createServer, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Gate } from './gate.js';

export type ProxyFault =
  /** Forwarded and answered as the core answers. */
  | { kind: 'pass' }
  /** Waits `delayMs`, then forwards: the core sees the request late. */
  | { kind: 'latency'; delayMs: number }
  /** Forwarded at once (the core executes it), answered `delayMs` late. */
  | { kind: 'delay-response'; delayMs: number }
  /** Forwards the request; the core's answer arrives and is held until the test calls release() (gated, never timed). */
  | { kind: 'hold-response' }
  /** Answered by the proxy, never forwarded (a 5xx, garbage, a lie). */
  | { kind: 'respond'; status: number; body: string; contentType?: string }
  /** The connection is reset before forwarding: the core never sees the request. */
  | { kind: 'reset' }
  /** Forwarded (the core executes it), then the connection is reset instead of answering. */
  | { kind: 'drop-response' }
  /** Never forwarded, never answered: the client's time-out decides. */
  | { kind: 'hang' };

export interface ProxiedRequest {
  method: string;
  path: string;
}

export type FaultRule = (request: ProxiedRequest) => ProxyFault;

export interface ProxyLogEntry extends ProxiedRequest {
  fault: ProxyFault['kind'];
  /** Whether the request reached the core. */
  forwarded: boolean;
}

export const passThrough: FaultRule = () => ({ kind: 'pass' });

/** Only requests whose path matches meet the fault; others pass (e.g. faults on POSTs, not on lookups). */
export function onRequests(match: (request: ProxiedRequest) => boolean, fault: ProxyFault): FaultRule {
  return (request) => (match(request) ? fault : { kind: 'pass' });
}

export const isCommand = (request: ProxiedRequest): boolean => request.method === 'POST';

export class FaultProxy {
  /** The answers held by a hold-response fault: `answerHeld()` resolves when the next arrives, `release()` lets them go. */
  readonly #held = new Gate();

  rule: FaultRule = passThrough;
  readonly log: ProxyLogEntry[] = [];
  readonly #server: Server;
  readonly #target: URL;
  readonly #sockets = new Set<Socket>();
  readonly #timers = new Set<NodeJS.Timeout>();
  #url = '';

  private constructor(target: string) {
    this.#target = new URL(target);
    this.#server = createServer((request, response) => void this.#handle(request, response));
    this.#server.on('connection', (socket) => {
      this.#sockets.add(socket);
      socket.on('close', () => this.#sockets.delete(socket));
    });
  }

  /** Starts a proxy to `target` (the core's base URL) on a free port of 127.0.0.1. */
  static async start(target: string): Promise<FaultProxy> {
    const proxy = new FaultProxy(target);
    await new Promise<void>((resolve) => proxy.#server.listen(0, '127.0.0.1', resolve));
    proxy.#url = `http://127.0.0.1:${(proxy.#server.address() as AddressInfo).port}`;
    return proxy;
  }

  /** The proxy's base URL: the API's --core-url. */
  get url(): string {
    return this.#url;
  }

  /** Requests that reached the proxy. */
  get received(): number {
    return this.log.length;
  }

  /** Requests the core saw. */
  get forwarded(): number {
    return this.log.filter((entry) => entry.forwarded).length;
  }

  /** Runs `work` with every request meeting `fault` (or the rule), then passes again, even when `work` throws. */
  async withFault<T>(fault: ProxyFault | FaultRule, work: () => Promise<T>): Promise<T> {
    this.rule = typeof fault === 'function' ? fault : () => fault;
    try {
      return await work();
    } finally {
      this.rule = passThrough;
    }
  }

  /** Resolves when the core's answer to the next hold-response request has arrived at the proxy (the core has done the work). */
  answerHeld(): Promise<void> {
    return this.#held.arrived();
  }

  /** Lets every held answer go on (to a caller that may have given up on it). */
  release(): void {
    this.#held.release();
  }

  /** Stops listening and cuts every connection, hanging ones included. */
  async close(): Promise<void> {
    this.#held.release();
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
    for (const socket of this.#sockets) socket.destroy();
    await closed;
  }

  async #handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const proxied = { method: request.method ?? 'GET', path: request.url ?? '/' };
    const fault = this.rule(proxied);
    const entry: ProxyLogEntry = { ...proxied, fault: fault.kind, forwarded: false };
    this.log.push(entry);
    const body = await readAll(request);
    switch (fault.kind) {
      case 'reset':
        request.socket.destroy();
        return;
      case 'hang':
        return;
      case 'respond':
        response.writeHead(fault.status, { 'content-type': fault.contentType ?? 'application/json' }).end(fault.body);
        return;
      case 'latency':
        await this.#sleep(fault.delayMs);
        break;
      default:
        break;
    }
    let answer: { status: number; headers: IncomingHttpHeaders; body: Buffer };
    try {
      entry.forwarded = true;
      answer = await this.#forward(proxied, request.headers, body);
    } catch {
      request.socket.destroy();
      return;
    }
    if (fault.kind === 'drop-response') {
      request.socket.destroy();
      return;
    }
    if (fault.kind === 'delay-response') await this.#sleep(fault.delayMs);
    if (fault.kind === 'hold-response') await this.#held.hold();
    if (response.destroyed || request.socket.destroyed) return;
    const headers = { ...answer.headers };
    delete headers['transfer-encoding'];
    delete headers.connection;
    delete headers['keep-alive'];
    response.writeHead(answer.status, { ...headers, 'content-length': String(answer.body.length) }).end(answer.body);
  }

  #forward(proxied: ProxiedRequest, headers: IncomingHttpHeaders, body: Buffer): Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }> {
    return new Promise((resolve, reject) => {
      const outgoing = httpRequest(
        {
          host: this.#target.hostname,
          port: this.#target.port,
          method: proxied.method,
          path: proxied.path,
          headers: { ...headers, host: this.#target.host, connection: 'close' },
        },
        (answer) => {
          readAll(answer).then((answerBody) => resolve({ status: answer.statusCode ?? 502, headers: answer.headers, body: answerBody }), reject);
        },
      );
      outgoing.on('error', reject);
      outgoing.end(body);
    });
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#timers.delete(timer);
        resolve();
      }, ms);
      this.#timers.add(timer);
    });
  }
}

function readAll(stream: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => resolve(Buffer.concat(chunks)));
    stream.on('error', reject);
  });
}
