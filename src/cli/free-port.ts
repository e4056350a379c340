/** For `serve --workers` with port 0, the bench and the tests: a port to bind next. */
import { createServer } from 'node:net';

/** A port free on `host` right now (the caller binds it next; another process could take it first). */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, host, () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
