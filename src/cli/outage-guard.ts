/**
 * The last line of defence of issue 24: a database outage is an answer (503, not ready), never
 * an exit. Every path that meets one handles it; if a promise that failed with an outage was
 * left unhandled somewhere anyway, the process logs it as the defect it is and keeps serving,
 * instead of ending every request in flight on this instance. Any other unhandled rejection still
 * ends the process, as node does by default: an unknown failure is not made to look survivable.
 */
import type { Logger } from '../log.js';
import { isDatabaseUnavailable } from '../store/engine/database-unavailable.js';

export function guardAgainstOutageExits(logger: Logger): void {
  process.on('unhandledRejection', (reason) => {
    if (isDatabaseUnavailable(reason)) {
      // The classifier knows the database's failures and the socket errors under any connection: an
      // ECONNRESET left unhandled by another client (the core's, Redis's) is kept alive here too.
      logger.error({ err: reason }, 'a connection failure reached no handler (a defect): the process goes on serving');
      return;
    }
    throw reason;
  });
}
