/**
 * OAuth 2.0 error responses (RFC 6749 §5.2): `error` and `error_description`. The description
 * the caller sees is fixed per cause; the real reason of a client authentication failure goes
 * to the log only, so that nobody can enumerate clients.
 */
import { ExpectedError } from '../core/expected-error.js';

export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'invalid_scope'
  | 'temporarily_unavailable'
  | 'not_found'
  /** RFC 9449 §5, §8: a DPoP proof refused, or one without the server's current nonce. */
  | 'invalid_dpop_proof'
  | 'use_dpop_nonce';

export class OAuthError extends ExpectedError {
  constructor(
    readonly status: number,
    readonly error: OAuthErrorCode,
    readonly description: string,
    readonly headers: Record<string, string> = {},
    /** Logged, never sent. */
    readonly logDetail?: string,
  ) {
    super(description);
    this.name = 'OAuthError';
  }

  toBody(): { error: string; error_description: string } {
    return { error: this.error, error_description: this.description };
  }
}

export const invalidRequest = (description: string) => new OAuthError(400, 'invalid_request', description);
