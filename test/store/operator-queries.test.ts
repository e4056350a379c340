/**
 * The operator API's lists page in the store: the clients' list reached only the first 500
 * (by realm and client id) and cut its pages from them (stop 38's helper note).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openStore } from '../../src/store/connect.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { insertClientIfMissing } from '../../src/store/clients.js';
import { insertRealmIfMissing } from '../../src/store/realms.js';
import { listClientViews } from '../../src/store/operator-queries.js';

test('listClientViews pages past the first 500 clients, in realm and client id order', async () => {
  const store = await openStore('sqlite::memory:');
  try {
    await migrateToLatest(store);
    const at = '2026-11-28T00:00:00.000Z';
    await insertRealmIfMissing(store.db, { name: 'many', audience: 'account', lifespan_seconds: 300, signing_alg: 'RS256', not_before: 0, key_generation: 0, created_at: at, profile: null, dpop_nonce: 0 });
    const ids = Array.from({ length: 520 }, (_, index) => `client-${String(index).padStart(4, '0')}`);
    for (const clientId of ids) {
      await insertClientIfMissing(store.db, {
        realm: 'many',
        clientId,
        serviceAccountId: `sa-${clientId}`,
        secretHash: 'x',
        enabled: true,
        grants: ['client_credentials'],
        scopes: [],
        technicalUser: null,
        defaultWorkstation: null,
        createdAt: at,
        updatedAt: at,
        authentication: { method: 'client_secret_basic', jwks: null, tlsSubjectDn: null, dpopBound: false, certificateBound: false },
      });
    }
    const page = await listClientViews(store.db, { limit: 11, offset: 505 });
    assert.deepEqual(page.map((client) => client.clientId), ids.slice(505, 516));
    const last = await listClientViews(store.db, { limit: 501, offset: 500 });
    assert.deepEqual(last.map((client) => client.clientId), ids.slice(500));
  } finally {
    await store.close();
  }
});
