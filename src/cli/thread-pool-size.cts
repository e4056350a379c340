/**
 * The size of libuv's thread pool, which signs tokens and syncs SQLite's log. libuv's default is
 * four threads whatever the machine; coregate runs one per core, at least two (a log sync then
 * never waits behind a single signature). On a 2-core machine, four threads signing ES256 tokens
 * preempted the event loop, which is what limits that path: ES256 tokens +13 %, 101 → 90 µs of
 * CPU each, RS256 unchanged (bench/quick.ts, three runs each way). An operator's
 * UV_THREADPOOL_SIZE wins.
 *
 * CommonJS, as the entry that uses it (coregate.cts): an ES module entry is read through the
 * thread pool, which fixes the pool's size before any of the program's code runs.
 */
import { availableParallelism } from 'node:os';

/** libuv's own bounds and default. */
const libuvPoolSizeMax = 1024;
const libuvPoolSizeDefault = 4;

export function threadPoolSizeFor(configured: string | undefined, cores: number = availableParallelism()): number {
  if (configured !== undefined && configured.trim() !== '') {
    const size = Number(configured);
    // What libuv does with the variable: clamped to 1..1024; a value it cannot read gives its default.
    if (!Number.isInteger(size)) return libuvPoolSizeDefault;
    return Math.min(Math.max(size, 1), libuvPoolSizeMax);
  }
  return Math.max(2, cores);
}
