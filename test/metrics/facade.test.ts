/**
 * The Metrics facade on its own (a fresh instance per test, no server): each method produces the
 * series docs/metrics.md names, scrape-time sources are read at each scrape, a failing source
 * does not fail the scrape, and labels stay bounded.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Metrics } from '../../src/metrics/registry.js';
import { parseSamples, samplesOf, valueOf, type Sample } from '../helpers/metrics.js';

async function samples(metrics: Metrics): Promise<Sample[]> {
  return parseSamples(await metrics.render());
}

const fresh = (options: ConstructorParameters<typeof Metrics>[0] = {}) => new Metrics({ defaultMetrics: false, ...options });

test('operationSettled counts coregate_operations_total by operation and outcome', async () => {
  const metrics = fresh();
  metrics.operationSettled('termDeposit.initiate', 'Executed');
  metrics.operationSettled('termDeposit.initiate', 'Executed');
  metrics.operationSettled('termDeposit.initiate', 'Unknown');
  const all = await samples(metrics);
  assert.equal(valueOf(all, 'coregate_operations_total', { operation: 'termDeposit.initiate', outcome: 'Executed' }), 2);
  assert.equal(valueOf(all, 'coregate_operations_total', { operation: 'termDeposit.initiate', outcome: 'Unknown' }), 1);
});

test('observeCoreCall counts the call by result and observes its duration in coregate_core_call_duration_seconds', async () => {
  const metrics = fresh();
  metrics.observeCoreCall('constituteTermDeposit', 'ok', 0.02);
  metrics.observeCoreCall('constituteTermDeposit', 'timeout', 5.001);
  const all = await samples(metrics);
  const ok = { call: 'constituteTermDeposit', result: 'ok' };
  const timeout = { call: 'constituteTermDeposit', result: 'timeout' };
  assert.equal(valueOf(all, 'coregate_core_calls_total', ok), 1);
  assert.equal(valueOf(all, 'coregate_core_calls_total', timeout), 1);
  assert.equal(valueOf(all, 'coregate_core_call_duration_seconds_count', timeout), 1);
  assert.equal(valueOf(all, 'coregate_core_call_duration_seconds_sum', timeout), 5.001);
  assert.equal(valueOf(all, 'coregate_core_call_duration_seconds_bucket', { ...ok, le: '0.025' }), 1);
  assert.equal(valueOf(all, 'coregate_core_call_duration_seconds_bucket', { ...timeout, le: '5' }), 0);
  assert.equal(valueOf(all, 'coregate_core_call_duration_seconds_bucket', { ...timeout, le: '10' }), 1);
});

test('the reconciler backlog is read once per scrape and feeds coregate_reconciler_backlog and coregate_operations_unknown_over_age', async () => {
  const metrics = fresh();
  const before = await samples(metrics);
  assert.deepEqual(samplesOf(before, 'coregate_reconciler_backlog'), [], 'no backlog series before a source is set');
  assert.equal(valueOf(before, 'coregate_operations_unknown_over_age'), 0);

  let reads = 0;
  let backlog = { unknown: 3, pending: 2, overAge: 1 };
  metrics.setReconcilerBacklogSource(async () => {
    reads += 1;
    return backlog;
  });
  let all = await samples(metrics);
  assert.equal(reads, 1);
  assert.equal(valueOf(all, 'coregate_reconciler_backlog', { state: 'unknown' }), 3);
  assert.equal(valueOf(all, 'coregate_reconciler_backlog', { state: 'pending' }), 2);
  assert.equal(valueOf(all, 'coregate_operations_unknown_over_age'), 1);

  backlog = { unknown: 0, pending: 0, overAge: 0 };
  all = await samples(metrics);
  assert.equal(reads, 2, 'read again at the next scrape');
  assert.equal(valueOf(all, 'coregate_operations_unknown_over_age'), 0);
});

test('reconcilerSettled counts coregate_reconciler_settled_total by result', async () => {
  const metrics = fresh();
  metrics.reconcilerSettled('Executed');
  metrics.reconcilerSettled('Unresolved');
  metrics.reconcilerSettled('Unresolved');
  const all = await samples(metrics);
  assert.equal(valueOf(all, 'coregate_reconciler_settled_total', { result: 'Executed' }), 1);
  assert.equal(valueOf(all, 'coregate_reconciler_settled_total', { result: 'Unresolved' }), 2);
});

test('setCircuitState sets 1 for the current state of the target and 0 for the others', async () => {
  const metrics = fresh();
  metrics.setCircuitState('core', 'open');
  metrics.setCircuitState('core', 'half_open');
  const all = await samples(metrics);
  assert.equal(valueOf(all, 'coregate_circuit_state', { target: 'core', state: 'half_open' }), 1);
  assert.equal(valueOf(all, 'coregate_circuit_state', { target: 'core', state: 'open' }), 0);
  assert.equal(valueOf(all, 'coregate_circuit_state', { target: 'core', state: 'closed' }), 0);
});

test('coregate_limits_degraded reads 0 until a source is set, then follows it at each scrape', async () => {
  const metrics = fresh();
  assert.equal(valueOf(await samples(metrics), 'coregate_limits_degraded'), 0);
  let degraded = true;
  metrics.setLimitsDegradedSource(() => degraded);
  assert.equal(valueOf(await samples(metrics), 'coregate_limits_degraded'), 1);
  degraded = false;
  assert.equal(valueOf(await samples(metrics), 'coregate_limits_degraded'), 0);
});

test('the audit and pool gauges follow their sources; without a pool (SQLite) the pool gauges have no series', async () => {
  const metrics = fresh();
  let pool: { total: number; idle: number; waiting: number } | undefined = { total: 4, idle: 3, waiting: 0 };
  metrics.setAuditUnchainedSource(async () => 7);
  metrics.setPoolStatsSource(() => pool);
  let all = await samples(metrics);
  assert.equal(valueOf(all, 'coregate_audit_unchained_records'), 7);
  assert.equal(valueOf(all, 'coregate_db_pool_connections', { state: 'total' }), 4);
  assert.equal(valueOf(all, 'coregate_db_pool_connections', { state: 'idle' }), 3);
  assert.equal(valueOf(all, 'coregate_db_pool_connections', { state: 'waiting' }), 0);
  pool = undefined;
  all = await samples(metrics);
  assert.deepEqual(samplesOf(all, 'coregate_db_pool_connections'), []);
});

test('a failing scrape-time source still lets the scrape answer: its gauge is empty or NaN and coregate_metrics_source_errors_total counts it', async () => {
  const reported: string[] = [];
  const metrics = fresh({ onSourceError: (source) => reported.push(source) });
  metrics.setAuditUnchainedSource(async () => {
    throw new Error('database unreachable');
  });
  metrics.setReconcilerBacklogSource(async () => {
    throw new Error('database unreachable');
  });
  metrics.setLimitsDegradedSource(() => {
    throw new Error('no answer');
  });
  const all = await samples(metrics);
  assert.ok(Number.isNaN(valueOf(all, 'coregate_audit_unchained_records')));
  assert.ok(Number.isNaN(valueOf(all, 'coregate_operations_unknown_over_age')));
  assert.ok(Number.isNaN(valueOf(all, 'coregate_limits_degraded')));
  assert.deepEqual(samplesOf(all, 'coregate_reconciler_backlog'), []);
  assert.equal(valueOf(all, 'coregate_metrics_source_errors_total', { source: 'audit_unchained' }), 1);
  assert.equal(valueOf(all, 'coregate_metrics_source_errors_total', { source: 'reconciler_backlog' }), 1, 'one read shared by both backlog gauges');
  assert.equal(valueOf(all, 'coregate_metrics_source_errors_total', { source: 'limits_degraded' }), 1);
  assert.deepEqual(reported.sort(), ['audit_unchained', 'limits_degraded', 'reconciler_backlog']);
});

test('an unmatched request is labelled route="unmatched"; a method outside the known ones reads "other"', async () => {
  const metrics = fresh();
  metrics.httpRequestFinished({ route: undefined, method: 'GET', status: 404, durationSeconds: 0.001 });
  metrics.httpRequestFinished({ route: '/health/live', method: 'PROPFIND', status: 404, durationSeconds: 0.001 });
  const all = await samples(metrics);
  assert.equal(valueOf(all, 'coregate_http_requests_total', { route: 'unmatched', method: 'GET', status: '404' }), 1);
  assert.equal(valueOf(all, 'coregate_http_requests_total', { route: '/health/live', method: 'other', status: '404' }), 1);
});

test('token requests keep the realm label only when the status proves the realm exists (200, 400, 401, 429); others read realm="unknown"', async () => {
  const metrics = fresh();
  metrics.tokenRequestFinished('sandbox', 200);
  metrics.tokenRequestFinished('sandbox', 401);
  metrics.tokenRequestFinished('made-up-realm', 404);
  metrics.tokenRequestFinished('made-up-realm', 413);
  const all = await samples(metrics);
  assert.equal(valueOf(all, 'coregate_tokens_issued_total', { realm: 'sandbox' }), 1);
  assert.equal(valueOf(all, 'coregate_token_requests_total', { realm: 'sandbox', status: '200' }), 1);
  assert.equal(valueOf(all, 'coregate_token_requests_total', { realm: 'sandbox', status: '401' }), 1);
  assert.equal(valueOf(all, 'coregate_token_requests_total', { realm: 'unknown', status: '404' }), 1);
  assert.equal(valueOf(all, 'coregate_token_requests_total', { realm: 'unknown', status: '413' }), 1);
  assert.ok(!(await metrics.render()).includes('made-up-realm'));
});

test('labels fed from outside are bounded: past 100 distinct realms, the rest read realm="other"', async () => {
  const metrics = fresh();
  for (let index = 0; index < 150; index += 1) metrics.tokenRequestFinished(`realm-${index}`, 401);
  const all = await samples(metrics);
  assert.equal(samplesOf(all, 'coregate_token_requests_total').length, 101);
  assert.equal(valueOf(all, 'coregate_token_requests_total', { realm: 'other', status: '401' }), 50);
  assert.equal(valueOf(all, 'coregate_token_requests_total', { realm: 'realm-0', status: '401' }), 1);
});

test('each Metrics has its own registry: two instances in one process share no series', async () => {
  const first = fresh();
  const second = fresh();
  first.operationSettled('termDeposit.initiate', 'Executed');
  assert.equal(valueOf(await samples(first), 'coregate_operations_total', { operation: 'termDeposit.initiate', outcome: 'Executed' }), 1);
  assert.deepEqual(samplesOf(await samples(second), 'coregate_operations_total'), []);
});

test('default metrics (event-loop lag, memory, CPU) are in the instance registry unless turned off', async () => {
  const withDefaults = await samples(new Metrics());
  for (const name of ['nodejs_eventloop_lag_seconds', 'nodejs_eventloop_lag_p99_seconds', 'nodejs_heap_size_used_bytes', 'process_cpu_seconds_total']) {
    assert.ok(samplesOf(withDefaults, name).length > 0, `${name} present`);
  }
  assert.deepEqual(samplesOf(await samples(fresh()), 'nodejs_eventloop_lag_seconds'), []);
});

test('coreProtocolViolation counts coregate_core_protocol_violations_total by kind, every kind exported from 0 so that an alert on increase() sees the first', async () => {
  const metrics = fresh();
  const before = await samples(metrics);
  for (const kind of ['unknown_refusal', 'refusal_family_mismatch', 'refusal_code_mismatch', 'malformed_answer', 'unexpected_status', 'foreign_answer']) {
    assert.equal(valueOf(before, 'coregate_core_protocol_violations_total', { kind }), 0, kind);
  }
  metrics.coreProtocolViolation('unknown_refusal');
  metrics.coreProtocolViolation('unknown_refusal');
  metrics.coreProtocolViolation('malformed_answer');
  const after = await samples(metrics);
  assert.equal(valueOf(after, 'coregate_core_protocol_violations_total', { kind: 'unknown_refusal' }), 2);
  assert.equal(valueOf(after, 'coregate_core_protocol_violations_total', { kind: 'malformed_answer' }), 1);
  assert.equal(samplesOf(after, 'coregate_core_protocol_violations_total').length, 6, 'a fixed set of kinds, never a value of the answer');
});
