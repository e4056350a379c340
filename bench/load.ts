/**
 * Load from autocannon, used as a library in the bench's own process (never in the server's):
 * a warm-up run that is discarded, then the measured run, with a progress line on stderr.
 * Every request is built afresh (unique correlation ids, rotating accounts) and every answer's
 * status is counted: a scenario that measured the wrong answers says so.
 */
import autocannon from 'autocannon';
import type { CpuProbe, CpuUse } from './cpu.js';

export interface RequestShape {
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string;
}

export interface Scenario {
  name: string;
  /** The request number i (0, 1, 2...): bodies and ids vary with it. */
  request: (i: number) => RequestShape;
  /** Statuses that count as the scenario's intended answer. */
  expect: readonly number[];
  /** Over TLS, the connections presenting this client certificate (bench/mtls.ts). */
  tls?: { cert: Buffer; key: Buffer };
}

export interface Measurement {
  name: string;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  /** Answers with an unexpected status, connection errors and time-outs. */
  unexpected: number;
  statuses: Record<string, number>;
  /** CPU spent during the measured run (bench/cpu.ts), when a probe was given. */
  cpu?: CpuUse;
}

export interface LoadOptions {
  connections: number;
  seconds: number;
  warmupSeconds: number;
  /**
   * The smoke run's: this many requests (after a warm-up of one per connection) instead of
   * `seconds`, every one waited for, so that a slow machine still gets its answers and a fast one
   * spends no more than it needs (the smoke test checks that the bench works, never how fast).
   */
  requests?: number;
}

export async function measure(url: string, scenario: Scenario, options: LoadOptions, cpu?: CpuProbe): Promise<Measurement> {
  let counter = 0;
  const next = () => scenario.request(counter++);
  if (options.requests !== undefined) await run(url, scenario, next, options.connections, { amount: options.connections }, `${scenario.name} (warm-up)`);
  else if (options.warmupSeconds > 0) await run(url, scenario, next, options.connections, { duration: options.warmupSeconds }, `${scenario.name} (warm-up)`);
  const length = options.requests === undefined ? { duration: options.seconds } : { amount: options.requests };
  const stop = cpu?.();
  const result = await run(url, scenario, next, options.connections, length, scenario.name);
  const statuses: Record<string, number> = {};
  for (const [code, stats] of Object.entries(result.statusCodeStats ?? {})) statuses[code] = (stats as { count: number }).count;
  const expected = scenario.expect.reduce((sum, code) => sum + (statuses[String(code)] ?? 0), 0);
  const answered = Object.values(statuses).reduce((sum, count) => sum + count, 0);
  const use = stop?.(answered);
  return {
    ...(use === undefined ? {} : { cpu: use }),
    name: scenario.name,
    perSecond: Math.round(answered / result.duration),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    requests: answered,
    unexpected: answered - expected + result.errors + result.timeouts,
    statuses,
  };
}

/** A run of `duration` seconds, or of `amount` requests. */
type RunLength = { duration: number } | { amount: number };

function run(url: string, scenario: Scenario, next: () => RequestShape, connections: number, length: RunLength, label: string): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    let done = 0;
    const instance = autocannon(
      {
        url,
        connections,
        ...length,
        ...(scenario.tls ? { tlsOptions: { cert: scenario.tls.cert, key: scenario.tls.key } } : {}),
        requests: [{ setupRequest: (request) => ({ ...request, ...next() }) }],
      },
      (error, result) => {
        process.stderr.write('\r\x1b[K');
        if (error) reject(error);
        else resolve(result);
      },
    );
    instance.on('response', () => (done += 1));
    const progress = setInterval(() => {
      const elapsed = (Date.now() - started) / 1000;
      const of = 'duration' in length ? `${elapsed.toFixed(0)}/${length.duration} s` : `${done}/${length.amount} requests`;
      process.stderr.write(`\r\x1b[K  ${label}: ${of}, ${Math.round(done / Math.max(elapsed, 0.001))} req/s`);
    }, 1000);
    instance.once('done', () => clearInterval(progress));
  });
}
