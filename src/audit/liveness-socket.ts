/**
 * Which processes sharing an audit spool directory are alive (docs/deployment.md, "The audit
 * spool"). Each process listens on a Unix socket of its own in the directory for as long as it
 * may write spool files; another process that can connect to it knows the owner lives, and one
 * whose connection is refused knows the owner died (the kernel closes a dead process's sockets,
 * whatever killed it), so that its files may be claimed and drained.
 *
 * A socket rather than a process id: a pid says nothing across PID namespaces (containers sharing
 * a volume), is reused after a restart (pid 1 in every container), and a frozen process (SIGSTOP)
 * still owns its files: connecting to its socket still succeeds, since the kernel accepts the
 * connection into its backlog. The directory must be local to the host: on a network filesystem
 * another host's socket answers nothing here, and its live owner would be taken for dead.
 */
import { createServer, connect, type Server } from 'node:net';
import { link, rm } from 'node:fs/promises';
import { basename, dirname, join, relative } from 'node:path';

/**
 * The longest socket path the system takes (sun_path: 108 bytes with its terminating NUL on
 * Linux, 104 on macOS and the BSDs: the smaller one).
 */
export const socketPathBytesMax = 103;

/**
 * How a socket at `path` is bound and reached: by its absolute path, or, when that is too long for
 * the system, relative to the working directory (the system resolves it as it does any path, and
 * coregate never changes its working directory). The default spool, `./data/audit-spool`, then
 * works under a working directory of any length. Throws when neither form fits.
 */
export function socketAddress(path: string): string {
  if (Buffer.byteLength(path) <= socketPathBytesMax) return path;
  const fromHere = relative(process.cwd(), path);
  if (Buffer.byteLength(fromHere) <= socketPathBytesMax) return fromHere;
  throw new Error(`the socket path ${path} is longer than the system's ${socketPathBytesMax} bytes, from the working directory too: choose a shorter directory`);
}

export class LivenessSocket {
  private constructor(
    readonly path: string,
    readonly server: Server,
  ) {}

  /**
   * Listens on `path`. The socket is bound under a temporary name and linked into place once it
   * listens: between bind and listen a connection is refused, and a process scanning the
   * directory at that moment would take the new owner for a dead one and remove its socket.
   * Refused (EEXIST) when `path` exists: another process's socket is never replaced.
   */
  static async listen(path: string): Promise<LivenessSocket> {
    // Shorter than the socket's own name (`.<name>.t`), so that whatever form reaches the socket reaches this too.
    const binding = join(dirname(path), `.${basename(path, '.sock')}.t`);
    socketAddress(path);
    await rm(binding, { force: true });
    // Nothing is read or written: a connection proves the owner lives and is closed at once.
    const server = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      // exclusive: in a worker of node:cluster the worker listens itself; shared through the
      // primary, the socket would outlive the worker that owns the files.
      server.listen({ path: socketAddress(binding), exclusive: true }, () => {
        server.off('error', reject);
        resolve();
      });
    });
    // A listening Unix socket raises no error of its own afterwards; one must not end the process.
    server.on('error', () => {});
    // It must not keep the process alive: it lives as long as the process does, no longer.
    server.unref();
    try {
      // A socket linked under another name keeps listening: connections reach it by that name.
      await link(binding, path);
    } catch (error) {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      throw error;
    } finally {
      await rm(binding, { force: true });
    }
    return new LivenessSocket(path, server);
  }

  /** Stops listening and removes the socket: from now on the owner's files may be claimed. */
  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    await rm(this.path, { force: true });
  }
}

/**
 * Whether the owner of the socket at `path` lives: `alive` when it accepts a connection, `dead`
 * when the connection is refused or the socket is gone, `unknown` otherwise (a permission, a full
 * backlog): an owner that cannot be proved dead keeps its files.
 */
export function ownerState(path: string): Promise<'alive' | 'dead' | 'unknown'> {
  return new Promise((resolve) => {
    let address: string;
    try {
      address = socketAddress(path);
    } catch {
      return resolve('unknown');
    }
    const socket = connect({ path: address });
    socket.once('connect', () => {
      socket.destroy();
      resolve('alive');
    });
    socket.once('error', (error: NodeJS.ErrnoException) => {
      socket.destroy();
      resolve(error.code === 'ECONNREFUSED' || error.code === 'ENOENT' ? 'dead' : 'unknown');
    });
  });
}
