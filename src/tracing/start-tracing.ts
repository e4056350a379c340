/**
 * Starts OpenTelemetry's trace SDK for this process when the OTEL_* variables ask for it
 * (tracing-settings.ts), and only then: the SDK and its exporter are loaded on demand, so a
 * process that does not trace never loads them, and every instrumented seam (http-spans.ts,
 * src/store/traced-store.ts, the remote core's adapter) is skipped when it is given no tracer.
 *
 * The sampler (OTEL_TRACES_SAMPLER, OTEL_TRACES_SAMPLER_ARG), the batching (OTEL_BSP_*), the
 * exporter's endpoint, headers, time-out and compression (OTEL_EXPORTER_OTLP_*) and the resource
 * (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES) are read by the SDK itself, as the standard says.
 */
import { diag, DiagLogLevel, type Tracer } from '@opentelemetry/api';
import type { Logger } from '../log.js';
import type { Clock, Timer } from '../core/clock.js';
import { systemClock } from '../clock/system-clock.js';
import { tracingSettings } from './tracing-settings.js';

/**
 * How long shutdown waits for the last spans to reach the collector: a collector that does not
 * answer must not hold a stopping instance past its grace period (COREGATE_SHUTDOWN_GRACE_MS).
 */
export const tracingShutdownMs = 3_000;

export interface Tracing {
  readonly tracer: Tracer;
  /** Where the SDK reports its own trouble (a collector it cannot reach): the instance's log, at warn. */
  reportProblemsTo(logger: Logger): void;
  /** Exports the spans still buffered (within tracingShutdownMs) and stops. */
  shutdown(): Promise<void>;
}

export interface TracedService {
  /** service.name unless OTEL_SERVICE_NAME says otherwise: `coregate`, or `coregate-core` for `coregate core serve`. */
  name: string;
  version: string;
}

/**
 * The process's tracing, or undefined when its environment does not ask for it. Read from
 * process.env, as the SDK reads every other OTEL_* variable: one process, one configuration.
 * `clock` bounds the shutdown's wait (src/core/clock.ts); the system's unless the wiring hands one in.
 */
export async function startTracing(service: TracedService, clock: Clock = systemClock): Promise<Tracing | undefined> {
  const settings = tracingSettings(process.env);
  if (settings === undefined) return undefined;
  const [{ NodeTracerProvider, BatchSpanProcessor }, { W3CTraceContextPropagator }, resources, { OTLPTraceExporter }] = await Promise.all([
    import('@opentelemetry/sdk-trace-node'),
    import('@opentelemetry/core'),
    import('@opentelemetry/resources'),
    settings.protocol === 'http/json' ? import('@opentelemetry/exporter-trace-otlp-http') : import('@opentelemetry/exporter-trace-otlp-proto'),
  ]);
  // Later resources win: the SDK's own attributes, then coregate's names, then OTEL_SERVICE_NAME
  // and OTEL_RESOURCE_ATTRIBUTES.
  const resource = resources
    .defaultResource()
    .merge(resources.resourceFromAttributes({ 'service.name': service.name, 'service.version': service.version }))
    .merge(resources.detectResources({ detectors: [resources.envDetector] }));
  const provider = new NodeTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())] });
  // Registering installs the context manager (AsyncLocalStorage) that carries a request's span
  // into its store transactions and core calls. Only W3C trace context crosses the wire: baggage
  // from a caller is not forwarded to the core.
  provider.register({ propagator: new W3CTraceContextPropagator() });
  return {
    tracer: provider.getTracer('coregate', service.version),
    reportProblemsTo(logger) {
      const report = (message: string, ...details: unknown[]) =>
        logger.warn(details.length === 0 ? {} : { tracing: details.map(describe) }, `tracing: ${readable(message)}`);
      diag.setLogger({ error: report, warn: report, info: () => {}, debug: () => {}, verbose: () => {} }, { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true });
    },
    async shutdown() {
      let timer: Timer | undefined;
      // In the background: the wait for a collector never keeps a stopping process alive by itself.
      const late = new Promise<void>((resolve) => {
        timer = clock.setTimeout(resolve, tracingShutdownMs, { background: true });
      });
      try {
        await Promise.race([provider.shutdown().catch(() => {}), late]);
      } finally {
        timer?.clear();
      }
    },
  };
}

/** The SDK reports a failed export as the error serialized to JSON, stack and all: its message is what an operator needs. */
function readable(message: string): string {
  if (!message.startsWith('{')) return message;
  try {
    const parsed = JSON.parse(message) as { message?: unknown };
    return typeof parsed.message === 'string' ? parsed.message : message;
  } catch {
    return message;
  }
}

/** An SDK diagnostic's detail as text (an error's message, not its stack). */
function describe(detail: unknown): string {
  if (detail instanceof Error) return detail.message;
  if (typeof detail === 'string') return detail;
  try {
    return JSON.stringify(detail) ?? String(detail);
  } catch {
    return String(detail);
  }
}
