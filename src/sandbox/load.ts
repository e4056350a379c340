/**
 * Loads a sandbox data file into the store. Idempotent (docs/sandbox.md, "The data file"): records
 * that exist are kept as they are, whatever the file says now; only missing ones are added. One
 * transaction.
 */
import { randomUUID } from 'node:crypto';
import type { Transaction } from 'kysely';
import type { Store } from '../store/connect.js';
import type { Database } from '../store/schema.js';
import { insertClientIfMissing } from '../store/clients.js';
import { findRealm, insertRealmIfMissing } from '../store/realms.js';
import type { Queryable } from '../store/queryable.js';
import { lockForAdministration } from '../store/admin-lock.js';
import { hashClientSecret, noSecretHash } from '../auth/client-secret.js';
import { ensureSigningKey } from '../auth/keyring.js';
import { freshSigningKeys, type SigningKeySource } from '../auth/signing-key-source.js';
import { realmDefaults } from '../auth/signing-algorithms.js';
import { loadSecretHashKey } from '../auth/secret-hash-key.js';
import type { Vault } from '../auth/vault.js';
import { clientAuthenticationOf, DataFileError, realmSigningAlgorithm, type SandboxData } from './data-file.js';
import { coreTablesOf } from '../reference-core/storage/core-db.js';
import { loadCoreData } from '../reference-core/storage/load-core-data.js';
import { findEndpointByUrl } from '../store/webhooks.js';
import { EndpointRefused, registerEndpoint } from '../webhooks/endpoints.js';
import type { TargetPolicy } from '../webhooks/target-address.js';
import { dateOf, type Clock } from '../core/clock.js';
import { systemClock } from '../clock/system-clock.js';

export interface LoadSummary {
  realmsAdded: number;
  clientsAdded: number;
  accountsAdded: number;
  webhooksAdded: number;
}

/**
 * Which parts of the file go into the API's database: `all` with the embedded core (its records
 * share the database), `api` (realms, clients, webhooks) when the core is remote: its part then
 * goes to the core through the port's load side, never into this database.
 */
export type LoadedParts = 'all' | 'api';

export interface SandboxLoadOptions {
  /** The URLs the file's webhook endpoints may have (the server's --webhook-allow-private). */
  webhookTargets: TargetPolicy;
  /** Which parts go into this database (`all` unless the core is remote). */
  parts?: LoadedParts;
  /** Where a new realm's first signing key comes from (fresh keys unless a test hands its own). */
  keys?: SigningKeySource;
  /** Whose time the records carry (src/core/clock.ts): the system's unless given. */
  clock?: Clock;
}

export async function loadSandboxData(store: Store, vault: Vault, data: SandboxData, options: SandboxLoadOptions): Promise<LoadSummary> {
  return store.db.transaction().execute(async (trx) => {
    await lockForAdministration(store, trx);
    return loadSandboxDataWithin(trx, vault, data, options);
  });
}

/** The same load inside a transaction the caller holds, under the administration lock (a sandbox reset). */
export async function loadSandboxDataWithin(trx: Transaction<Database>, vault: Vault, data: SandboxData, options: SandboxLoadOptions): Promise<LoadSummary> {
  const { webhookTargets, parts = 'all', keys = freshSigningKeys, clock = systemClock } = options;
  const hashKey = await loadSecretHashKey(trx, vault);
  const now = dateOf(clock).toISOString();
  const summary: LoadSummary = { realmsAdded: 0, clientsAdded: 0, accountsAdded: 0, webhooksAdded: 0 };

  for (const realm of data.realms ?? []) {
    if (!(await findRealm(trx, realm.name))) summary.realmsAdded += 1;
    await insertRealmIfMissing(trx, {
      name: realm.name,
      audience: realm.audience ?? realmDefaults.audience,
      lifespan_seconds: realm.accessTokenLifespanSeconds ?? realmDefaults.lifespanSeconds,
      signing_alg: realmSigningAlgorithm(realm),
      not_before: 0,
      key_generation: 0,
      created_at: now,
      profile: realm.profile ?? null,
      dpop_nonce: realm.dpopNonce === true ? 1 : 0,
    });
    for (const client of realm.clients ?? []) {
      const added = await insertClientIfMissing(trx, {
        realm: realm.name,
        clientId: client.clientId,
        serviceAccountId: randomUUID(),
        secretHash: client.secret === undefined ? noSecretHash : hashClientSecret(hashKey, client.secret),
        enabled: client.enabled ?? true,
        grants: client.grants ?? ['client_credentials'],
        scopes: client.scopes,
        technicalUser: client.technicalUser ?? null,
        defaultWorkstation: client.defaultWorkstation ?? null,
        createdAt: now,
        updatedAt: now,
        authentication: clientAuthenticationOf(client),
      });
      if (added) summary.clientsAdded += 1;
    }
    const stored = await findRealm(trx, realm.name);
    if (stored) await ensureSigningKey(trx, vault, stored, clock.now(), keys);
  }
  if (parts === 'all') {
    summary.accountsAdded = (await loadCoreData(coreTablesOf(trx), data, clock)).accountsAdded;
  }
  summary.webhooksAdded = await loadWebhooks(trx, vault, data, webhookTargets, clock);
  return summary;
}

/**
 * Webhook endpoints (docs/webhooks.md, "Registering endpoints"): one per client and URL, added when
 * missing, never overwritten. Without a `secret` in the file one is generated and sealed, and
 * nobody can read it: give one in the file to verify the events (docs/webhooks.md).
 */
async function loadWebhooks(db: Queryable, vault: Vault, data: SandboxData, targets: TargetPolicy, clock: Clock): Promise<number> {
  let added = 0;
  for (const [index, webhook] of (data.webhooks ?? []).entries()) {
    if (await findEndpointByUrl(db, webhook.realm, webhook.clientId, webhook.url)) continue;
    try {
      await registerEndpoint(db, vault, { realm: webhook.realm, clientId: webhook.clientId, url: webhook.url, ...(webhook.secret === undefined ? {} : { secret: webhook.secret }), eventTypes: webhook.eventTypes ?? [] }, targets, clock.now());
    } catch (error) {
      // A refused target is the file's problem: a reset over HTTP answers it as such (409), not as a failure of ours.
      if (error instanceof EndpointRefused) throw new DataFileError('data file', `webhooks[${index}]`, error.message);
      throw error;
    }
    added += 1;
  }
  return added;
}
