/**
 * The two series every HTTP answer feeds — `coregate_http_requests_total` and
 * `coregate_http_request_duration_seconds` — kept in one table and rendered by prom-client's
 * registry at scrape time. prom-client's Counter and Histogram hash their label object on every
 * call (sorting its names into a key string): twice per request, that was 6 % of a retrieve's CPU.
 * Here a request costs one lookup by a key made of the three label values, which the callers bound.
 */
import type { Registry } from 'prom-client';

interface Entry {
  labels: { route: string; method: string; status: string };
  /** Observations per bucket, not cumulative (summed at scrape time). */
  bucketCounts: number[];
  sumSeconds: number;
  count: number;
}

interface MetricValue {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
}

/** What prom-client's registry reads of a metric (its Counter and Histogram answer the same shape). */
interface CollectableMetric {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  aggregator: 'sum';
  get(): Promise<{ name: string; help: string; type: string; values: MetricValue[]; aggregator: string }>;
  reset(): void;
}

export class RequestSeries {
  readonly #entries = new Map<string, Entry>();
  /**
   * The same entries by route, then method, then status: the route and method strings are the
   * same objects request after request (their hashes are kept), where a key made by joining them
   * was a new string to hash on every answer.
   */
  readonly #byRoute = new Map<string, Map<string, Map<number, Entry>>>();
  readonly #bucketsSeconds: readonly number[];

  constructor(registry: Registry, names: { total: string; totalHelp: string; duration: string; durationHelp: string }, bucketsSeconds: readonly number[]) {
    this.#bucketsSeconds = bucketsSeconds;
    registry.registerMetric(this.#metric(names.total, names.totalHelp, 'counter', () => this.#totals()) as never);
    registry.registerMetric(this.#metric(names.duration, names.durationHelp, 'histogram', () => this.#histogram(names.duration)) as never);
  }

  observe(route: string, method: string, status: number, durationSeconds: number): void {
    const entry = this.#byRoute.get(route)?.get(method)?.get(status) ?? this.#add(route, method, status);
    let bucket = 0;
    while (bucket < this.#bucketsSeconds.length && durationSeconds > (this.#bucketsSeconds[bucket] as number)) bucket += 1;
    entry.bucketCounts[bucket] = (entry.bucketCounts[bucket] ?? 0) + 1;
    entry.sumSeconds += durationSeconds;
    entry.count += 1;
  }

  #add(route: string, method: string, status: number): Entry {
    const key = `${route}\u0000${method}\u0000${status}`;
    let entry = this.#entries.get(key);
    if (entry === undefined) {
      entry = { labels: { route, method, status: String(status) }, bucketCounts: new Array<number>(this.#bucketsSeconds.length + 1).fill(0), sumSeconds: 0, count: 0 };
      this.#entries.set(key, entry);
    }
    let byMethod = this.#byRoute.get(route);
    if (byMethod === undefined) this.#byRoute.set(route, (byMethod = new Map()));
    let byStatus = byMethod.get(method);
    if (byStatus === undefined) byMethod.set(method, (byStatus = new Map()));
    byStatus.set(status, entry);
    return entry;
  }

  #metric(name: string, help: string, type: 'counter' | 'histogram', values: () => MetricValue[]): CollectableMetric {
    return {
      name,
      help,
      type,
      aggregator: 'sum',
      get: async () => ({ name, help, type, values: values(), aggregator: 'sum' }),
      reset: () => {
        this.#entries.clear();
        this.#byRoute.clear();
      },
    };
  }

  #totals(): MetricValue[] {
    return [...this.#entries.values()].map((entry) => ({ labels: { ...entry.labels }, value: entry.count }));
  }

  /** Cumulative buckets with their `le`, then `_sum` and `_count`, as prom-client's Histogram renders them. */
  #histogram(name: string): MetricValue[] {
    const values: MetricValue[] = [];
    for (const entry of this.#entries.values()) {
      let cumulative = 0;
      this.#bucketsSeconds.forEach((bound, index) => {
        cumulative += entry.bucketCounts[index] ?? 0;
        values.push({ labels: { ...entry.labels, le: bound }, value: cumulative, metricName: `${name}_bucket` });
      });
      values.push({ labels: { ...entry.labels, le: '+Inf' }, value: entry.count, metricName: `${name}_bucket` });
      values.push({ labels: { ...entry.labels }, value: entry.sumSeconds, metricName: `${name}_sum` });
      values.push({ labels: { ...entry.labels }, value: entry.count, metricName: `${name}_count` });
    }
    return values;
  }
}
