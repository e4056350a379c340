/**
 * What the data file says that the store does not (issue 12: editing the file and restarting
 * silently changed nothing). Loading never overwrites a record (a sandbox keeps what happened in
 * it), so at start each kind of record that differs is named, with how to apply the file:
 * `coregate sandbox reset`, or the operator commands. Reads only; secrets are compared as hashes.
 */
import type { LoadedParts } from './load.js';
import { verifyClientSecret } from '../auth/client-secret.js';
import { listClients } from '../store/clients.js';
import type { Queryable } from '../store/queryable.js';
import { coreTablesOf } from '../reference-core/storage/core-db.js';
import { differing, driftCollector, findCoreDrift, type Drift } from '../reference-core/storage/core-drift.js';
import { clientAuthenticationOf, type SandboxData } from './data-file.js';

export type { Drift } from '../reference-core/storage/core-drift.js';

/** How to apply a kind's changes, for the start-up line. */
export const driftRemedy: Readonly<Record<string, string>> = {
  realms: '`coregate sandbox reset`',
  clients: '`coregate clients rotate-secret|enable|disable`, or `coregate sandbox reset`',
  users: '`coregate sandbox reset` (or add new users with `coregate users add`)',
  workstations: '`coregate sandbox reset` (or add new ones with `coregate workstations add`)',
  customers: '`coregate sandbox reset`',
  accounts: '`coregate sandbox reset` (balances move only by postings)',
};

/** `parts`: `api` when the core is remote: its records are the core's, and this database has none of its tables. */
export async function findDrift(db: Queryable, data: SandboxData, secretHashKey: Buffer, parts: LoadedParts = 'all'): Promise<Drift[]> {
  const drifts: Drift[] = [];
  const add = driftCollector(drifts);

  for (const realm of data.realms ?? []) {
    const stored = await db.selectFrom('realms').selectAll().where('name', '=', realm.name).executeTakeFirst();
    if (!stored) continue;
    add('realms', realm.name, differing([
      ['audience', realm.audience !== undefined && realm.audience !== stored.audience],
      ['accessTokenLifespanSeconds', realm.accessTokenLifespanSeconds !== undefined && realm.accessTokenLifespanSeconds !== Number(stored.lifespan_seconds)],
      ['profile', (realm.profile ?? null) !== stored.profile],
      ['dpopNonce', (realm.dpopNonce ?? false) !== (Number(stored.dpop_nonce) === 1)],
    ]));
    const clients = new Map((await listClients(db, realm.name)).map((client) => [client.clientId, client]));
    for (const client of realm.clients ?? []) {
      const stored = clients.get(client.clientId);
      if (!stored) continue;
      add('clients', `${realm.name}/${client.clientId}`, differing([
        ['secret', client.secret !== undefined && !verifyClientSecret(secretHashKey, client.secret, stored.secretHash)],
        ['authentication', JSON.stringify(clientAuthenticationOf(client)) !== JSON.stringify(stored.authentication)],
        ['enabled', (client.enabled ?? true) !== stored.enabled],
        ['scopes', [...client.scopes].sort().join(' ') !== [...stored.scopes].sort().join(' ')],
        ['technicalUser', (client.technicalUser ?? null) !== stored.technicalUser],
        ['defaultWorkstation', (client.defaultWorkstation ?? null) !== stored.defaultWorkstation],
      ]));
    }
  }
  if (parts === 'api') return drifts;
  drifts.push(...(await findCoreDrift(coreTablesOf(db), data)));
  return drifts;
}
