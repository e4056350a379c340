/**
 * Whether this process traces, and how it exports, from the standard OpenTelemetry variables
 * (https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/). Tracing is
 * off unless an operator asked for it: no exporter endpoint and no OTEL_TRACES_EXPORTER means no
 * SDK at all, so an instance that does not trace pays nothing for it.
 */

/** How spans leave the process: OTLP over HTTP, as protobuf (the standard's default) or as JSON. */
export type OtlpProtocol = 'http/protobuf' | 'http/json';

export interface TracingSettings {
  protocol: OtlpProtocol;
}

/**
 * The settings when tracing is on, undefined when it is off. A value coregate cannot honour is an
 * error naming the variable, at start: an operator who asked for traces must not get none silently.
 */
export function tracingSettings(env: NodeJS.ProcessEnv): TracingSettings | undefined {
  if ((env.OTEL_SDK_DISABLED ?? '').trim().toLowerCase() === 'true') return undefined;
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== '');
  const unknown = exporters.filter((name) => name !== 'otlp' && name !== 'none');
  if (unknown.length > 0) throw new Error(`OTEL_TRACES_EXPORTER must be otlp or none, got "${env.OTEL_TRACES_EXPORTER}"`);
  if (exporters.includes('none')) return undefined;
  const endpointSet = nonEmpty(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) || nonEmpty(env.OTEL_EXPORTER_OTLP_ENDPOINT);
  if (!endpointSet && exporters.length === 0) return undefined;
  return { protocol: otlpProtocol(env) };
}

function otlpProtocol(env: NodeJS.ProcessEnv): OtlpProtocol {
  const [name, value] = nonEmpty(env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL)
    ? ['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL]
    : ['OTEL_EXPORTER_OTLP_PROTOCOL', env.OTEL_EXPORTER_OTLP_PROTOCOL];
  const protocol = (value ?? '').trim().toLowerCase();
  if (protocol === '' || protocol === 'http/protobuf') return 'http/protobuf';
  if (protocol === 'http/json') return 'http/json';
  // gRPC would need the gRPC exporter and its dependencies; every collector that speaks OTLP also
  // listens for it over HTTP (port 4318).
  throw new Error(`${name} must be http/protobuf or http/json (coregate exports OTLP over HTTP, port 4318), got "${value}"`);
}

function nonEmpty(value: string | undefined): boolean {
  return value !== undefined && value.trim() !== '';
}
