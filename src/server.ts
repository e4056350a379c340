/** Builds the HTTP server: fastify with the routes of the roles this instance serves. */
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { randomUUID } from 'node:crypto';
import type { AuthContext } from './auth/auth-context.js';
import { authRoutes } from './auth/routes.js';
import type { Role } from './config.js';
import { healthRoutes, type Readiness } from './health.js';
import type { Logger } from './log.js';

/** Business API bodies are small JSON documents (CONTRACT §5: over 64 KiB → 413). */
export const bodyBytesMax = 64 * 1024;
/** A request that takes longer than this is cut; the core's own time-out is much shorter. */
const requestTimeoutMs = 30_000;

export interface ServerParts {
  logger: Logger;
  role: Role;
  auth: AuthContext;
  readiness: Readiness;
}

export async function buildServer(parts: ServerParts): Promise<FastifyInstance> {
  // pino's Logger is a FastifyBaseLogger; the cast keeps the instance's default generic types.
  const app = Fastify({
    loggerInstance: parts.logger as FastifyBaseLogger,
    bodyLimit: bodyBytesMax,
    requestTimeout: requestTimeoutMs,
    genReqId: () => randomUUID(),
    return503OnClosing: true,
    trustProxy: false,
  });
  await app.register(healthRoutes, { readiness: parts.readiness });
  if (parts.role === 'all' || parts.role === 'auth') await app.register(authRoutes, { ctx: parts.auth });
  return app;
}
