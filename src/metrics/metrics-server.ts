/**
 * `GET /metrics` on a port of its own (`--metrics-port`), so that the scraper's port can be
 * firewalled apart from the business API's. It serves nothing else: any other path is 404, any
 * other method 405. Plain HTTP even when the main port serves HTTPS: it is meant for an internal
 * network (docs/metrics.md). It holds connections to the main port's limits (connection-limits.ts):
 * a port of its own is still a port, and silent connections to it exhausted the process's file
 * descriptors when nothing closed them.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { applyConnectionLimits, type ConnectionLimits } from '../connection-limits.js';
import type { Clock } from '../core/clock.js';
import { metricsPath } from './metrics-route.js';
import type { Metrics } from './registry.js';

export interface MetricsServer {
  /** Where the metrics are served, e.g. http://127.0.0.1:9464/metrics. */
  readonly url: string;
  close(): Promise<void>;
}

/**
 * Listens on `host`:`port` (0: any free port) under `limits` (the main port's); `onError` hears of
 * a scrape that failed.
 */
export async function startMetricsServer(
  metrics: Metrics,
  options: { host: string; port: number; limits: ConnectionLimits; clock: Clock; onError: (error: unknown) => void },
): Promise<MetricsServer> {
  const { limits } = options;
  const server = createServer({ requestTimeout: limits.requestTimeoutMs, headersTimeout: limits.headersTimeoutMs, keepAliveTimeout: limits.keepAliveTimeoutMs }, (request, response) => {
    answer(metrics, request, response).catch((error: unknown) => {
      options.onError(error);
      if (!response.headersSent) response.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' });
      response.end('metrics unavailable\n');
    });
  });
  applyConnectionLimits(server, limits, options.clock);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: options.port, host: options.host }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host === '0.0.0.0' || options.host === '::' ? 'localhost' : options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    url: `http://${host}:${port}${metricsPath}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        // A scraper keeps its connection alive between scrapes: idle connections must not hold close().
        server.closeIdleConnections();
      }),
  };
}

async function answer(metrics: Metrics, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const path = (request.url ?? '').split('?')[0];
  if (path !== metricsPath) {
    response.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('not found\n');
    return;
  }
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    response.writeHead(405, { Allow: 'GET, HEAD', 'Content-Type': 'text/plain; charset=utf-8' }).end('method not allowed\n');
    return;
  }
  const text = await metrics.render();
  response.writeHead(200, { 'Content-Type': metrics.contentType, 'Cache-Control': 'no-store' });
  response.end(request.method === 'HEAD' ? undefined : text);
}
