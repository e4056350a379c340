/**
 * `coregate console`: prints a one-time URL that opens a console session (issue 11). The token
 * is created in the store, where every instance finds it; it is printed once and never logged.
 */
import type { Clock } from '../core/clock.js';
import type { Store } from '../store/connect.js';
import { createLoginToken, type IssuedBy } from '../store/operator-sessions.js';
import { CommandError } from './command-error.js';
import { withStoreReadOnly, type StoreFlags } from './store-session.js';

export interface ConsoleFlags extends StoreFlags {
  url?: string;
  json?: boolean;
}

/** The default base URL: the public URL, else what `npm start` serves. */
const defaultBaseUrl = 'http://localhost:8080';

/** `clock`: the time the token's ten minutes count from (the command's, or a running server's). */
export async function consoleLoginUrl(store: Store, baseUrl: string, issuedBy: IssuedBy, clock: Clock): Promise<{ url: string; expiresAt: string }> {
  const { token, expiresEpochMs } = await createLoginToken(store.db, issuedBy, clock.now());
  return { url: `${baseUrl.replace(/\/+$/, '')}/console/login?token=${encodeURIComponent(token)}`, expiresAt: new Date(expiresEpochMs).toISOString() };
}

export async function consoleCommand(flags: ConsoleFlags): Promise<{ url: string; expiresAt: string }> {
  const baseUrl = flags.url ?? flags.env.COREGATE_PUBLIC_URL ?? defaultBaseUrl;
  if (!isHttpBaseUrl(baseUrl)) throw new CommandError(`--url must be the service's http(s) base URL, got "${baseUrl}"`);
  return withStoreReadOnly(flags, (store) => consoleLoginUrl(store, baseUrl, 'cli', flags.clock));
}

function isHttpBaseUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.search === '' && url.hash === '';
  } catch {
    return false;
  }
}
