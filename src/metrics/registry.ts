/**
 * One Prometheus registry per Coregate instance (tests start several in one process, so never
 * prom-client's global registry), behind a typed facade: callers say what happened (a request
 * finished, an operation settled, a core call returned) and the facade picks the metric, its
 * labels and their bounds. No method takes a request, a body, a token or an identifier, so no
 * secret and no customer data (account numbers, customer references, correlation ids,
 * operation references) can reach a label. docs/metrics.md describes every series.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { PoolStats } from '../store/connect.js';
import { LabelBudget } from './label-budget.js';
import { RequestSeries } from './request-series.js';
import { auditLossReasons, type AuditLossReason } from '../audit/audit-unavailable.js';
import { protocolViolationKinds, type ProtocolViolationKind } from '../core-http/codec.js';

/** How an operation request ended, as the operations layer reports it. */
export type OperationOutcome = 'Executed' | 'Rejected' | 'Unknown' | 'Pending' | 'Duplicate' | 'Refused';
/** How one call to the core ended: `refused` is the core's business refusal, the rest are failures. */
export type CoreCallResult = 'ok' | 'refused' | 'timeout' | 'unavailable' | 'protocol_error' | 'circuit_open';
/** What one reconciliation of an unknown or pending operation found: settled, or still not known (`Unresolved`), or failed. */
export type ReconcilerResult = 'Executed' | 'Rejected' | 'Unresolved' | 'Failed';
/** A circuit breaker's state. */
export type CircuitState = 'closed' | 'open' | 'half_open';
/** What the audit spool holds now (src/audit/audit-spool.ts). */
export interface AuditSpoolReading {
  records: number;
  bytes: number;
  oldestAgeSeconds: number;
}
/** Operations the reconciler still has to settle; `overAge`: unknown ones older than the alert age. */
export interface ReconcilerBacklog {
  unknown: number;
  pending: number;
  overAge: number;
}

/** Request latency, up to the server's 30 s request time-out. */
const httpDurationBucketsSeconds = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Core call latency: the core's time-out is 5 s by default and at most minutes. */
const coreCallDurationBucketsSeconds = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
/** Distinct realm label values; realms are few, created by an operator. */
const realmLabelsMax = 100;
/** Distinct operation and core call names: the code names them, a handful each. */
const operationLabelsMax = 50;
/** Distinct circuit breaker targets. */
const circuitTargetLabelsMax = 20;
/** The only method labels; anything else reads `other`. */
const knownMethods = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
/** The route label of a request that matched no route: never the raw URL, which is unbounded and may carry data. */
export const unmatchedRoute = 'unmatched';
/** Token endpoint statuses that prove the realm exists (the endpoint looks the realm up first): only these keep the realm label. */
const realmProvingStatuses = new Set([200, 400, 401, 429]);
/** The realm label of a token request whose realm is not proven to exist. */
export const unknownRealm = 'unknown';
const circuitStates: readonly CircuitState[] = ['closed', 'open', 'half_open'];

/** A scrape-time source: `name` labels its failures in coregate_metrics_source_errors_total. */
type SourceName = 'reconciler_backlog' | 'audit_unchained' | 'db_pool' | 'limits_degraded';

export interface MetricsOptions {
  /** prom-client's process and Node.js metrics (event-loop lag, memory, CPU, GC); default true. */
  defaultMetrics?: boolean;
  /** Told when a scrape-time source throws (to log it); the scrape still answers. */
  onSourceError?: (source: string, error: unknown) => void;
}

/** What the API's requests count: every HTTP request, and the token endpoint's. */
interface RequestEvents {
  httpRequests: RequestSeries;
  tokensIssued: Counter<'realm'>;
  tokenRequests: Counter<'realm' | 'status'>;
}

