/**
 * `GET /metrics` on the main port (when no separate metrics port is configured). It asks for no
 * token: the operator's scraper calls it, so it belongs behind a firewall or on `--metrics-port`
 * (docs/metrics.md). Hidden from the business OpenAPI document.
 */
import type { FastifyInstance } from 'fastify';
import type { Metrics } from './registry.js';

export const metricsPath = '/metrics';

export async function metricsRoute(app: FastifyInstance, options: { metrics: Metrics }): Promise<void> {
  const { metrics } = options;
  app.get(metricsPath, { schema: { hide: true } }, async (_request, reply) => {
    const text = await metrics.render();
    return reply.header('Content-Type', metrics.contentType).header('Cache-Control', 'no-store').send(text);
  });
}
