/**
 * The reference core's load side for sandbox data (CoreDataLoad in src/core/port.ts): the data
 * file's core part, checked with the data file's own schema and loaded with its own rules (only
 * missing records are added, in one transaction, under the administration lock). The API's part
 * (realms, webhooks) is refused here: it belongs to the API's database, never to the core's.
 */
import { CoreDataRefused, coreDataSections, type CoreDataLoad } from '../../core/port.js';
import { DataFileError, parseSandboxData, type SandboxData } from '../../sandbox/data-file.js';
import { loadCoreSandboxData } from '../../sandbox/load.js';
import type { Store } from '../../store/connect.js';

export function coreDataLoad(store: Store): CoreDataLoad {
  return {
    async loadData(document) {
      const foreign = Object.keys(document).find((section) => !(coreDataSections as readonly string[]).includes(section));
      if (foreign !== undefined) {
        throw new CoreDataRefused(foreign, `${foreign} is not the core's: the core takes ${coreDataSections.join(', ')}; realms and webhooks belong to the API (coregate serve --data)`);
      }
      let data: SandboxData;
      try {
        data = parseSandboxData(document, 'core data');
      } catch (error) {
        if (error instanceof DataFileError) throw new CoreDataRefused(error.field, error.message);
        throw error;
      }
      return loadCoreSandboxData(store, data);
    },
  };
}
