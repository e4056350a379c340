/**
 * What the auth endpoints share: the store, the key cache, the secret hash key, the failed
 * authentication limit and the public URL.
 */
import type { Clock } from '../core/clock.js';
import type { Store } from '../store/connect.js';
import type { AuthSnapshot } from './auth-snapshot.js';
import type { AuthFailureLimiter } from './failure-limit.js';
import type { Keyring } from './keyring.js';
import type { ReplayRecord } from './replay-record.js';
import type { DpopNonces } from './dpop-nonce.js';
import type { DpopProofVerifier } from './dpop-proof.js';
import type { ClientAssertionVerifier } from './client-assertion.js';
import type { ClientCertificates } from './client-certificates.js';

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
  /** Client assertions' and DPoP proofs' uses, shared by every instance (docs/auth.md, "The replay record"). */
  readonly replay: ReplayRecord;
  /** DPoP server nonces, the same on every instance. */
  readonly dpopNonces: DpopNonces;
  /** Client assertions (private_key_jwt), verified with each client's keys imported once. */
  readonly clientAssertions: ClientAssertionVerifier;
  /** DPoP proofs, verified with their keys imported once per session. */
  readonly dpopProofs: DpopProofVerifier;
  /** Requests' TLS client certificates (RFC 8705); absent: the service takes none. */
  readonly clientCertificates?: ClientCertificates | undefined;
}
