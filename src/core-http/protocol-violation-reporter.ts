/**
 * Where a remote core's answers outside its protocol are told to the operator (docs/core-protocol.md,
 * "What the API's adapter makes of it"): an error-level log line naming the call, the operation
 * reference, the field and the value that could not be mapped, and the metric
 * `coregate_core_protocol_violations_total{kind}` (docs/metrics.md), every one counted. The value is
 * a bounded quote of the core's answer (the protocol carries no credential), never a whole body.
 *
 * A violation about an operation (its reference named) is logged each time: the line is the
 * operator's record of that operation. One of a call that runs on its own schedule (the webhook
 * relay's event polls every few seconds, readiness probes, the read side) is logged at most once
 * per `repeatedLogIntervalMs` per kind and call, with how many were not logged since: a core that
 * answers every poll wrongly must not flood the log.
 */
import type { Clock } from '../core/clock.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics/registry.js';
import type { ProtocolViolationReport } from './http-core-adapter.js';

/** A repeated violation of one kind on one call (no operation named) is logged at most this often. */
export const repeatedLogIntervalMs = 60_000;

export function protocolViolationReporter(logger: Logger, metrics: Pick<Metrics, 'coreProtocolViolation'>, clock: Clock): (violation: ProtocolViolationReport) => void {
  // Keyed by kind and route template: a bounded set (the protocol's routes times the kinds).
  const lastLogged = new Map<string, { atMs: number; notLogged: number }>();
  return (violation) => {
    metrics.coreProtocolViolation(violation.kind);
    const { kind, call, reference, field, value, message, settled } = violation;
    let notLoggedSince: number | undefined;
    if (reference === undefined) {
      const key = `${kind} ${call}`;
      const now = clock.now();
      const last = lastLogged.get(key);
      if (last !== undefined && now - last.atMs < repeatedLogIntervalMs) {
        last.notLogged += 1;
        return;
      }
      notLoggedSince = last?.notLogged;
      lastLogged.set(key, { atMs: now, notLogged: 0 });
    }
    logger.error(
      { kind, call, reference, field, value, detail: message, ...(notLoggedSince ? { notLoggedSince } : {}) },
      settled
        ? 'core protocol violation: the core refused with a refusal coregate cannot name; settled Rejected (REJECTED_BY_CORE) as the core said. Make the core answer the catalogue\'s names and codes (docs/core-protocol.md)'
        : reference !== undefined
          ? 'core protocol violation: the core\'s answer breaks the protocol; the outcome is held unknown (502) and settled by reference later'
          : 'core protocol violation: the core\'s answer breaks the protocol; the call failed (502 where a client asked), and is tried again on its schedule',
    );
  };
}
