/**
 * A started server on a fresh SQLite store for the tests of one suite: started before them,
 * closed and its store deleted after. For the suites whose rule does not depend on the store
 * (limits, ports); the store-backed suites run on every store (suite.ts).
 */
import { after, before } from 'node:test';
import { startTestServer, type TestServer, type TestServerOptions } from './server.js';
import { storeTargets } from './stores.js';

/** Registers the suite's before and after hooks; answers the running server (a throw before it started). */
export function serverOnFreshSqlite(options: Omit<TestServerOptions, 'db'> = {}): () => TestServer {
  let server: TestServer | undefined;
  let drop: (() => Promise<void>) | undefined;
  before(async () => {
    const sqlite = storeTargets.find((target) => target.name === 'sqlite');
    if (!sqlite) throw new Error('no SQLite store target');
    const created = await sqlite.create();
    drop = created.drop;
    server = await startTestServer({ ...options, db: created.url });
  });
  after(async () => {
    await server?.close();
    await drop?.();
  });
  return () => {
    if (!server) throw new Error('server not started');
    return server;
  };
}