function requestEvents(registry: Registry): RequestEvents {
  const registers = [registry];
  const httpRequests = new RequestSeries(
    registry,
    {
      total: 'coregate_http_requests_total',
      totalHelp: 'HTTP requests answered, by route pattern (unmatched: no route), method and status.',
      duration: 'coregate_http_request_duration_seconds',
      durationHelp: 'Time from receiving an HTTP request to its response, by route pattern, method and status.',
    },
    httpDurationBucketsSeconds,
  );
  const tokensIssued = new Counter({
    name: 'coregate_tokens_issued_total',
    help: 'Access tokens issued by the token endpoint, by realm.',
    labelNames: ['realm'],
    registers,
  });
  const tokenRequests = new Counter({
    name: 'coregate_token_requests_total',
    help: 'Token endpoint requests by realm (unknown when the realm is not proven to exist) and status.',
    labelNames: ['realm', 'status'],
    registers,
  });
  return { httpRequests, tokensIssued, tokenRequests };
}

/** What the operations and their core calls count: settled operations, core calls, reconciliations, circuit breakers. */
interface CoreEvents {
  operationsSettled: Counter<'operation' | 'outcome'>;
  coreCallsTotal: Counter<'call' | 'result'>;
  coreCallDuration: Histogram<'call' | 'result'>;
  reconcilerSettled: Counter<'result'>;
  circuitState: Gauge<'target' | 'state'>;
}

function coreEvents(registry: Registry): CoreEvents {
  const registers = [registry];
  const operationsSettled = new Counter({
    name: 'coregate_operations_total',
    help: 'Business operation requests by operation and outcome.',
    labelNames: ['operation', 'outcome'],
    registers,
  });
  const coreCallsTotal = new Counter({
    name: 'coregate_core_calls_total',
    help: 'Calls to the core banking system by call and result.',
    labelNames: ['call', 'result'],
    registers,
  });
  const coreCallDuration = new Histogram({
    name: 'coregate_core_call_duration_seconds',
    help: 'Duration of calls to the core banking system by call and result.',
    labelNames: ['call', 'result'],
    buckets: coreCallDurationBucketsSeconds,
    registers,
  });
  const reconcilerSettled = new Counter({
    name: 'coregate_reconciler_settled_total',
    help: 'Reconciliations of unknown or pending operations by result.',
    labelNames: ['result'],
    registers,
  });
  const circuitState = new Gauge({
    name: 'coregate_circuit_state',
    help: 'Circuit breaker state by target: 1 for the current state, 0 for the others.',
    labelNames: ['target', 'state'],
    registers,
  });
  return { operationsSettled, coreCallsTotal, coreCallDuration, reconcilerSettled, circuitState };
}

/** What must never go unnoticed: audit records lost and the remote core's protocol violations, every label from 0. */
interface LossEvents {
  auditRecordsLost: Counter<'reason'>;
  coreProtocolViolations: Counter<'kind'>;
}

function lossEvents(registry: Registry): LossEvents {
  const registers = [registry];
  const auditRecordsLost = new Counter({
    name: 'coregate_audit_records_lost_total',
    help: 'Audit records of refused requests that could not be kept, by reason: spool_full, spool_failed (writing to the spool), write_failed (the database, not an outage), spool_quarantined (a spool file the database refused, set aside).',
    labelNames: ['reason'],
    registers,
  });
  // Every reason from 0, so that an alert on increase() sees the first loss.
  for (const reason of auditLossReasons) auditRecordsLost.inc({ reason }, 0);
  const coreProtocolViolations = new Counter({
    name: 'coregate_core_protocol_violations_total',
    help: 'Answers of the remote core that broke its protocol, by kind: a refusal coregate cannot name (unknown_refusal, refusal_family_mismatch, refusal_code_mismatch: settled Rejected as the core said), or an answer held unknown (malformed_answer, unexpected_status, foreign_answer: 502).',
    labelNames: ['kind'],
    registers,
  });
  // Every kind from 0, for the same reason: the first violation is the one to alert on.
  for (const kind of protocolViolationKinds) coreProtocolViolations.inc({ kind }, 0);
  return { auditRecordsLost, coreProtocolViolations };
}

export class Metrics {
  /** This instance's registry; `render()` is its text. */
  readonly registry = new Registry();
  readonly #onSourceError: (source: string, error: unknown) => void;
  readonly #realms = new LabelBudget(realmLabelsMax);
  readonly #operations = new LabelBudget(operationLabelsMax);
  readonly #coreCalls = new LabelBudget(operationLabelsMax);
  readonly #circuitTargets = new LabelBudget(circuitTargetLabelsMax);

