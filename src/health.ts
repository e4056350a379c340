/** Liveness and readiness probes for orchestrators and load balancers. */
import type { FastifyInstance } from 'fastify';

export interface Readiness {
  /** Throws when the service should not receive traffic (shutting down; a NotReady names the store or core probe that failed). */
  check(): Promise<void>;
}

/** A named readiness probe failed (store, core): the 503 says which. */
export class NotReady extends Error {
  constructor(
    readonly check: string,
    cause: unknown,
  ) {
    super(`${check} is not ready`, { cause });
    this.name = 'NotReady';
  }
}

/** Runs one named probe of a readiness check. */
export async function probe(check: string, work: () => Promise<void>): Promise<void> {
  try {
    await work();
  } catch (error) {
    throw new NotReady(check, error);
  }
}

export async function healthRoutes(app: FastifyInstance, options: { readiness: Readiness }): Promise<void> {
  app.get('/health/live', async () => ({ status: 'ok' }));
  app.get('/health/ready', async (request, reply) => {
    try {
      await options.readiness.check();
      return { status: 'ready' };
    } catch (error) {
      request.log.warn({ err: error }, 'not ready');
      return reply.code(503).send(error instanceof NotReady ? { status: 'unavailable', check: error.check } : { status: 'unavailable' });
    }
  });
}
