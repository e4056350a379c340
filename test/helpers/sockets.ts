/**
 * Raw TCP connections to a started server, for the tests of its connection limits
 * (src/connection-limits.ts): a connection that sends nothing, and the wait for the server to
 * close it.
 */
import { connect, type Socket } from 'node:net';

/** A connection to `url`'s host and port, open and silent. */
export function openSocket(url: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => resolve(socket));
    socket.once('error', reject);
  });
}

/**
 * Resolves with how long the socket stayed open, from now, once the server closes it (0 when it
 * already has); fails after `limitMs`.
 */
export function closedWithin(socket: Socket, limitMs: number): Promise<number> {
  const started = Date.now();
  // On a loaded machine the server may close it before the caller gets here: its 'close' event has
  // then been emitted already and would never come again (a pair of whole runs failed so).
  if (socket.closed) return Promise.resolve(0);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`still open after ${limitMs} ms`)), limitMs);
    // A reset is as good as a close here: the server let go of it.
    socket.on('error', () => {});
    socket.once('close', () => {
      clearTimeout(timer);
      resolve(Date.now() - started);
    });
  });
}
