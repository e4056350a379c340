/**
 * UUID version 7 (RFC 9562): 48 bits of Unix time in milliseconds, then 74 random bits. Records
 * keyed by these land at the end of their indexes: random version-4 keys put every insert on a
 * different page of each index, and every page touched is a page the commit writes.
 *
 * Ids made by one process within one millisecond also increase, in the order they were made: the
 * 12 bits after the version are a counter that starts at a random value below 2^11 each new
 * millisecond (RFC 9562 §6.2, method 1). Audit records of one millisecond (a fake clock's, or a
 * burst) are chained in the order they were recorded, which orders them by time, then id.
 */
import { randomInt, randomUUID } from 'node:crypto';

/** The counter's bits (rand_a): 12. Past its end, the ids move on to the next millisecond. */
const counterEnd = 0x1000;

let lastMs = -1;
let counter = 0;

/** `now`: the caller's clock's time in epoch milliseconds (src/core/clock.ts). */
export function timeOrderedUuid(now: number): string {
  if (now > lastMs || now < lastMs - 1) {
    lastMs = now;
    counter = randomInt(counterEnd / 2);
  } else {
    // The same millisecond as the last id, or the one a full counter moved the ids on to.
    counter += 1;
    if (counter === counterEnd) {
      lastMs += 1;
      counter = 0;
    }
  }
  const time = lastMs.toString(16).padStart(12, '0');
  // randomUUID() is xxxxxxxx-xxxx-4xxx-Vxxx-xxxxxxxxxxxx: keep its random bits and variant after rand_a.
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${counter.toString(16).padStart(3, '0')}${randomUUID().slice(18)}`;
}
