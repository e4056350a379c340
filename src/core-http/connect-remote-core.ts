/**
 * The HTTP adapter of a remote core for an operator command (`coregate core advance --core-url`):
 * no metrics, the default breaker. Its own module, imported only when a command names a core URL,
 * so that commands on the embedded core never load the HTTP client.
 */
import { HttpCore, type HttpCoreOptions } from './http-core-adapter.js';

/** `options`: the conformance kit's breaker that never opens (src/cli/core-conformance.ts), and the like. */
export function connectRemoteCore(url: string, timeoutMs: number, options: Omit<HttpCoreOptions, 'url' | 'timeoutMs'> = {}): HttpCore {
  return new HttpCore({ ...options, url, timeoutMs });
}
