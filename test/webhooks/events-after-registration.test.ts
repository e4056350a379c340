/**
 * When a new endpoint starts receiving events (issue 24; docs/webhooks.md, "The outbox
 * guarantee"): an endpoint receives the events written at or after its registration, and none
 * written before, however late the dispatcher fans them out. The instants are given, and the
 * dispatcher is run by hand: nothing here depends on which came first by luck.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { Vault } from '../../src/auth/vault.js';
import { readSandboxFile } from '../../src/sandbox/data-file.js';
import { loadSandboxData } from '../../src/sandbox/load.js';
import type { Store } from '../../src/store/connect.js';
import { migrateEmbedded } from '../helpers/migrate-embedded.js';
import { insertEvent, listDeliveries, listUndispatchedEvents } from '../../src/store/webhooks.js';
import { dispatchEvents } from '../../src/webhooks/dispatcher.js';
import { registerEndpoint } from '../../src/webhooks/endpoints.js';
import { demo, demoDataFile } from '../helpers/server.js';
import { storeTargets, withCreatedStore, withStore, type StoreTarget } from '../helpers/stores.js';

const publicOnly = { allowPrivate: false };
const vault = new Vault(process.env.COREGATE_MASTER_KEY);

async function writeEvent(store: Store, createdAtMs: number): Promise<string> {
  const id = randomUUID();
  await insertEvent(store.db, { id, type: 'operation.executed', realm: demo.realm, clientId: demo.treasury.clientId, reference: randomUUID(), payload: '{}', createdAtMs });
  return id;
}

async function register(store: Store, path: string, registeredAtMs: number): Promise<string> {
  const endpoint = await registerEndpoint(store.db, vault, { realm: demo.realm, clientId: demo.treasury.clientId, url: `https://hooks.example.com/${path}` }, publicOnly, registeredAtMs);
  return endpoint.id;
}

/** Which events each endpoint got a delivery of. */
async function deliveredEvents(store: Store): Promise<Map<string, string[]>> {
  const byEndpoint = new Map<string, string[]>();
  for (const delivery of await listDeliveries(store.db, { limit: 100 })) byEndpoint.set(delivery.endpointId, [...(byEndpoint.get(delivery.endpointId) ?? []), delivery.eventId].sort());
  return byEndpoint;
}

/** A new migrated store of `target` with the demo data loaded, for `work`; closed and dropped afterwards. */
async function withDemoStore(target: StoreTarget, work: (store: Store) => Promise<void>): Promise<void> {
  await withCreatedStore(target, (url) =>
    withStore(url, async (store) => {
      await migrateEmbedded(store);
      await loadSandboxData(store, vault, readSandboxFile(demoDataFile), { webhookTargets: publicOnly });
      await work(store);
    }),
  );
}

for (const target of storeTargets) {
  describe(`events after an endpoint's registration [${target.name}]`, { skip: target.skip }, () => {
    test('an endpoint registered 10 ms after an event was written does not receive it, though the event is fanned out after the registration; it receives the events written from its registration on', async () => {
      await withDemoStore(target, async (store) => {
        const writtenAtMs = Date.now() - 60_000;
        const older = await register(store, 'older', writtenAtMs - 1_000);
        const before = await writeEvent(store, writtenAtMs);
        const newer = await register(store, 'newer', writtenAtMs + 10);
        const atRegistration = await writeEvent(store, writtenAtMs + 10);
        const after = await writeEvent(store, writtenAtMs + 11);

        // One pass, after every write and both registrations: the stored instants decide.
        assert.equal(await dispatchEvents(store, writtenAtMs + 1_000), 3);
        assert.deepEqual((await listUndispatchedEvents(store.db, 10)).length, 0, 'every event is dispatched, the one no newer endpoint takes included');
        const delivered = await deliveredEvents(store);
        assert.deepEqual(delivered.get(newer), [atRegistration, after].sort(), 'the newer endpoint: the events written at and after its registration, not the one 10 ms before');
        assert.deepEqual(delivered.get(older), [before, atRegistration, after].sort(), 'the older endpoint: all three');
      });
    });

    test('events written before the only endpoint was registered are dispatched without deliveries, in the same pass', async () => {
      await withDemoStore(target, async (store) => {
        const writtenAtMs = Date.now() - 60_000;
        await writeEvent(store, writtenAtMs);
        await writeEvent(store, writtenAtMs + 5);
        await register(store, 'late', writtenAtMs + 10);
        assert.equal(await dispatchEvents(store, writtenAtMs + 1_000), 2);
        assert.equal((await listUndispatchedEvents(store.db, 10)).length, 0);
        assert.deepEqual(await listDeliveries(store.db, { limit: 10 }), []);
      });
    });
  });
}
