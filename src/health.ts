/** Liveness and readiness probes for orchestrators and load balancers. */
import type { FastifyInstance } from 'fastify';

export interface Readiness {
  /** Throws when the service should not receive traffic (store unreachable, shutting down). */
  check(): Promise<void>;
}

export async function healthRoutes(app: FastifyInstance, options: { readiness: Readiness }): Promise<void> {
  app.get('/health/live', async () => ({ status: 'ok' }));
  app.get('/health/ready', async (request, reply) => {
    try {
      await options.readiness.check();
      return { status: 'ready' };
    } catch (error) {
      request.log.warn({ err: error }, 'not ready');
      return reply.code(503).send({ status: 'unavailable' });
    }
  });
}
