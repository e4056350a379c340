/**
 * The conformance kit's rules (test/port/conformance.ts) against the embedded reference core, on
 * each store; and the reference core's read side over the demo data (records-conformance.ts).
 */
import { createLogger } from '../../src/log.js';
import { openReferenceCore } from '../../src/core-http/core-service.js';
import { storeTargets } from '../helpers/stores.js';
import { conformanceDataFile, describeCoreConformance } from './conformance.js';
import { describeCoreRecordsConformance } from './records-conformance.js';

for (const target of storeTargets) {
  const open = async () => {
    const created = await target.create();
    const { store, core } = await openReferenceCore({ db: created.url, dataFile: conformanceDataFile, businessDate: undefined }, createLogger({ level: 'silent' }));
    return {
      port: core,
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
  describeCoreRecordsConformance(`embedded reference core [${target.name}]`, open, { skip: target.skip });
}
