/**
 * Signing keys per realm. Keys persist in the store (sealed by the vault) so that several
 * instances share them; each instance imports them once and caches them until the realm's
 * key generation changes (rotation by the CLI or another instance).
 */
import { KeyObject, randomUUID } from 'node:crypto';
import { exportJWK, importJWK, type CryptoKey, type JWK } from 'jose';
import { epochSecondsOf, type Clock } from '../core/clock.js';
import type { Store } from '../store/connect.js';
import { bumpKeyGeneration, findRealm, type Realm } from '../store/realms.js';
import type { Queryable } from '../store/queryable.js';
import { insertSigningKey, listSigningKeys, retireActiveKeys } from '../store/signing-keys.js';
import { lockForAdministration } from '../store/admin-lock.js';
import type { Vault } from './vault.js';
import { freshSigningKeys, type SigningKeySource } from './signing-key-source.js';

import type { SigningAlgorithm } from './signing-algorithms.js';

/**
 * A retired key stays published this long after the realm's token lifespan, so that tokens it
 * signed just before rotation verify until they expire, whatever the clocks' small skew.
 */
const retiredKeyMarginSeconds = 120;

export interface KeyEntry {
  kid: string;
  alg: SigningAlgorithm;
  publicJwk: JWK;
  publicKey: CryptoKey;
  retiredAt: number | null;
  /** Present only for the active key (retired keys never sign again), for node:crypto's asynchronous sign (jws-sign.ts). */
  signingKey?: KeyObject;
}

interface RealmKeys {
  generation: number;
  entries: KeyEntry[];
}

export class Keyring {
  readonly #store: Store;
  readonly #vault: Vault;
  readonly #clock: Clock;
  readonly #cache = new Map<string, Promise<RealmKeys>>();

  constructor(store: Store, vault: Vault, clock: Clock) {
    this.#store = store;
    this.#vault = vault;
    this.#clock = clock;
  }

  /** The key that signs the realm's new tokens. */
  async activeKey(realm: Realm): Promise<KeyEntry> {
    const keys = await this.#keys(realm);
    const active = keys.entries.find((entry) => entry.retiredAt === null && entry.signingKey);
    if (!active) throw new Error(`realm ${realm.name} has no active signing key`);
    return active;
  }

  /** Keys whose tokens may still be valid: the active one and recently retired ones. */
  async publishedKeys(realm: Realm, nowSeconds = epochSecondsOf(this.#clock)): Promise<KeyEntry[]> {
    const keys = await this.#keys(realm);
    const horizon = nowSeconds - realm.lifespan_seconds - retiredKeyMarginSeconds;
    return keys.entries.filter((entry) => entry.retiredAt === null || entry.retiredAt > horizon);
  }

  #keys(realm: Realm): Promise<RealmKeys> {
    const cached = this.#cache.get(realm.name);
    if (cached) {
      return cached.then((keys) => (keys.generation === realm.key_generation ? keys : this.#reload(realm)));
    }
    return this.#reload(realm);
  }

  #reload(realm: Realm): Promise<RealmKeys> {
    const loading = this.#load(realm);
    this.#cache.set(realm.name, loading);
    loading.catch(() => this.#cache.delete(realm.name));
    return loading;
  }

  async #load(realm: Realm): Promise<RealmKeys> {
    const rows = await listSigningKeys(this.#store.db, realm.name);
    const entries = await Promise.all(
      rows.map(async (row): Promise<KeyEntry> => {
        const alg = row.alg as SigningAlgorithm;
        const publicJwk = JSON.parse(row.public_jwk) as JWK;
        const entry: KeyEntry = {
          kid: row.kid,
          alg,
          publicJwk,
          publicKey: (await importJWK(publicJwk, alg)) as CryptoKey,
          retiredAt: row.retired_at,
        };
        if (row.retired_at === null) {
          entry.signingKey = KeyObject.from((await importJWK(JSON.parse(this.#vault.open(row.private_jwk)) as JWK, alg)) as CryptoKey);
        }
        return entry;
      }),
    );
    return { generation: realm.key_generation, entries };
  }
}

/**
 * Creates the realm's first key when it has none (start-up, data loading); `nowMs` is its creation
 * time, `source` where the key pair comes from (signing-key-source.ts).
 */
export async function ensureSigningKey(db: Queryable, vault: Vault, realm: Realm, nowMs: number, source: SigningKeySource = freshSigningKeys): Promise<void> {
  const keys = await listSigningKeys(db, realm.name);
  if (keys.some((key) => key.retired_at === null)) return;
  await addSigningKey(db, vault, realm.name, realm.signing_alg as SigningAlgorithm, nowMs, source);
}

/**
 * Rotation: a new key becomes active and the old one stays published until its tokens expire.
 * Answers the new key's id.
 */
export async function rotateSigningKey(store: Store, vault: Vault, realmName: string, nowMs: number, alg?: SigningAlgorithm, source: SigningKeySource = freshSigningKeys): Promise<string> {
  return store.db.transaction().execute(async (trx) => {
    await lockForAdministration(store, trx);
    const realm = await findRealm(trx, realmName);
    if (!realm) throw new Error(`Realm "${realmName}" does not exist`);
    await retireActiveKeys(trx, realm.name, Math.floor(nowMs / 1000));
    return addSigningKey(trx, vault, realm.name, alg ?? (realm.signing_alg as SigningAlgorithm), nowMs, source);
  });
}

async function addSigningKey(db: Queryable, vault: Vault, realmName: string, alg: SigningAlgorithm, nowMs: number, source: SigningKeySource): Promise<string> {
  const { publicKey, privateKey } = await source(alg);
  const kid = randomUUID();
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' };
  const privateJwk = { ...(await exportJWK(privateKey)), kid, alg };
  await insertSigningKey(db, {
    kid,
    realm: realmName,
    alg,
    public_jwk: JSON.stringify(publicJwk),
    private_jwk: vault.seal(JSON.stringify(privateJwk)),
    created_at: new Date(nowMs).toISOString(),
    retired_at: null,
  });
  await bumpKeyGeneration(db, realmName, alg);
  return kid;
}
