/**
 * `coregate sandbox reset`: empties the store and loads the data file again (src/sandbox/reset.ts).
 * Destructive, so it asks first: on a terminal the operator types "reset"; without a terminal
 * (a script, CI) it refuses unless --yes says the caller meant it.
 */
import { createInterface } from 'node:readline/promises';
import { Vault } from '../auth/vault.js';
import { defaultDbUrl, webhookAllowPrivateSetting } from '../config.js';
import { readSandboxFile } from '../sandbox/data-file.js';
import { resetSandbox, type ResetSummary } from '../sandbox/reset.js';
import { openStore, redactUrl } from '../store/connect.js';
import { migrateToLatest } from '../store/migrate.js';
import { loadSecretHashKey } from '../auth/secret-hash-key.js';
import { CommandError } from './command-error.js';
import { CoreDataRefused } from '../core/port.js';
import { migrateEmbeddedCore } from '../reference-core/embedded-core.js';
import { corePart, recordedRemoteCore, remoteCoreRefusal } from '../sandbox/core-placement.js';
import { coreUrlOf } from './core-session.js';
import type { CommandContext, CommandIo } from './command-io.js';

/** `clock`: the reset's time (new signing keys, records' dates) and its waits (command-io.ts's CommandContext). */
export interface SandboxResetFlags extends CommandContext {
  db?: string;
  data: string;
  yes?: boolean;
  /** The file's webhook endpoints may name loopback and private addresses (as `coregate serve --webhook-allow-private`). */
  webhookAllowPrivate?: boolean;
  /** The remote core of this API (its database records it): the file's core part goes there. */
  coreUrl?: string;
}

/** Answers the summary, or undefined when the operator declined. */
export async function sandboxReset(flags: SandboxResetFlags, io: CommandIo): Promise<ResetSummary | undefined> {
  const dbUrl = flags.db ?? flags.env.COREGATE_DB ?? defaultDbUrl;
  // The file is checked before anything is asked or deleted: a typo must not empty the store.
  const data = readSandboxFile(flags.data, '--data');
  const webhookTargets = { allowPrivate: webhookAllowPrivateSetting(flags.webhookAllowPrivate, flags.env) };
  if (!flags.yes && !(await confirmed(io, redactUrl(dbUrl), flags.data))) return undefined;
  const vault = new Vault(flags.env.COREGATE_MASTER_KEY);
  const store = await openStore(dbUrl);
  try {
    await migrateToLatest(store);
    // Refuses a missing or wrong master key before anything is deleted.
    await loadSecretHashKey(store.db, vault);
    // With a remote core its records are the core's: checked before anything is deleted.
    const recorded = await recordedRemoteCore(store.db);
    const coreUrl = coreUrlOf(flags);
    if (recorded !== undefined && coreUrl === undefined) throw new CommandError(remoteCoreRefusal('coregate sandbox reset', recorded));
    if (recorded === undefined && coreUrl !== undefined) throw new CommandError(`--core-url: this database's core is embedded (its records are here); leave --core-url out`);
    // The embedded core's tables (its own migrations) are emptied and loaded again with the API's.
    if (recorded === undefined) await migrateEmbeddedCore(store);
    const summary = await resetSandbox(store, vault, data, { webhookTargets, clock: flags.clock });
    const part = corePart(data);
    if (coreUrl === undefined || part === undefined) return summary;
    const { connectRemoteCore } = await import('../core-http/connect-remote-core.js');
    const core = connectRemoteCore(coreUrl, 60_000, { clock: flags.clock });
    try {
      return { ...summary, accountsAdded: (await core.loadData(part)).accountsAdded };
    } catch (error) {
      if (error instanceof CoreDataRefused) throw new CommandError(`The API's records were reset, but the core refused the data file's core part at ${error.field}: ${error.message}`);
      throw error;
    } finally {
      await core.close();
    }
  } finally {
    await store.close();
  }
}

async function confirmed(io: CommandIo, store: string, file: string): Promise<boolean> {
  if (!io.stdin.isTTY) {
    throw new CommandError('sandbox reset deletes every deposit, operation and balance change: add --yes to confirm (no terminal to ask)');
  }
  const prompt = createInterface({ input: io.stdin, output: io.stderr });
  try {
    const answer = await prompt.question(`This empties ${store} and loads ${file} again: every deposit, operation, posting and audit record is deleted.\nType "reset" to confirm: `);
    return answer.trim() === 'reset';
  } finally {
    prompt.close();
  }
}

export function describeReset(summary: ResetSummary): string {
  return [
    `Sandbox reset: ${summary.tablesEmptied.length} tables emptied (${summary.rowsDeleted} rows deleted), data file loaded again.`,
    `Realms kept with their signing keys: ${summary.realmsKept.join(', ') || '-'}; realms deleted: ${summary.realmsDeleted.join(', ') || '-'}.`,
    `Loaded: ${summary.realmsAdded} realms added, ${summary.clientsAdded} clients, ${summary.accountsAdded} accounts.`,
  ].join('\n');
}
