/**
 * A webhook receiver for the tests: a real node:http server that records every request (headers
 * and raw body) and answers the status `respond` decides (200 unless told otherwise).
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TargetPolicy } from '../../src/webhooks/target-address.js';
import type { TestServer } from '../helpers/server.js';

/**
 * The receivers listen on 127.0.0.1, a loopback address: registering them and delivering to them
 * takes the sandbox's opt-in (--webhook-allow-private), which the suites give the server through
 * its environment and the registrations through this policy.
 */
export const loopbackTargets: TargetPolicy = { allowPrivate: true };
export const loopbackEnv = { COREGATE_WEBHOOK_ALLOW_PRIVATE: 'true' } as const;

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  /** The parsed body. */
  event: { type: string; timestamp: string; data: Record<string, any> };
  /** What the receiver answered. */
  status: number;
}

export class Receiver {
  readonly received: Received[] = [];
  /** TCP connections accepted: a refused target must not even connect. */
  connections = 0;
  /** Decides the answer to each request; 200 by default. */
  respond: (event: Received['event'], headers: IncomingHttpHeaders) => number = () => 200;

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(port = 0): Promise<Receiver> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', resolve);
    });
    const receiver = new Receiver(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`);
    server.on('connection', () => {
      receiver.connections += 1;
    });
    server.on('request', (request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const event = JSON.parse(body) as Received['event'];
        const status = receiver.respond(event, request.headers);
        receiver.received.push({ headers: request.headers, body, event, status });
        response.writeHead(status, { 'content-type': 'text/plain' }).end(status < 300 ? 'ok' : 'not now');
      });
    });
    return receiver;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** Requests about the operation with this correlation id. */
  about(correlationId: string): Received[] {
    return this.received.filter((request) => request.event.data.correlationId === correlationId);
  }

  /**
   * The requests about the correlation id that have arrived so far, failing unless there are at
   * least `count`: a test drains the webhooks (drainWebhooks) and then asserts what arrived. An
   * attempt ends when its answer is read, and the receiver records a request before answering it.
   */
  arrived(correlationId: string, count = 1): Received[] {
    const found = this.about(correlationId);
    if (found.length < count) throw new Error(`expected ${count} webhook request(s) about ${correlationId}, ${found.length} arrived`);
    return found;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/**
 * Drives the webhook work of every instance (two in the two-instances deployment) until nothing is
 * due by its clock: events relayed, fanned out, and every due delivery attempted and answered.
 */
export async function drainWebhooks(server: TestServer): Promise<void> {
  for (const instance of server.instances) {
    // A pass under way (the loop's timer, fired while the test moved the clock) may have read the
    // clock before the time the test moved it to: it ends first, then the drain's passes read it.
    await instance.background.webhooks.runOnce();
    await instance.background.webhooks.drain();
  }
}
