/** The store-wide key of the client-secret HMAC: created once, sealed by the vault, cached in memory. */
import { randomBytes } from 'node:crypto';
import type { Queryable } from '../store/queryable.js';
import { getOrInitSetting } from '../store/settings.js';
import type { Vault } from './vault.js';

/** Its settings row: the one setting a sandbox reset keeps (src/sandbox/reset.ts). */
export const secretHashKeySetting = 'client_secret_hash_key';
const settingName = secretHashKeySetting;

export async function loadSecretHashKey(db: Queryable, vault: Vault): Promise<Buffer> {
  const sealed = await getOrInitSetting(db, settingName, () => vault.seal(randomBytes(32).toString('base64')));
  return Buffer.from(vault.open(sealed), 'base64');
}
