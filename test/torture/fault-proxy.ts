/**
 * A fault-injecting HTTP proxy between the API instances and the remote core, for the torture
 * test: each request meets at random no fault, latency, a hold past the API's time-out, a 5xx
 * without reaching the core, a connection reset before the core sees it, or a response dropped
 * after the core executed. Every fault injected is counted by kind.
 */
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type FaultKind = 'none' | 'latency' | 'timeout' | '5xx' | 'reset' | 'dropped-after-execution';

export interface FaultProxyOptions {
  targetPort: number;
  /** Weights of each fault kind (relative). */
  weights: Record<FaultKind, number>;
  /** How long a `timeout` holds the answer: longer than the API's core time-out. */
  holdMs: number;
  random?: () => number;
}

export class FaultProxy {
  readonly counts: Record<FaultKind, number> = { none: 0, latency: 0, timeout: 0, '5xx': 0, reset: 0, 'dropped-after-execution': 0 };
  #server: Server | undefined;
  #enabled = true;

  constructor(private readonly options: FaultProxyOptions) {}

  get port(): number {
    return (this.#server?.address() as AddressInfo | null)?.port ?? 0;
  }

  /** Faults on or off (off: a plain proxy, for the final drain). */
  set enabled(value: boolean) {
    this.#enabled = value;
  }

  async start(): Promise<void> {
    this.#server = createServer((request, response) => this.#handle(request, response));
    this.#server.keepAliveTimeout = 5_000;
    await new Promise<void>((resolve) => this.#server?.listen(0, '127.0.0.1', resolve));
  }

  async close(): Promise<void> {
    this.#server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.#server ? this.#server.close(() => resolve()) : resolve()));
  }

  #pick(): FaultKind {
    if (!this.#enabled) return 'none';
    const entries = Object.entries(this.options.weights) as Array<[FaultKind, number]>;
    const total = entries.reduce((sum, [, weight]) => sum + weight, 0);
    let point = (this.options.random ?? Math.random)() * total;
    for (const [kind, weight] of entries) {
      point -= weight;
      if (point < 0) return kind;
    }
    return 'none';
  }

  #handle(request: IncomingMessage, response: ServerResponse): void {
    const fault = this.#pick();
    this.counts[fault] += 1;
    if (fault === 'reset') {
      request.socket.destroy();
      return;
    }
    if (fault === '5xx') {
      request.resume();
      response.writeHead(503, { 'content-type': 'application/json' }).end('{"error":"injected"}');
      return;
    }
    const delayMs = fault === 'latency' ? 20 + Math.floor(Math.random() * 300) : 0;
    setTimeout(() => this.#forward(request, response, fault), delayMs);
  }

  #forward(request: IncomingMessage, response: ServerResponse, fault: FaultKind): void {
    const upstream = httpRequest(
      { host: '127.0.0.1', port: this.options.targetPort, method: request.method, path: request.url, headers: request.headers },
      (answer) => {
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.on('end', () => {
          if (fault === 'dropped-after-execution') {
            // The core has answered (and executed): the API never hears of it.
            response.socket?.destroy();
            return;
          }
          const relay = () => {
            if (response.destroyed) return;
            response.writeHead(answer.statusCode ?? 502, answer.headers).end(Buffer.concat(chunks));
          };
          if (fault === 'timeout') setTimeout(relay, this.options.holdMs);
          else relay();
        });
        answer.on('error', () => response.socket?.destroy());
      },
    );
    upstream.on('error', () => response.socket?.destroy());
    request.pipe(upstream);
  }
}
