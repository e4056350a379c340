/**
 * Where the core's records live. With the embedded core they are in the API's own database; with
 * a remote core (`--core-url`) they are the core's alone, and the API's database must hold no
 * copy of them: an operator acting on a stale copy (an advance that "ran" on it, balances that
 * never moved) is worse than a refusal. So an API started with `--core-url` records the core's URL
 * in its database, and every command that reads or changes the core's data on that database is
 * sent to the core or refused, naming `--core-url`. An API started on an in-process core (a bank's
 * TypeScript adapter, `startCoregate(config, { core })`) is the same case without a URL: it
 * records `inProcessCore` instead, and the refusals say where that core's records are.
 */
import { coreDataSections, type CoreDataDocument } from '../core/port.js';
import type { Queryable } from '../store/queryable.js';
import { getSetting, putSetting } from '../store/settings.js';
import type { SandboxData } from './data-file.js';

/** The setting that says this API database serves a remote core, and which (its URL, credentials redacted). */
export const remoteCoreSetting = 'api.remoteCore';

/** What the setting holds for an API started on an in-process core (StartOptions.core): no URL to name. */
export const inProcessCore = 'in-process core';

export async function recordedRemoteCore(db: Queryable): Promise<string | undefined> {
  return getSetting(db, remoteCoreSetting);
}

export async function recordRemoteCore(db: Queryable, url: string): Promise<void> {
  if ((await recordedRemoteCore(db)) !== url) await putSetting(db, remoteCoreSetting, url);
}

/** The data file's core part, as the port's load side takes it; undefined when the file has none. */
export function corePart(data: SandboxData): CoreDataDocument | undefined {
  const part = Object.fromEntries(coreDataSections.flatMap((section) => (data[section] === undefined ? [] : [[section, data[section]]])));
  return Object.keys(part).length === 0 ? undefined : part;
}

/** What a command says when the core's records are not in this database. */
export function remoteCoreRefusal(what: string, recorded: string): string {
  if (recorded === inProcessCore) {
    return `${what} reads or changes the core's records, and this database's API runs on an in-process core (startCoregate(config, { core }), docs/core-port.md): its records are that core's, not here. Ask that core, or serve it over the protocol and pass --core-url URL`;
  }
  return `${what} reads or changes the core's records, and this database's core is remote (${recorded}, recorded by \`coregate serve --core-url\`): its records are in the core, not here. Pass --core-url ${recorded} (or set COREGATE_CORE_URL)`;
}

/** What an embedded start on such a database is told: how to start it on its own core instead. */
export function coreElsewhereRemedy(recorded: string): string {
  if (recorded === inProcessCore) return `whose core is an in-process core (startCoregate(config, { core })): its core tables are not the bank's records. Start it with that core`;
  return `whose core is remote (${recorded}): its core tables are not the bank's records. Start with --core-url ${recorded} (or COREGATE_CORE_URL)`;
}
