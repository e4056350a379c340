/**
 * A start that could not listen, in words: the port, who may hold it and the flag that moves it.
 * Node's own words ("listen EADDRINUSE: address already in use 127.0.0.1:8080") named no way out,
 * and the usual cause is a coregate (or `npm start`) started earlier and still running.
 */
import type { Config } from '../config.js';

/** The error to report for a start that failed: an address in use explained, any other as it is. */
export function explainListenFailure(error: unknown, config: Pick<Config, 'host' | 'port' | 'metricsPort'>): unknown {
  const failure = error as NodeJS.ErrnoException & { port?: number; address?: string };
  if (failure?.code !== 'EADDRINUSE') return error;
  const port = failure.port ?? config.port;
  // The metrics port is the one in use only when it is not also the main port.
  const metrics = config.metricsPort !== undefined && port === config.metricsPort && port !== config.port;
  const flag = metrics ? '--metrics-port / COREGATE_METRICS_PORT' : '--port / COREGATE_PORT';
  return new Error(
    `port ${port} on ${failure.address ?? config.host} is already in use (EADDRINUSE)${metrics ? ', asked for the metrics by --metrics-port' : ''}: ` +
      `another process listens on it, often a coregate serve or \`npm start\` started earlier and still running. ` +
      `Stop that process (e.g. find it with \`lsof -i :${port}\` or \`ss -ltnp 'sport = :${port}'\`), or choose another port with ${flag} (0 takes any free port)`,
    { cause: error },
  );
}
