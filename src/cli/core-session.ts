/**
 * How an operator command reaches the core's records: through the port, never through a table.
 * With `--core-url` (or COREGATE_CORE_URL) the remote core answers over its protocol; otherwise
 * the embedded reference core on `--db`. A database whose core is remote (an API started with
 * `--core-url` recorded it: src/sandbox/core-placement.ts) holds no records of the core, so a
 * command on it without `--core-url` is refused, naming the URL to pass, rather than answering
 * from stale tables.
 */
import { defaultDbUrl } from '../config.js';
import type { CoreBankingPort, CoreDataLoad, CoreRecords } from '../core/port.js';
import { migrateEmbeddedCore, referenceCoreOn } from '../reference-core/embedded-core.js';
import { recordedRemoteCore, remoteCoreRefusal } from '../sandbox/core-placement.js';
import { openStore, type Store } from '../store/connect.js';
import { tableExists } from '../store/table-exists.js';
import { CommandError } from './command-error.js';
import type { Clock } from '../core/clock.js';
import type { CommandContext } from './command-io.js';

/** `env`: COREGATE_DB, COREGATE_CORE_URL; `clock`: the core's time, embedded or the remote adapter's (src/cli/command-io.ts). */
export interface CoreFlags extends CommandContext {
  db?: string;
  coreUrl?: string;
}

/** A core with the read and load sides, as operator commands use it. */
export type OperatorCore = CoreBankingPort & CoreRecords & CoreDataLoad;

/** A remote call may run long (an advance runs many end of days): the adapter waits this long. */
const remoteTimeoutMs = 60_000;

export function coreUrlOf(flags: CoreFlags): string | undefined {
  return flags.coreUrl ?? flags.env.COREGATE_CORE_URL;
}

/** `what`: the command, named in a refusal ("coregate accounts list"). */
export async function withCore<T>(flags: CoreFlags, what: string, work: (core: OperatorCore, store: Store | undefined) => Promise<T>): Promise<T> {
  const coreUrl = coreUrlOf(flags);
  if (coreUrl !== undefined) {
    // Imported here: a command on the embedded core never loads the HTTP client.
    const { connectRemoteCore } = await import('../core-http/connect-remote-core.js');
    const remote = connectRemoteCore(coreUrl, remoteTimeoutMs, { clock: flags.clock });
    try {
      return await work(remote, undefined);
    } finally {
      await remote.close();
    }
  }
  return withEmbeddedCore(flags.db ?? flags.env.COREGATE_DB ?? defaultDbUrl, what, flags.clock, work);
}

/**
 * The embedded reference core on `db` (the API's database, or a core's own with `--core-db`),
 * refused when that database belongs to an API whose core is remote: checked before the core's
 * migrations could add its tables there.
 */
export async function withEmbeddedCore<T>(db: string, what: string, clock: Clock, work: (core: OperatorCore, store: Store) => Promise<T>): Promise<T> {
  const store = await openStore(db);
  try {
    const recorded = (await tableExists(store, 'settings')) ? await recordedRemoteCore(store.db) : undefined;
    if (recorded !== undefined) throw new CommandError(remoteCoreRefusal(what, recorded));
    await migrateEmbeddedCore(store);
    return await work(await referenceCoreOn(store, undefined, clock), store);
  } finally {
    await store.close();
  }
}
