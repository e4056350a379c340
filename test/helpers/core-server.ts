/**
 * Starts the reference core's HTTP service (`coregate core serve`, in-process: real HTTP, real
 * store) on a free port for a test, with its logs captured in memory.
 */
import { Writable } from 'node:stream';
import { findAccount } from '../../src/reference-core/storage/banking.js';
import { resolveCoreServiceConfig, type CoreServiceFlags } from '../../src/core-http/core-config.js';
import { startCoreService, type CoreService } from '../../src/core-http/core-service.js';
import { demoDataFile } from './server.js';
import { coreTablesOf } from '../../src/reference-core/storage/core-db.js';
import { embedded } from './stores.js';

export interface TestCoreServer {
  service: CoreService;
  url: string;
  logLines: string[];
  /** An account's balance in minor units, from the core's own store. */
  balanceOf(accountNumber: string): Promise<bigint>;
  /** Ledger movements the core recorded under an operation reference. */
  movementsOf(reference: string): Promise<number>;
  close(): Promise<void>;
}

export async function startTestCoreServer(options: { db: string; data?: string; flags?: CoreServiceFlags }): Promise<TestCoreServer> {
  const logLines: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, callback) {
      logLines.push(...String(chunk).split('\n').filter((line) => line !== ''));
      callback();
    },
  });
  const config = resolveCoreServiceConfig({ port: '0', host: '127.0.0.1', db: options.db, data: options.data ?? demoDataFile, ...options.flags }, {});
  const service = await startCoreService(config, { log: { destination, level: 'debug' } });
  return {
    service,
    url: service.url,
    logLines,
    async balanceOf(accountNumber) {
      const account = await findAccount(coreTablesOf(service.store.db), accountNumber);
      if (!account) throw new Error(`the core has no account ${accountNumber}`);
      return account.balanceMinor;
    },
    async movementsOf(reference) {
      return (await embedded(service.store.db).selectFrom('movements').select('id').where('reference', '=', reference).execute()).length;
    },
    close: () => service.close(),
  };
}
