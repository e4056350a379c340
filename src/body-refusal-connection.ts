/**
 * Whether a connection may stay open after a refused request body. Fastify answers every body it
 * could not take (over the limit: 413; not JSON: 400) with `Connection: close`, because the client
 * may still be sending. Node's HTTP server reads and discards what is left of a request's body
 * once its answer is sent (its `_dump`), so a body whose length was declared can be skipped
 * instead: the client keeps its connection and hears the answer rather than a reset while it
 * sends (issue 28: each 413 cost a new connection, ~6× a retrieve's CPU). A declared length past
 * `bodySkipBytesMax`, or a chunked body (its end unknown), still closes: nobody is made to read
 * gigabytes to keep a connection. Node's request time-out no longer watches a request once it is
 * answered, so the skipped rest has its own: a client trickling it (slow loris) loses the
 * connection after the request time-out, as one trickling a body that was not refused does.
 */
import type { IncomingMessage } from 'node:http';
import type { FastifyRequest } from 'fastify';

/** The most of a refused body read and discarded to keep its connection (16 × the 64 KiB limit). */
export const bodySkipBytesMax = 1024 * 1024;

const decimalLength = /^\d{1,16}$/;

/** True when the request declared a body of at most bodySkipBytesMax bytes (Content-Length). */
export function refusedBodyCanBeSkipped(request: FastifyRequest): boolean {
  const length = request.headers['content-length'];
  return length !== undefined && decimalLength.test(length) && Number(length) <= bodySkipBytesMax;
}

/** Closes the request's connection unless the rest of its body has arrived within `withinMs` (skipped by Node meanwhile). */
export function boundBodySkipping(request: IncomingMessage, withinMs: number): void {
  if (request.complete) return;
  const timer = setTimeout(() => request.socket.destroy(), withinMs);
  timer.unref();
  const done = () => clearTimeout(timer);
  request.once('end', done);
  request.once('close', done);
}
