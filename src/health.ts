/** Liveness and readiness probes for orchestrators and load balancers. */
import type { FastifyInstance } from 'fastify';
import type { Clock, Timer } from './core/clock.js';
import { systemClock } from './clock/system-clock.js';

/** One probe that answered: what it checked and how long it took. */
export interface ProbeReport {
  status: 'ok';
  latencyMs: number;
  [detail: string]: string | number;
}

export interface Readiness {
  /**
   * The probes' reports by name (store, core), or a throw when the service should not receive
   * traffic (shutting down; a NotReady names the probe that failed).
   */
  check(): Promise<Record<string, ProbeReport>>;
}

/** A named readiness probe failed (store, core, audit_spool): the 503 says which. */
export class NotReady extends Error {
  constructor(
    readonly check: string,
    cause: unknown,
    /** What is wrong, for the 503's reason, when not that the probe did not answer ("is full"). */
    readonly problem = 'did not answer',
  ) {
    super(`${check} is not ready`, { cause });
    this.name = 'NotReady';
  }
}

/**
 * The audit spool (src/audit/audit-spool.ts) is full: a refused request answered now would leave
 * no audit record (docs/api.md, Audit), so the instance asks to receive no traffic until the spool drains.
 */
export function auditSpoolReadiness(spool: { full: boolean; directory: string } | undefined): void {
  if (spool?.full) {
    throw new NotReady('audit_spool', new Error(`the audit spool ${spool.directory} is full: refused requests' audit records cannot be kept until it drains`), 'is full: refused requests cannot be audited until the database is back and the spool drains');
  }
}

/**
 * How long one probe may take before the service says it is not ready: a database or core whose
 * connection hangs (a peer gone without closing, an address that swallows packets) must not hold
 * the load balancer's health check until its own time-out, with no answer saying which part failed.
 */
export const probeTimeoutMs = 5_000;

/**
 * Runs one named probe of a readiness check; `details` say what was probed (never a URL or a
 * secret). `clock` times the probe out (src/core/clock.ts; the system's unless the wiring hands one
 * in); its latency is measured on the monotonic stopwatch (performance.now), as a duration is.
 */
export async function probe(check: string, work: () => Promise<void>, details: Record<string, string> = {}, timeoutMs = probeTimeoutMs, clock: Clock = systemClock): Promise<ProbeReport> {
  const startedAt = performance.now();
  let timer: Timer | undefined;
  try {
    await Promise.race([
      work(),
      new Promise<never>((_, reject) => {
        timer = clock.setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
  } catch (error) {
    throw new NotReady(check, error);
  } finally {
    timer?.clear();
  }
  return { status: 'ok', ...details, latencyMs: Math.round((performance.now() - startedAt) * 10) / 10 };
}

export async function healthRoutes(app: FastifyInstance, options: { readiness: Readiness }): Promise<void> {
  app.get('/health/live', async () => ({ status: 'ok' }));
  app.get('/health/ready', async (request, reply) => {
    try {
      return { status: 'ready', checks: await options.readiness.check() };
    } catch (error) {
      request.log.warn({ err: error }, 'not ready');
      // The reason is named, its details stay in the log: this answer is public.
      const reason = error instanceof NotReady ? `${error.check} ${error.problem}` : error instanceof Error ? error.message : 'not ready';
      return reply.code(503).send(error instanceof NotReady ? { status: 'unavailable', check: error.check, reason } : { status: 'unavailable', reason });
    }
  });
}
