/**
 * What a slow or greedy client can hold (docs/security.md): every connection must send a complete
 * request head within `headersTimeoutMs` of opening (or of its previous answer, while kept alive),
 * its whole request within `requestTimeoutMs`, and no more than `connectionsMax` connections are
 * open at once. A socket that sends nothing, or one header byte a second, is closed; the others
 * are served meanwhile (one event loop, no thread per connection).
 */
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Clock } from './core/clock.js';
import { systemClock } from './clock/system-clock.js';

export interface ConnectionLimits {
  /** From a connection's opening to its first complete request head (headers), ms. */
  headersTimeoutMs: number;
  /** A whole request, head and body, ms. */
  requestTimeoutMs: number;
  /** An idle kept-alive connection is closed after this, ms (above common load balancers' 60 s). */
  keepAliveTimeoutMs: number;
  /** Connections open at once; more are refused at accept. */
  connectionsMax: number;
}

export const defaultConnectionLimits: ConnectionLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 72_000,
  connectionsMax: 10_000,
};

/** `clock`: whose timers cut a silent connection (src/core/clock.ts); the system's unless the wiring hands one in. */
export function applyConnectionLimits(server: Server, limits: ConnectionLimits, clock: Clock = systemClock): void {
  server.maxConnections = limits.connectionsMax;
  // node's own headersTimeout covers a head that starts and never ends, checked every 30 s; a
  // connection that never sends a byte is not a request yet and escaped it: cut it here.
  server.headersTimeout = limits.headersTimeoutMs;
  // With TLS the requests arrive on the TLS socket, known once the handshake is done (node cuts
  // a handshake that stalls after its handshakeTimeout).
  const opened = 'setSecureContext' in server ? 'secureConnection' : 'connection';
  server.on(opened, (socket: Socket) => {
    // In the background: a connection waiting for its first byte does not keep the process alive.
    const timer = clock.setTimeout(
      () => {
        if ((socket as AnsweredSocket)[answered] !== true) socket.destroy();
      },
      limits.headersTimeoutMs,
      { background: true },
    );
    socket.once('close', () => timer.clear());
  });
  // A mark on the socket itself: a WeakSet's add on every request cost more than the rest of this.
  server.on('request', (request) => {
    (request.socket as AnsweredSocket)[answered] = true;
  });
}

const answered = Symbol('coregate.answered');

type AnsweredSocket = Socket & { [answered]?: boolean };
