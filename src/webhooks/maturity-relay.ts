/**
 * The relay of the core's events (docs/webhooks.md, "The outbox guarantee"): reads the core's event
 * log through the port after a cursor kept in the API's store, and writes a webhook event for the
 * client whose operation made the contract (a maturing deposit's constitution). Its id is derived
 * from the core event's id and its insert is idempotent, so reading an event again (a crash before
 * the cursor moved, two instances reading together) never writes it twice. A core event whose
 * operation reference names no operation of the API (a loan facility loaded from the data file,
 * whose installments fall overdue) belongs to no client and is skipped.
 */
import type { CoreBankingPort } from '../core/port.js';
import type { Store } from '../store/connect.js';
import { findOperation } from '../store/operations.js';
import { getSetting, putSetting } from '../store/settings.js';
import { inUnitOfWork } from '../store/unit-of-work.js';
import { insertEvent } from '../store/webhooks.js';
import { clientOfKey, coreWebhookEvent } from './events.js';

/** The settings row holding the sequence of the last core event relayed. */
export const coreEventCursorSetting = 'webhooks.core_event_cursor';
/** Core events read per call of the port. */
const relayBatchMax = 100;

export interface RelayPass {
  read: number;
  written: number;
  skipped: number;
}

/** Relays what the core logged since the cursor; answers what it read and wrote. */
export async function relayCoreEvents(store: Store, core: Pick<CoreBankingPort, 'eventsAfter'>, nowMs: number): Promise<RelayPass> {
  const cursor = Number((await getSetting(store.db, coreEventCursorSetting)) ?? '0');
  const events = await core.eventsAfter(cursor, relayBatchMax);
  if (events.length === 0) return { read: 0, written: 0, skipped: 0 };
  return inUnitOfWork(store, async ({ db }) => {
    let written = 0;
    let skipped = 0;
    for (const event of events) {
      const operation = event.operationReference === null ? undefined : await findOperation(db, event.operationReference);
      if (!operation) {
        skipped += 1;
        continue;
      }
      await insertEvent(db, coreWebhookEvent(event, clientOfKey(operation.clientKey), nowMs));
      written += 1;
    }
    const last = Math.max(...events.map((event) => event.sequence));
    // Another instance may have moved the cursor further meanwhile: it never goes back.
    const current = Number((await getSetting(db, coreEventCursorSetting)) ?? '0');
    if (last > current) await putSetting(db, coreEventCursorSetting, String(last));
    return { read: events.length, written, skipped };
  });
}
