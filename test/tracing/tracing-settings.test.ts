/**
 * Issue 24 item 3: tracing is off unless the standard OTEL_* variables ask for it, and a value
 * coregate cannot honour is refused at start with the variable's name.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { tracingSettings } from '../../src/tracing/tracing-settings.js';

const endpoint = 'http://collector.internal:4318';

test('tracing is off without an exporter endpoint or OTEL_TRACES_EXPORTER', () => {
  assert.equal(tracingSettings({}), undefined);
  assert.equal(tracingSettings({ OTEL_SERVICE_NAME: 'api', OTEL_TRACES_SAMPLER: 'always_on', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }), undefined);
  assert.equal(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: '  ' }), undefined, 'an empty endpoint is no endpoint');
});

test('an endpoint (general or for traces) turns tracing on, exporting OTLP protobuf over HTTP by default', () => {
  assert.deepEqual(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint }), { protocol: 'http/protobuf' });
  assert.deepEqual(tracingSettings({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${endpoint}/v1/traces` }), { protocol: 'http/protobuf' });
  assert.deepEqual(tracingSettings({ OTEL_TRACES_EXPORTER: 'otlp' }), { protocol: 'http/protobuf' }, 'otlp alone exports to the default endpoint');
});

test('OTEL_EXPORTER_OTLP_TRACES_PROTOCOL wins over OTEL_EXPORTER_OTLP_PROTOCOL; http/json is honoured', () => {
  assert.deepEqual(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }), { protocol: 'http/json' });
  assert.deepEqual(
    tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json' }),
    { protocol: 'http/json' },
  );
});

test('OTEL_SDK_DISABLED=true and OTEL_TRACES_EXPORTER=none turn tracing off even with an endpoint', () => {
  assert.equal(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_SDK_DISABLED: 'true' }), undefined);
  assert.equal(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_SDK_DISABLED: 'TRUE' }), undefined);
  assert.equal(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_TRACES_EXPORTER: 'none' }), undefined);
  assert.deepEqual(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_SDK_DISABLED: 'false' }), { protocol: 'http/protobuf' });
});

test('invalid: an exporter or a protocol coregate does not ship is refused, naming the variable', () => {
  assert.throws(() => tracingSettings({ OTEL_TRACES_EXPORTER: 'zipkin' }), /OTEL_TRACES_EXPORTER must be otlp or none, got "zipkin"/);
  assert.throws(() => tracingSettings({ OTEL_TRACES_EXPORTER: 'console' }), /OTEL_TRACES_EXPORTER/);
  assert.throws(() => tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }), /OTEL_EXPORTER_OTLP_PROTOCOL must be http\/protobuf or http\/json/);
  assert.throws(
    () => tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc' }),
    /OTEL_EXPORTER_OTLP_TRACES_PROTOCOL must be http\/protobuf or http\/json/,
  );
});
