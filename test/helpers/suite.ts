/** Runs a suite once per store (SQLite, PostgreSQL), each with its own fresh store and server. */
import { after, before, describe } from 'node:test';
import { startTestServer, type TestServer, type TestServerOptions } from './server.js';
import { storeTargets, type CreateOptions, type StoreTarget } from './stores.js';

export interface SuiteContext {
  /** The running server (available inside tests and hooks, not at definition time). */
  server(): TestServer;
  /** The store URL of this suite. */
  dbUrl(): string;
  target: StoreTarget;
}

export function describeEachStore(
  title: string,
  body: (context: SuiteContext) => void,
  options: Omit<TestServerOptions, 'db'> = {},
): void {
  for (const target of storeTargets) {
    describe(`${title} [${target.name}]`, { skip: target.skip }, () => {
      let server: TestServer | undefined;
      let url: string | undefined;
      let drop: (() => Promise<void>) | undefined;
      before(async () => {
        const created = await target.create();
        url = created.url;
        drop = created.drop;
        server = await startTestServer({ ...options, db: created.url });
      });
      after(async () => {
        await server?.close();
        await drop?.();
      });
      body({
        server: () => {
          if (!server) throw new Error('server not started');
          return server;
        },
        dbUrl: () => {
          if (!url) throw new Error('store not created');
          return url;
        },
        target,
      });
    });
  }
}

/**
 * Runs a test body once per store with a fresh store URL (for tests that manage servers): a migrated
 * copy of the run's template, or an empty store with `{ empty: true }`.
 */
export function describeEachStoreUrl(title: string, body: (context: { dbUrl(): string; target: StoreTarget }) => void, options: CreateOptions = {}): void {
  for (const target of storeTargets) {
    describe(`${title} [${target.name}]`, { skip: target.skip }, () => {
      let url: string | undefined;
      let drop: (() => Promise<void>) | undefined;
      before(async () => {
        const created = await target.create(options);
        url = created.url;
        drop = created.drop;
      });
      body({
        dbUrl: () => {
          if (!url) throw new Error('store not created');
          return url;
        },
        target,
      });
      // Registered after the body's own hooks, so that servers the body started are closed first.
      after(async () => {
        await drop?.();
      });
    });
  }
}
