/** `coregate core serve`: runs the reference core's HTTP service until SIGTERM/SIGINT, then drains. */
import { resolveCoreServiceConfig, type CoreServiceFlags } from '../core-http/core-config.js';
import { startCoreService } from '../core-http/core-service.js';
import type { Clock } from '../core/clock.js';
import { startTracing } from '../tracing/start-tracing.js';
import { guardAgainstOutageExits } from './outage-guard.js';
import { version } from '../version.js';

/** `clock`: the core's time and the stop's grace period (command-io.ts's CommandContext). */
export interface CoreServeFlags extends CoreServiceFlags {
  clock: Clock;
}

export async function serveCore(flags: CoreServeFlags): Promise<void> {
  const { clock } = flags;
  const config = resolveCoreServiceConfig(flags);
  const service = await startCoreService(config, { tracing: await startTracing({ name: 'coregate-core', version }), clock });
  guardAgainstOutageExits(service.logger);
  process.stdout.write(`\ncoregate core is ready on ${service.url}\n  protocol: ${service.url}/openapi.json\n  API flag: --core-url ${service.url}\n\n`);

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    service.logger.info({ signal }, 'shutting down: finishing in-flight requests');
    clock.setTimeout(
      () => {
        service.logger.error({ graceMs: config.shutdownGraceMs }, 'shutdown grace period over: exiting');
        process.exit(1);
      },
      config.shutdownGraceMs,
      { background: true },
    );
    service.close().then(
      () => process.exit(0),
      (error: unknown) => {
        service.logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}
