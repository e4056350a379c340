/** The port conformance suite against the embedded reference core, on each store. */
import { createLogger } from '../../src/log.js';
import { openReferenceCore } from '../../src/core-http/core-service.js';
import { findAccount } from '../../src/reference-core/storage/banking.js';
import { storeTargets } from '../helpers/stores.js';
import { conformanceDataFile, describeCorePortConformance } from './conformance.js';
import { describeCoreRecordsConformance } from './records-conformance.js';
import { coreTablesOf } from '../../src/reference-core/storage/core-db.js';

for (const target of storeTargets) {
  // One opener for both suites: the records suite reads the same core, without balanceOf.
  const open = async () => {
    const created = await target.create();
    const { store, core } = await openReferenceCore({ db: created.url, dataFile: conformanceDataFile, businessDate: undefined }, createLogger({ level: 'silent' }));
    return {
      port: core,
      async balanceOf(accountNumber: string) {
        const account = await findAccount(coreTablesOf(store.db), accountNumber);
        if (!account) throw new Error(`no account ${accountNumber}`);
        return account.balanceMinor;
      },
      async close() {
        await store.close();
        await created.drop();
      },
    };
  };
  describeCorePortConformance(`embedded reference core [${target.name}]`, open, { skip: target.skip });
  describeCoreRecordsConformance(`embedded reference core [${target.name}]`, open, { skip: target.skip });
}
