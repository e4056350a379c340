/**
 * How an operator command holds the store: opened from `--db` (or COREGATE_DB, or the default
 * file), migrated, closed when the command ends. Commands that seal or check a secret open the
 * sealed secret-hash key first, so a missing or wrong COREGATE_MASTER_KEY is refused before
 * anything is written; read-only commands need no key.
 */
import { loadSecretHashKey } from '../auth/secret-hash-key.js';
import { Vault } from '../auth/vault.js';
import { defaultDbUrl } from '../config.js';
import { openStore, type Store } from '../store/connect.js';
import { migrateToLatest } from '../store/migrate.js';
import type { CommandContext } from './command-io.js';

/** `env`: COREGATE_DB, COREGATE_MASTER_KEY; `clock`: the time the command stamps (src/cli/command-io.ts). */
export interface StoreFlags extends CommandContext {
  db?: string;
}

/** Runs `work` on the migrated store; no master key needed. */
export async function withStoreReadOnly<T>(flags: Pick<StoreFlags, 'db' | 'env'>, work: (store: Store) => Promise<T>): Promise<T> {
  const store = await openStore(flags.db ?? flags.env.COREGATE_DB ?? defaultDbUrl);
  try {
    await migrateToLatest(store);
    return await work(store);
  } finally {
    await store.close();
  }
}

/** Runs `work` with the vault of COREGATE_MASTER_KEY, proven to open the store's sealed secrets. */
export async function withSealingStore<T>(flags: Pick<StoreFlags, 'db' | 'env'>, work: (store: Store, vault: Vault) => Promise<T>): Promise<T> {
  const vault = new Vault(flags.env.COREGATE_MASTER_KEY);
  return withStoreReadOnly(flags, async (store) => {
    await loadSecretHashKey(store.db, vault);
    return work(store, vault);
  });
}
