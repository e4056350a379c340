/**
 * A paced (open-loop) run for "p99 at half the measured rate": requests sent at evenly spaced
 * instants, `rate` per second, over the same number of connections, each latency counted from the
 * instant the request was due (a request waiting for a free connection is late, and that lateness
 * is latency: no coordinated omission).
 *
 * Not autocannon's overallRate: it paces per connection and per second (its client resets the
 * count every 1000 ms), so each connection sends its quota back to back at the start of every
 * second and then idles: the server sees full-load bursts, and the p99 is the full-load p99.
 */
import { Agent, request as httpRequest } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { LoadOptions, Measurement, RequestShape, Scenario } from './load.js';

export async function measurePaced(url: string, scenario: Scenario, options: LoadOptions, rate: number): Promise<Measurement> {
  // node:http rather than undici's Pool: undici 7 beside Node 20's own fetch broke later fetches.
  const pool = new Agent({ keepAlive: true, maxSockets: options.connections });
  let counter = 0;
  const next = () => scenario.request(counter++);
  try {
    // The smoke run (options.requests): that many requests at the rate, no warm-up.
    if (options.warmupSeconds > 0 && options.requests === undefined) await run(url, pool, next, rate, options.warmupSeconds, `${scenario.name} (warm-up)`);
    const length = options.requests === undefined ? options.seconds : Math.min(options.seconds, options.requests / rate);
    const { latencies, statuses, errors, seconds } = await run(url, pool, next, rate, length, scenario.name);
    latencies.sort((a, b) => a - b);
    const at = (q: number) => Math.round((latencies[Math.min(latencies.length - 1, Math.ceil(q * latencies.length) - 1)] ?? 0) * 100) / 100;
    const expected = scenario.expect.reduce((sum, code) => sum + (statuses[String(code)] ?? 0), 0);
    return {
      name: scenario.name,
      perSecond: Math.round(latencies.length / seconds),
      p50Ms: at(0.5),
      p99Ms: at(0.99),
      requests: latencies.length,
      unexpected: latencies.length - expected + errors,
      statuses,
    };
  } finally {
    pool.destroy();
  }
}

/** One request on the agent's connections: its status once the whole answer has arrived. */
function send(url: string, agent: Agent, request: RequestShape): Promise<number> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(new URL(request.path, url), { method: request.method, headers: request.headers, agent, timeout: 30_000 }, (response) => {
      response.resume();
      response.once('end', () => resolve(response.statusCode ?? 0));
      response.once('error', reject);
    });
    outgoing.once('error', reject);
    outgoing.once('timeout', () => outgoing.destroy(new Error('timed out')));
    outgoing.end(request.body);
  });
}

async function run(url: string, pool: Agent, next: () => RequestShape, rate: number, seconds: number, label: string) {
  const intervalMs = 1000 / rate;
  const total = Math.max(1, Math.round(rate * seconds));
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  let errors = 0;
  const inFlight = new Set<Promise<void>>();
  const started = performance.now();
  const progress = setInterval(() => {
    const elapsed = (performance.now() - started) / 1000;
    process.stderr.write(`\r\x1b[K  ${label}: ${elapsed.toFixed(0)}/${seconds} s, ${rate} req/s paced`);
  }, 1000);

  const issue = (dueAt: number) => {
    const sent = send(url, pool, next())
      .then((status) => {
        latencies.push(performance.now() - dueAt);
        statuses[status] = (statuses[status] ?? 0) + 1;
      })
      .catch(() => {
        errors += 1;
      });
    const tracked = sent.finally(() => inFlight.delete(tracked));
    inFlight.add(tracked);
  };

  // Wake at most every few milliseconds and send every request that has come due since.
  for (let i = 0; i < total; ) {
    const now = performance.now();
    while (i < total && started + i * intervalMs <= now) {
      issue(started + i * intervalMs);
      i += 1;
    }
    if (i < total) await sleep(Math.max(0, Math.min(started + i * intervalMs - performance.now(), 50)));
  }
  const issuedFor = (performance.now() - started) / 1000;
  await Promise.all(inFlight);
  clearInterval(progress);
  process.stderr.write('\r\x1b[K');
  return { latencies, statuses, errors, seconds: Math.max(issuedFor, seconds) };
}
