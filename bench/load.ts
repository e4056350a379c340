/**
 * Load from autocannon, used as a library in the bench's own process (never in the server's):
 * a warm-up run that is discarded, then the measured run, with a progress line on stderr.
 * Every request is built afresh (unique correlation ids, rotating accounts) and every answer's
 * status is counted: a scenario that measured the wrong answers says so.
 */
import autocannon from 'autocannon';

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
}

export interface LoadOptions {
  connections: number;
  seconds: number;
  warmupSeconds: number;
}

export async function measure(url: string, scenario: Scenario, options: LoadOptions): Promise<Measurement> {
  let counter = 0;
  const next = () => scenario.request(counter++);
  if (options.warmupSeconds > 0) await run(url, scenario, next, options.connections, options.warmupSeconds, `${scenario.name} (warm-up)`);
  const result = await run(url, scenario, next, options.connections, options.seconds, scenario.name);
  const statuses: Record<string, number> = {};
  for (const [code, stats] of Object.entries(result.statusCodeStats ?? {})) statuses[code] = (stats as { count: number }).count;
  const expected = scenario.expect.reduce((sum, code) => sum + (statuses[String(code)] ?? 0), 0);
  const answered = Object.values(statuses).reduce((sum, count) => sum + count, 0);
  return {
    name: scenario.name,
    perSecond: Math.round(answered / result.duration),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    requests: answered,
    unexpected: answered - expected + result.errors + result.timeouts,
    statuses,
  };
}

function run(url: string, scenario: Scenario, next: () => RequestShape, connections: number, seconds: number, label: string): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    let done = 0;
    const instance = autocannon(
      {
        url,
        connections,
        duration: seconds,
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
      process.stderr.write(`\r\x1b[K  ${label}: ${elapsed.toFixed(0)}/${seconds} s, ${Math.round(done / Math.max(elapsed, 0.001))} req/s`);
    }, 1000);
    instance.once('done', () => clearInterval(progress));
  });
}
