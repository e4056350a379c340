/** `coregate core serve`: runs the reference core's HTTP service until SIGTERM/SIGINT, then drains. */
import { resolveCoreServiceConfig, type CoreServiceFlags } from '../core-http/core-config.js';
import { startCoreService } from '../core-http/core-service.js';
import { startTracing } from '../tracing/start-tracing.js';
import { guardAgainstOutageExits } from './outage-guard.js';
import { version } from '../version.js';

export async function serveCore(flags: CoreServiceFlags): Promise<void> {
  const config = resolveCoreServiceConfig(flags);
  const service = await startCoreService(config, { tracing: await startTracing({ name: 'coregate-core', version }) });
  guardAgainstOutageExits(service.logger);
  process.stdout.write(`\ncoregate core is ready on ${service.url}\n  protocol: ${service.url}/openapi.json\n  API flag: --core-url ${service.url}\n\n`);

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    service.logger.info({ signal }, 'shutting down: finishing in-flight requests');
    const force = setTimeout(() => {
      service.logger.error({ graceMs: config.shutdownGraceMs }, 'shutdown grace period over: exiting');
      process.exit(1);
    }, config.shutdownGraceMs);
    force.unref();
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
