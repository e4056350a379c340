/**
 * The HTTP adapter of a remote core for an operator command (`coregate core advance --core-url`):
 * no metrics, the default breaker. Its own module, imported only when a command names a core URL,
 * so that commands on the embedded core never load the HTTP client.
 */
import { HttpCore } from './http-core-adapter.js';

export function connectRemoteCore(url: string, timeoutMs: number): HttpCore {
  return new HttpCore({ url, timeoutMs });
}
