/**
 * Signed events under load (docs/webhooks.md, "The outbox guarantee"): the dispatcher keeps up with
 * the outbox. With no endpoint at all, a pass marks the whole backlog (one statement, whatever its
 * size); with endpoints, a pass works through several batches, so a backlog larger than one batch
 * does not wait for later passes.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { Vault } from '../../src/auth/vault.js';
import { openStore } from '../../src/store/connect.js';
import { migrateEmbedded } from '../helpers/migrate-embedded.js';
import { readSandboxFile } from '../../src/sandbox/data-file.js';
import { loadSandboxData } from '../../src/sandbox/load.js';
import { insertEvent, listDeliveries, listUndispatchedEvents } from '../../src/store/webhooks.js';
import { dispatchEvents } from '../../src/webhooks/dispatcher.js';
import { registerEndpoint } from '../../src/webhooks/endpoints.js';
import { storeTargets } from '../helpers/stores.js';

async function insertEvents(db: Parameters<typeof insertEvent>[0], count: number, clientId: string, createdAtMs: number): Promise<void> {
  for (let index = 0; index < count; index++) {
    await insertEvent(db, { id: randomUUID(), type: 'operation.executed', realm: 'sandbox', clientId, reference: randomUUID(), payload: '{}', createdAtMs });
  }
}

for (const target of storeTargets) {
  describe(`webhook dispatch backlog [${target.name}]`, { skip: target.skip }, () => {
    test('no endpoint: one pass marks a backlog of several batches, and nothing created after the pass began', async () => {
      const { url, drop } = await target.create();
      const store = await openStore(url);
      try {
        await migrateEmbedded(store);
        const now = Date.now();
        await insertEvents(store.db, 250, 'treasury-app', now - 1_000);
        await insertEvents(store.db, 1, 'treasury-app', now + 60_000);
        assert.equal(await dispatchEvents(store, now), 250);
        const left = await listUndispatchedEvents(store.db, 10);
        assert.equal(left.length, 1, 'the event created after the pass began waits for the next pass');
      } finally {
        await store.close();
        await drop();
      }
    });

    test('with an endpoint: one pass fans out a backlog larger than a batch, and marks the other clients\' events', async () => {
      const { url, drop } = await target.create();
      const store = await openStore(url);
      try {
        await migrateEmbedded(store);
        await loadSandboxData(store, new Vault(undefined), readSandboxFile('demo/sandbox.json'), { webhookTargets: { allowPrivate: false } });
        const now = Date.now();
        // Registered before the events were written: an endpoint receives no older event.
        await registerEndpoint(store.db, new Vault(undefined), { realm: 'sandbox', clientId: 'treasury-app', url: 'https://example.com/hook' }, { allowPrivate: false }, now - 60_000);
        await insertEvents(store.db, 150, 'treasury-app', now - 2_000);
        await insertEvents(store.db, 120, 'reporting-app', now - 1_000);
        assert.equal(await dispatchEvents(store, now), 270);
        assert.equal((await listUndispatchedEvents(store.db, 10)).length, 0);
        assert.equal((await listDeliveries(store.db, { limit: 1000 })).length, 150, 'one delivery per event of the endpoint\'s client');
      } finally {
        await store.close();
        await drop();
      }
    });
  });
}
