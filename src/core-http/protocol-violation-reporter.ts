/**
 * Where a remote core's answers outside its protocol are told to the operator (docs/core-protocol.md,
 * "What the API's adapter makes of it"): one error-level log line per answer, naming the call, the
 * operation reference, the field and the value that could not be mapped, and the metric
 * `coregate_core_protocol_violations_total{kind}` (docs/metrics.md). The value is a bounded quote of
 * the core's answer (the protocol carries no credential), never a whole body.
 */
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics/registry.js';
import type { ProtocolViolationReport } from './http-core-adapter.js';

export function protocolViolationReporter(logger: Logger, metrics: Pick<Metrics, 'coreProtocolViolation'>): (violation: ProtocolViolationReport) => void {
  return (violation) => {
    metrics.coreProtocolViolation(violation.kind);
    const { kind, call, reference, field, value, message, settled } = violation;
    logger.error(
      { kind, call, reference, field, value, detail: message },
      settled
        ? 'core protocol violation: the core refused with a refusal coregate cannot name; settled Rejected (REJECTED_BY_CORE) as the core said. Make the core answer the catalogue\'s names and codes (docs/core-protocol.md)'
        : 'core protocol violation: the core\'s answer breaks the protocol; the outcome is held unknown (502) and settled by reference later',
    );
  };
}
