/**
 * The conformance kit's rules (test/port/conformance.ts) against the HTTP adapter (HttpCore) in
 * front of a started core server (`coregate core serve`, in-process), on each store: the remote
 * core protocol carries every rule of the port, at most once included; the same hand-computed
 * numbers as embedded (reference-core-expectations.ts); and the reference core's read side over
 * the demo data through the protocol (records-conformance.ts).
 */
import { HttpCore } from '../../src/core-http/http-core-adapter.js';
import { startTestCoreServer } from '../helpers/core-server.js';
import { storeTargets } from '../helpers/stores.js';
import { conformanceDataFile, describeCoreConformance } from './conformance.js';
import { describeCoreRecordsConformance } from './records-conformance.js';
import { describeReferenceCoreExpectations } from './reference-core-expectations.js';

for (const target of storeTargets) {
  const open = async () => {
    const created = await target.create();
    const server = await startTestCoreServer({ db: created.url, data: conformanceDataFile });
    const port = new HttpCore({ url: server.url, timeoutMs: 10_000 });
    return {
      port,
      coreUrl: server.url,
      balanceOf: (accountNumber: string) => server.balanceOf(accountNumber),
      async close() {
        await port.close();
        await server.close();
        await created.drop();
      },
    };
  };
  describeCoreConformance(`HTTP adapter in front of a core server [${target.name}]`, open, { skip: target.skip });
  describeReferenceCoreExpectations(`HTTP adapter in front of a core server [${target.name}]`, open, { skip: target.skip });
  describeCoreRecordsConformance(`HTTP adapter in front of a core server [${target.name}]`, open, { skip: target.skip });
}
