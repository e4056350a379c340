/**
 * UUID version 7 (RFC 9562): 48 bits of Unix time in milliseconds, then 74 random bits. Records
 * keyed by these land at the end of their indexes: random version-4 keys put every insert on a
 * different page of each index, and every page touched is a page the commit writes.
 */
import { randomUUID } from 'node:crypto';

/** `now`: the caller's clock's time in epoch milliseconds (src/core/clock.ts). */
export function timeOrderedUuid(now: number): string {
  const time = now.toString(16).padStart(12, '0');
  // randomUUID() is xxxxxxxx-xxxx-4xxx-Vxxx-xxxxxxxxxxxx: keep its random bits and variant after the version.
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${randomUUID().slice(15)}`;
}