  readonly #requests: RequestEvents;
  readonly #core: CoreEvents;
  readonly #losses: LossEvents;
  readonly #sourceErrors: Counter<'source'>;

  #backlogSource: (() => Promise<ReconcilerBacklog>) | undefined;
  /** One backlog read shared by the two gauges it feeds, for the scrape in progress. */
  #backlogRead: Promise<ReconcilerBacklog | undefined> | undefined;
  #auditUnchainedSource: (() => Promise<number>) | undefined;
  #poolSource: (() => PoolStats | undefined) | undefined;
  #limitsDegradedSource: (() => boolean) | undefined;
  #auditSpoolSource: (() => AuditSpoolReading) | undefined;
  /** Scrape-time reads under way, which the source error counter waits for. */
  readonly #readsInFlight = new Set<Promise<unknown>>();

  constructor(options: MetricsOptions = {}) {
    this.#onSourceError = options.onSourceError ?? (() => {});
    if (options.defaultMetrics !== false) collectDefaultMetrics({ register: this.registry });
    this.#requests = requestEvents(this.registry);
    this.#core = coreEvents(this.registry);
    this.#addBacklogGauges();
    this.#addStoreGauges();
    this.#addSpoolGauges();
    this.#losses = lossEvents(this.registry);
    // Registered after the gauges so that their reads have started when this one is collected:
    // it waits for them, and a failure shows in the same scrape as its empty gauge.
    this.#sourceErrors = new Counter({
      name: 'coregate_metrics_source_errors_total',
      help: 'Scrape-time reads that failed, by source; their gauges are empty (or NaN) for that scrape.',
      labelNames: ['source'],
      registers: [this.registry],
      collect: async () => {
        await Promise.allSettled(this.#readsInFlight);
      },
    });
  }

  /** `coregate_reconciler_backlog{state}` and `coregate_operations_unknown_over_age`, read at each scrape from one read of the backlog. */
  #addBacklogGauges(): void {
    const registers = [this.registry];
    const backlogGauge: Gauge<'state'> = new Gauge({
      name: 'coregate_reconciler_backlog',
      help: 'Operations the reconciler has yet to settle, by state (unknown, pending).',
      labelNames: ['state'],
      registers,
      collect: async () => {
        backlogGauge.reset();
        const backlog = await this.#readBacklog();
        if (!backlog) return;
        backlogGauge.set({ state: 'unknown' }, backlog.unknown);
        backlogGauge.set({ state: 'pending' }, backlog.pending);
      },
    });
    const overAgeGauge: Gauge = new Gauge({
      name: 'coregate_operations_unknown_over_age',
      help: 'Operations whose outcome has been unknown for longer than the reconciler should need.',
      registers,
      collect: async () => {
        const backlog = await this.#readBacklog();
        overAgeGauge.set(backlog ? backlog.overAge : this.#backlogSource ? Number.NaN : 0);
      },
    });
  }

  /** The store's and the limits store's gauges, read at each scrape: unchained audit records, the pool's connections, degraded limits. */
  #addStoreGauges(): void {
    const registers = [this.registry];
    const unchainedGauge: Gauge = new Gauge({
      name: 'coregate_audit_unchained_records',
      help: 'Audit records not yet in the hash chain; growing means the chainer is not keeping up or failing.',
      registers,
      collect: async () => {
        const source = this.#auditUnchainedSource;
        unchainedGauge.set(source ? await this.#read('audit_unchained', source, Number.NaN) : 0);
      },
    });
    const poolGauge: Gauge<'state'> = new Gauge({
      name: 'coregate_db_pool_connections',
      help: 'PostgreSQL pool connections by state: total open, idle, and callers waiting for one. Absent on SQLite.',
      labelNames: ['state'],
      registers,
      collect: async () => {
        poolGauge.reset();
        const source = this.#poolSource;
        const stats = source && (await this.#read('db_pool', async () => source(), undefined));
        if (!stats) return;
        poolGauge.set({ state: 'total' }, stats.total);
        poolGauge.set({ state: 'idle' }, stats.idle);
        poolGauge.set({ state: 'waiting' }, stats.waiting);
      },
    });
    const degradedGauge: Gauge = new Gauge({
      name: 'coregate_limits_degraded',
      help: '1 while the shared limits store (Redis) is unreachable and this instance enforces limits on its own, else 0.',
      registers,
      collect: async () => {
        const source = this.#limitsDegradedSource;
        const degraded = source ? await this.#read('limits_degraded', async () => source(), undefined) : false;
        degradedGauge.set(degraded === undefined ? Number.NaN : degraded ? 1 : 0);
      },
    });
  }

  /** The audit spool's records, bytes and oldest age: an in-memory reading at each scrape. */
  #addSpoolGauges(): void {
    const registers = [this.registry];
    const spoolRecordsGauge: Gauge = new Gauge({
      name: 'coregate_audit_spool_records',
      help: 'Audit records kept in this instance\'s local spool during a database outage, waiting to be appended to the audit trail; 0 normally.',
      registers,
      collect: () => {
        spoolRecordsGauge.set(this.#auditSpoolSource?.().records ?? 0);
      },
    });
    const spoolBytesGauge: Gauge = new Gauge({
      name: 'coregate_audit_spool_bytes',
      help: 'Bytes of the audit spool\'s files held by this instance.',
      registers,
      collect: () => {
        spoolBytesGauge.set(this.#auditSpoolSource?.().bytes ?? 0);
      },
    });
    const spoolAgeGauge: Gauge = new Gauge({
      name: 'coregate_audit_spool_oldest_record_age_seconds',
      help: 'Seconds since the oldest record in the audit spool was recorded; 0 when the spool is empty.',
      registers,
      collect: () => {
        spoolAgeGauge.set(this.#auditSpoolSource?.().oldestAgeSeconds ?? 0);
      },
    });
  }

  /** The Content-Type of `render()`'s text (Prometheus text format 0.0.4). */
  get contentType(): string {
    return this.registry.contentType;
  }

  /** Every metric of this instance in the Prometheus text format; runs the scrape-time sources. */
  render(): Promise<string> {
    return this.registry.metrics();
  }

  /**
   * An HTTP request was answered. `route` is the route pattern (`/v1/term-deposits/initiate`,
   * `/realms/:realm/protocol/openid-connect/token`), undefined when no route matched: it is then
   * labelled `unmatched`, never with the URL.
   */
  httpRequestFinished(request: { route: string | undefined; method: string; status: number; durationSeconds: number }): void {
    this.#requests.httpRequests.observe(request.route ?? unmatchedRoute, knownMethods.has(request.method) ? request.method : 'other', request.status, request.durationSeconds);
  }

  /**
   * The token endpoint answered `status` for `realm` (the URL's realm segment). The realm is a
   * label only when the status proves the realm exists (200, 400, 401, 429: the endpoint looks the
   * realm up first); otherwise (404, 413, 5xx) it reads `unknown`, so that requests for made-up
   * realms cannot create series. A 200 also counts a token issued.
   */
  tokenRequestFinished(realm: string, status: number): void {
    const realmLabel = realmProvingStatuses.has(status) ? this.#realms.label(realm) : unknownRealm;
    this.#requests.tokenRequests.inc({ realm: realmLabel, status: String(status) });
    if (status === 200) this.#requests.tokensIssued.inc({ realm: realmLabel });
  }

  /**
   * A business operation request ended (`coregate_operations_total{operation,outcome}`).
   * `operation` is a registered operation's name (src/operations/registry.ts, e.g.
   * `initiateTermDeposit`), never a reference or anything from the request.
   */
  operationSettled(operation: string, outcome: OperationOutcome): void {
    this.#core.operationsSettled.inc({ operation: this.#operations.label(operation), outcome });
  }

  /**
   * One call to the core ended after `seconds` (`coregate_core_calls_total{call,result}` and the
   * histogram `coregate_core_call_duration_seconds{call,result}`). `call` names the port method
   * (`constituteTermDeposit`, `lookUpOperation`); `result` says how it ended.
   */
  observeCoreCall(call: string, result: CoreCallResult, seconds: number): void {
    const labels = { call: this.#coreCalls.label(call), result };
    this.#core.coreCallsTotal.inc(labels);
    this.#core.coreCallDuration.observe(labels, seconds);
  }

  /**
   * Where the reconciler backlog is read at each scrape: gauges `coregate_reconciler_backlog{state}`
   * (unknown, pending) and `coregate_operations_unknown_over_age`. Replaces any earlier source.
   * Until one is set the backlog gauge has no series and the over-age gauge reads 0.
   */
  setReconcilerBacklogSource(source: () => Promise<ReconcilerBacklog>): void {
    this.#backlogSource = source;
  }

  /** The reconciler finished with one operation (`coregate_reconciler_settled_total{result}`). */
  reconcilerSettled(result: ReconcilerResult): void {
    this.#core.reconcilerSettled.inc({ result });
  }

  /** A circuit breaker in front of `target` (e.g. `core`) is now in `state` (`coregate_circuit_state{target,state}`). */
  setCircuitState(target: string, state: CircuitState): void {
    const label = this.#circuitTargets.label(target);
    for (const each of circuitStates) this.#core.circuitState.set({ target: label, state: each }, each === state ? 1 : 0);
  }

  /** Where the number of unchained audit records is read at each scrape (`coregate_audit_unchained_records`). */
  setAuditUnchainedSource(source: () => Promise<number>): void {
    this.#auditUnchainedSource = source;
  }

  /** Where the database pool's use is read at each scrape (`coregate_db_pool_connections{state}`); undefined: no pool, no series. */
  setPoolStatsSource(source: () => PoolStats | undefined): void {
    this.#poolSource = source;
  }

  /**
   * Where `coregate_limits_degraded` is read at each scrape: true while the shared limits store
   * (Redis) is unreachable and this instance enforces limits on its own. Reads 0 until set.
   */
  setLimitsDegradedSource(source: () => boolean): void {
    this.#limitsDegradedSource = source;
  }

  /**
   * Where the audit spool's size is read at each scrape (`coregate_audit_spool_records`,
   * `coregate_audit_spool_bytes`, `coregate_audit_spool_oldest_record_age_seconds`): an in-memory
   * reading, no I/O. They read 0 until set (an auth-only instance has no spool).
   */
  setAuditSpoolSource(source: () => AuditSpoolReading): void {
    this.#auditSpoolSource = source;
  }

  /**
   * The remote core answered outside its protocol (`coregate_core_protocol_violations_total{kind}`):
   * `kind` is one of a fixed list (src/core-http/codec.ts), never a value from the answer.
   */
  coreProtocolViolation(kind: ProtocolViolationKind): void {
    this.#losses.coreProtocolViolations.inc({ kind });
  }

  /** An audit record of a refused request could not be kept (`coregate_audit_records_lost_total{reason}`). */
  auditRecordLost(reason: AuditLossReason): void {
    this.#losses.auditRecordsLost.inc({ reason });
  }

  /** Both backlog gauges are collected in the same scrape: they share one read of the source. */
  #readBacklog(): Promise<ReconcilerBacklog | undefined> {
    const source = this.#backlogSource;
    if (!source) return Promise.resolve(undefined);
    this.#backlogRead ??= this.#read('reconciler_backlog', source, undefined).finally(() => {
      this.#backlogRead = undefined;
    });
    return this.#backlogRead;
  }

  /** Runs a scrape-time source; a failure is counted and reported, and answers `fallback`. */
  #read<T, F>(name: SourceName, source: () => Promise<T>, fallback: F): Promise<T | F> {
    const read = (async () => {
      try {
        return await source();
      } catch (error) {
        this.#sourceErrors.inc({ source: name });
        this.#onSourceError(name, error);
        return fallback;
      }
    })();
    this.#readsInFlight.add(read);
    void read.finally(() => this.#readsInFlight.delete(read));
    return read;
  }
}
