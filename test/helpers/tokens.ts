/** Named demo tokens for a suite: fetched from the token endpoint once and reused while fresh. */
import { demoToken, type TestServer } from './server.js';

export interface TokenRequest {
  client: { clientId: string; secret: string };
  /** Extra form fields: scope, username, workstation. */
  extra: Record<string, string>;
}

/** Tokens are cached per suite and renewed well before their 300 s expire (docs/auth.md, "A client's secret and tokens"). */
export function cachedTokens<Name extends string>(server: () => TestServer, requests: Record<Name, TokenRequest>): (name: Name) => Promise<string> {
  const cache = new Map<Name, { token: string; fetchedAtMs: number }>();
  return async function token(name: Name): Promise<string> {
    const cached = cache.get(name);
    if (cached && Date.now() - cached.fetchedAtMs < 200_000) return cached.token;
    const { client, extra } = requests[name];
    const fresh = await demoToken(server(), client, extra);
    cache.set(name, { token: fresh, fetchedAtMs: Date.now() });
    return fresh;
  };
}
