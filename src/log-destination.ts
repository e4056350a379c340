/**
 * Where log lines go by default: standard output, written once per turn of the event loop.
 *
 * pino's default destination (sonic-boom, asynchronous) hands every line to libuv's thread pool
 * and counts its UTF-8 bytes on the way: under load that was a fifth of a retrieve's CPU on the
 * event loop and a thread waking on the other core for every few lines (measured, issue 9).
 * Here the lines of one turn are joined and written by one synchronous write (sonic-boom in sync
 * mode, which retries a full pipe), just after the turn, before the process looks for new work:
 * one system call per turn, in the order the lines were logged.
 *
 * A line is on its way out within the turn that logged it; at exit (a crash included) whatever
 * is pending is written synchronously, and a fatal line is written at once.
 */
import { destination as sonicBoom, levels, type DestinationStream } from 'pino';

/** A destination that writes synchronously (sonic-boom with `sync: true`: it retries a full pipe). */
interface SyncTarget {
  write(text: string): unknown;
}

/** Lines held for one turn at most, and never more than this many bytes (then written at once). */
export const logBatchCharsMax = 64 * 1024;

const fatalLevelPrefix = `{"level":${levels.values.fatal ?? 60},`;

export class TurnBatchedDestination implements DestinationStream {
  readonly #target: SyncTarget;
  #pending: string[] = [];
  #pendingChars = 0;
  #scheduled = false;
  readonly #flush = () => {
    this.#scheduled = false;
    this.flushSync();
  };

  constructor(target: SyncTarget) {
    this.#target = target;
  }

  write(line: string): void {
    this.#pending.push(line);
    this.#pendingChars += line.length;
    if (this.#pendingChars >= logBatchCharsMax || line.startsWith(fatalLevelPrefix)) {
      this.flushSync();
      return;
    }
    if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(this.#flush);
    }
  }

  /** Writes every pending line now (shutdown, exit, a fatal line). */
  flushSync(): void {
    if (this.#pending.length === 0) return;
    const text = this.#pending.length === 1 ? (this.#pending[0] as string) : this.#pending.join('');
    this.#pending = [];
    this.#pendingChars = 0;
    this.#target.write(text);
  }
}

let standardOutput: TurnBatchedDestination | undefined;

/**
 * Standard output, batched per turn, one per process (every logger shares it, so lines keep
 * their order); whatever is pending is written when the process exits.
 */
export function standardOutputDestination(): TurnBatchedDestination {
  if (standardOutput === undefined) {
    const destination = new TurnBatchedDestination(sonicBoom({ dest: 1, sync: true }));
    process.once('exit', () => destination.flushSync());
    standardOutput = destination;
  }
  return standardOutput;
}
