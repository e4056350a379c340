/**
 * Refused request bodies skipped so that their connection stays open. Fastify answers every body
 * it could not take (over the limit: 413; not JSON: 400) with `Connection: close`, because the
 * client may still be sending. Node's HTTP server reads and discards what is left of a request's
 * body once its answer is sent (its `_dump`), so a body whose length was declared can be skipped
 * instead: the client keeps its connection and hears the answer rather than a reset while it
 * sends (issue 28: each 413 cost a new connection, ~6× a retrieve's CPU). A declared length past
 * `bodySkipBytesMax`, or a chunked body (its end unknown), still closes: nobody is made to read
 * gigabytes to keep a connection.
 *
 * The rest must arrive within the request's time-out. Node's own check of it runs only every
 * 30 s (connectionsCheckingInterval), stops with `server.close()`, and would then write a 408
 * after the answer already sent; a timer per skipped body closes the connection at the request's
 * deadline instead, and shutting down closes every connection still skipping.
 */
import type { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import type { FastifyRequest } from 'fastify';
import type { Clock } from './core/clock.js';
import { systemClock } from './clock/system-clock.js';

/** The most of a refused body read and discarded to keep its connection (16 × the 64 KiB limit). */
export const bodySkipBytesMax = 1024 * 1024;

const decimalLength = /^\d{1,16}$/;

/** True when the request declared a body of at most bodySkipBytesMax bytes (Content-Length). */
export function refusedBodyCanBeSkipped(request: FastifyRequest): boolean {
  const length = request.headers['content-length'];
  return length !== undefined && decimalLength.test(length) && Number(length) <= bodySkipBytesMax;
}

export class SkippedBodies {
  /** The connections whose refused body is still arriving, each with what ends its wait. */
  readonly #skipping = new Map<Socket, () => void>();
  readonly #clock: Clock;

  /** `clock`: whose timers hold each request's deadline (src/core/clock.ts); the system's unless the wiring hands one in. */
  constructor(clock: Clock = systemClock) {
    this.#clock = clock;
  }

  /** Closes the request's connection unless the rest of its body has arrived within `withinMs`. */
  skip(request: IncomingMessage, withinMs: number): void {
    const { socket } = request;
    // A request without a connection (Fastify's `inject`, the tests' requests without a socket:
    // docs/testing.md, "Requests without a socket") has nothing to keep open or to close.
    if (request.complete || !(socket instanceof Socket)) return;
    const done = () => {
      timer.clear();
      request.off('end', done);
      socket.off('close', done);
      this.#skipping.delete(socket);
    };
    // Only while the refused body is incomplete: the connection cannot have moved on to another request.
    const close = () => {
      done();
      if (!request.complete) socket.destroy();
    };
    const timer = this.#clock.setTimeout(close, Math.max(0, withinMs), { background: true });
    request.once('end', done);
    // A client that hangs up: Node emits neither 'end' nor 'close' on an answered request then.
    socket.once('close', done);
    this.#skipping.set(socket, close);
  }

  /** Shutting down: the connections still skipping a refused body are closed (server.close() waits for no idle one). */
  closeAll(): void {
    for (const close of [...this.#skipping.values()]) close();
  }

  get size(): number {
    return this.#skipping.size;
  }
}
