/**
 * What the auth endpoints share: the store, the key cache, the secret hash key, the failed
 * authentication limit and the public URL.
 */
import type { Clock } from '../core/clock.js';
import type { Store } from '../store/connect.js';
import type { AuthSnapshot } from './auth-snapshot.js';
import type { AuthFailureLimiter } from './failure-limit.js';
import type { Keyring } from './keyring.js';

export interface AuthContext {
  readonly store: Store;
  /** Whose time issues and checks tokens (src/core/clock.ts). */
  readonly clock: Clock;
  readonly keyring: Keyring;
  /** Clients for the token endpoint and realms for Bearer validation, at most a second old. */
  readonly snapshot: AuthSnapshot;
  readonly secretHashKey: Buffer;
  readonly authFailures: AuthFailureLimiter;
  /** `{public auth_url}/realms/{realm}`: the tokens' `iss` and the discovery document's issuer. */
  issuer(realm: string): string;
}
