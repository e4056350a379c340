/**
 * The conformance kit's rules (test/port/conformance.ts) against the embedded reference core, on
 * each store; the reference core against hand-computed numbers (reference-core-expectations.ts);
 * and its read side over the demo data (records-conformance.ts).
 */
import { createLogger } from '../../src/log.js';
import { openReferenceCore } from '../../src/core-http/core-service.js';
import { findAccount } from '../../src/reference-core/storage/banking.js';
import { coreTablesOf } from '../../src/reference-core/storage/core-db.js';
import { storeTargets } from '../helpers/stores.js';
import { conformanceDataFile, describeCoreConformance } from './conformance.js';
import { describeCoreRecordsConformance } from './records-conformance.js';
import { describeReferenceCoreExpectations } from './reference-core-expectations.js';

for (const target of storeTargets) {
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
  describeCoreConformance(`embedded reference core [${target.name}]`, open, {
    skip: target.skip,
    skipped: { 'failures.malformed-command': 'an in-process core has no wire' },
  });
  describeReferenceCoreExpectations(`embedded reference core [${target.name}]`, open, { skip: target.skip });
  describeCoreRecordsConformance(`embedded reference core [${target.name}]`, open, { skip: target.skip });
}
