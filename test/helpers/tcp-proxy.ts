/**
 * A TCP proxy of a test's own on 127.0.0.1: the address that moves at a failover (a virtual IP, an
 * HAProxy or pgbouncer in front of PostgreSQL). Clients connect to the proxy's port; each
 * connection is piped to the target port of the moment. A test moves the target (`retarget`: new
 * connections go to the new server, open ones stay where they are until cut), cuts every open
 * connection at once (`cutAll`: a network blip, a balancer or pgbouncer restart), and refuses or
 * holds new connections for a while (`pause`/`resume`: the address not yet moved).
 *
 * Plain TCP, unlike test/helpers/fault-proxy.ts, which speaks HTTP to fault single requests; what
 * the two share is the bookkeeping of open sockets so that closing cuts hanging ones too.
 */
import { createConnection, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

/** A client connection and the upstream one it is piped to (undefined while held or connecting). */
interface Pair {
  client: Socket;
  upstream: Socket | undefined;
}

export interface TcpProxyCounts {
  /** Connections accepted from clients. */
  accepted: number;
  /** Connections piped to a target (the target accepted them). */
  forwarded: number;
  /** Connections refused while paused in 'refuse' mode. */
  refused: number;
  /** Connections whose target did not accept them (nothing listening: the server is dead). */
  upstreamFailed: number;
  /** Connections cut by cutAll. */
  cut: number;
  /** Connections open now (held ones included). */
  open: number;
  /** Connections held now, waiting for resume. */
  held: number;
}

export class TcpProxy {
  readonly #server: Server;
  readonly #pairs = new Set<Pair>();
  /** Every socket opened and not closed yet, either side: close() ends them all, half-closed ones included. */
  readonly #sockets = new Set<Socket>();
  readonly #held: Pair[] = [];
  #targetPort: number;
  #paused: 'refuse' | 'hold' | undefined;
  #port = 0;
  readonly #counts = { accepted: 0, forwarded: 0, refused: 0, upstreamFailed: 0, cut: 0 };

  private constructor(targetPort: number) {
    this.#targetPort = targetPort;
    this.#server = createServer((client) => this.#accept(client));
  }

  /** A proxy to 127.0.0.1:`targetPort`, listening on a free port of 127.0.0.1 (or `port`). */
  static async start(targetPort: number, port = 0): Promise<TcpProxy> {
    const proxy = new TcpProxy(targetPort);
    await new Promise<void>((resolve, reject) => {
      proxy.#server.once('error', reject);
      proxy.#server.listen(port, '127.0.0.1', () => resolve());
    });
    proxy.#port = (proxy.#server.address() as AddressInfo).port;
    return proxy;
  }

  /** The port clients connect to. */
  get port(): number {
    return this.#port;
  }

  get targetPort(): number {
    return this.#targetPort;
  }

  get counts(): TcpProxyCounts {
    return { ...this.#counts, open: this.#pairs.size, held: this.#held.length };
  }

  /** New connections go to `port` from now on; open ones are left as they are (cutAll cuts them). */
  retarget(port: number): void {
    this.#targetPort = port;
  }

  /**
   * Destroys every open connection, client and upstream sides, at once; answers how many. 'reset'
   * (the default) sends RST, as a network failure or a killed balancer does; 'close' ends them
   * with FIN, as a restarting pgbouncer does.
   */
  cutAll(how: 'reset' | 'close' = 'reset'): number {
    const pairs = [...this.#pairs];
    this.#held.length = 0;
    for (const pair of pairs) {
      this.#pairs.delete(pair);
      for (const socket of [pair.client, pair.upstream]) {
        if (socket === undefined || socket.destroyed) continue;
        if (how === 'reset') reset(socket);
        else socket.destroy();
      }
    }
    this.#counts.cut += pairs.length;
    return pairs.length;
  }

  /** From now on new connections are refused (accepted and reset at once) or held unanswered until resume. */
  pause(mode: 'refuse' | 'hold' = 'hold'): void {
    this.#paused = mode;
  }

  /** New connections are piped again; held ones are connected to the target of now. */
  resume(): void {
    this.#paused = undefined;
    for (const pair of this.#held.splice(0)) {
      if (!pair.client.destroyed) this.#connect(pair);
    }
  }

  /**
   * Stops listening and cuts every connection. Answers once the listening socket is closed, not
   * when the server's count of connections reaches 0: a connection half-closed by its upstream
   * (which cutAll no longer tracks) is destroyed here, and waiting on node's count of it left a
   * test's promise pending with nothing left in the event loop.
   */
  async close(): Promise<void> {
    this.cutAll('close');
    for (const socket of this.#sockets) socket.destroy();
    this.#server.close();
    this.#server.unref();
  }

  #track(socket: Socket): void {
    this.#sockets.add(socket);
    socket.once('close', () => this.#sockets.delete(socket));
  }

  #accept(client: Socket): void {
    this.#counts.accepted += 1;
    this.#track(client);
    client.on('error', () => {});
    if (this.#paused === 'refuse') {
      this.#counts.refused += 1;
      reset(client);
      return;
    }
    const pair: Pair = { client, upstream: undefined };
    this.#pairs.add(pair);
    client.once('close', () => this.#drop(pair));
    if (this.#paused === 'hold') {
      // Bytes the client sends meanwhile wait in the socket until it is piped.
      client.pause();
      this.#held.push(pair);
      return;
    }
    this.#connect(pair);
  }

  #connect(pair: Pair): void {
    const upstream = createConnection({ host: '127.0.0.1', port: this.#targetPort });
    this.#track(upstream);
    pair.upstream = upstream;
    let connected = false;
    upstream.once('connect', () => {
      connected = true;
      this.#counts.forwarded += 1;
      pair.client.pipe(upstream);
      upstream.pipe(pair.client);
      pair.client.resume();
    });
    upstream.on('error', () => {
      if (!connected) this.#counts.upstreamFailed += 1;
      // The client sees what it would see from a dead server behind a live address: a reset.
      if (!pair.client.destroyed) reset(pair.client);
    });
    upstream.once('close', () => {
      // A server that closed cleanly: the client gets the rest of its bytes, then FIN (pipe ends it).
      if (!pair.client.destroyed) pair.client.end();
      this.#pairs.delete(pair);
    });
  }

  #drop(pair: Pair): void {
    this.#pairs.delete(pair);
    if (pair.upstream && !pair.upstream.destroyed) pair.upstream.destroy();
    const held = this.#held.indexOf(pair);
    if (held >= 0) this.#held.splice(held, 1);
  }
}

/**
 * Destroys with RST. A socket already ended (FIN sent or pending) is only destroyed: on Node 20
 * resetting it fails inside libuv (a pending shutdown) yet marks its handle closing, and the handle,
 * never closed, keeps the process from exiting (it spins at exit, 100 % CPU).
 */
function reset(socket: Socket): void {
  if (socket.writableEnded) socket.destroy();
  else socket.resetAndDestroy();
}
