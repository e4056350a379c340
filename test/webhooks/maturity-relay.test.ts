/**
 * The relay of the core's events (docs/webhooks.md, "The outbox guarantee"), against a fake core
 * port (the only mock allowed: at the port): a maturity becomes a termDeposit.matured event for the
 * client whose operation constituted the deposit, with an id derived from the core event's; a
 * re-read writes nothing twice; an event naming no operation of the API (an overdue installment of
 * a loaded facility) is skipped; the cursor lives in the API's store.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import type { CoreEvent } from '../../src/core/port.js';
import { migrateEmbedded } from '../helpers/migrate-embedded.js';
import { insertOperation } from '../../src/store/operations.js';
import { getSetting, putSetting } from '../../src/store/settings.js';
import { listEventsOf } from '../../src/store/webhooks.js';
import { derivedUuid } from '../../src/webhooks/events.js';
import { coreEventCursorSetting, relayCoreEvents } from '../../src/webhooks/maturity-relay.js';
import { withStore } from '../helpers/stores.js';
import { describeEachStoreUrl } from '../helpers/suite.js';

/** A core whose event log is an array: eventsAfter answers what follows the sequence, as the port says. */
class FakeCoreLog {
  readonly events: CoreEvent[] = [];
  reads: Array<{ sequence: number; limit: number }> = [];

  async eventsAfter(sequence: number, limit: number): Promise<CoreEvent[]> {
    this.reads.push({ sequence, limit });
    return this.events.filter((event) => event.sequence > sequence).slice(0, limit);
  }
}

function matured(sequence: number, operationReference: string | null): CoreEvent {
  return {
    sequence,
    id: randomUUID(),
    type: 'termDeposit.matured',
    businessDate: '2026-05-31',
    operationReference,
    data: { contractNumber: `TD${sequence}`, principal: { amount: '1000.00', currency: 'USD' }, interest: { amount: '13.13', currency: 'USD' } },
  };
}

async function operationOf(db: Parameters<typeof insertOperation>[0], clientKey: string): Promise<string> {
  const reference = randomUUID();
  const now = new Date();
  await insertOperation(db, {
    reference,
    clientKey,
    correlationId: randomUUID(),
    correlationSupplied: true,
    operation: 'initiateTermDeposit',
    scope: 'termDeposit:initiate',
    path: 'POST /v1/term-deposits/initiate',
    requestHash: 'h',
    request: undefined,
    status: 'Executed',
    httpStatus: 200,
    accepted: false,
    result: {},
    error: undefined,
    actor: { clientId: clientKey, backboneUser: null, workstation: null, channel: null },
    createdAt: now.toISOString(),
    createdEpochMs: now.getTime(),
    updatedAt: now.toISOString(),
    updatedEpochMs: now.getTime(),
    attempts: 0,
    nextAttemptEpochMs: 0,
  });
  return reference;
}

describeEachStoreUrl('the core events relay', ({ dbUrl }) => {
  test('a maturity becomes one termDeposit.matured event for the client of the deposit\'s operation; a re-read duplicates nothing; an event of no operation is skipped', async () => {
    await withStore(dbUrl(), async (store) => {
      await migrateEmbedded(store);
      const core = new FakeCoreLog();
      const reference = await operationOf(store.db, 'http://127.0.0.1:1234/realms/sandbox#treasury-app');
      core.events.push(matured(3, reference), { ...matured(7, null), type: 'loanInstallment.overdue' }, matured(9, randomUUID()));

      assert.deepEqual(await relayCoreEvents(store, core, Date.now()), { read: 3, written: 1, skipped: 2 });
      assert.equal(await getSetting(store.db, coreEventCursorSetting), '9', 'the cursor moves past what was read');
      const events = await listEventsOf(store.db, { type: 'termDeposit.matured' });
      assert.equal(events.length, 1);
      const [event] = events;
      assert.equal(event?.id, derivedUuid(`core-event:${core.events[0]?.id ?? ''}`), 'the id derives from the core event\'s');
      assert.equal(event?.realm, 'sandbox');
      assert.equal(event?.clientId, 'treasury-app');
      const payload = JSON.parse(event?.payload ?? '{}') as { type: string; timestamp: string; data: Record<string, unknown> };
      assert.equal(payload.type, 'termDeposit.matured');
      assert.equal(payload.data.contractNumber, 'TD3');
      assert.equal(payload.data.operationReference, reference);
      assert.equal(payload.data.businessDate, '2026-05-31');
      assert.deepEqual(payload.data.principal, { amount: '1000.00', currency: 'USD' });

      // Nothing new: one read after the cursor, nothing written.
      assert.deepEqual(await relayCoreEvents(store, core, Date.now()), { read: 0, written: 0, skipped: 0 });
      assert.deepEqual(core.reads.at(-1), { sequence: 9, limit: 100 });

      // A crash before the cursor moved: the same events are read again and written once.
      await putSetting(store.db, coreEventCursorSetting, '0');
      assert.deepEqual(await relayCoreEvents(store, core, Date.now()), { read: 3, written: 1, skipped: 2 });
      assert.equal((await listEventsOf(store.db, { type: 'termDeposit.matured' })).length, 1, 'a re-read never duplicates');
    });
  });

  test('the cursor never goes back (another instance moved it further meanwhile), and a core that cannot answer leaves it where it was', async () => {
    await withStore(dbUrl(), async (store) => {
      await migrateEmbedded(store);
      const core = new FakeCoreLog();
      core.events.push(matured(40, null), matured(41, null));
      // The suite's store is shared: the first test left the cursor at 9. While this instance reads
      // up to 41, another instance relays further and sets the cursor to 55.
      const racing = {
        eventsAfter: async (sequence: number, limit: number) => {
          const events = await core.eventsAfter(sequence, limit);
          await putSetting(store.db, coreEventCursorSetting, '55');
          return events;
        },
      };
      assert.deepEqual(await relayCoreEvents(store, racing, Date.now()), { read: 2, written: 0, skipped: 2 });
      assert.equal(await getSetting(store.db, coreEventCursorSetting), '55');
      const failing = { eventsAfter: async () => Promise.reject(new Error('core unavailable')) };
      await assert.rejects(relayCoreEvents(store, failing, Date.now()), /core unavailable/);
      assert.equal(await getSetting(store.db, coreEventCursorSetting), '55');
    });
  });
});
