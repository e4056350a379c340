/**
 * Sender-constrained tokens at the business API (CONTRACT §13): a token bound to a DPoP key
 * (`cnf.jkt`, RFC 9449 §7) comes as `Authorization: DPoP <token>` with a proof of that key for
 * this request, used once on any instance; a token bound to a TLS client certificate
 * (`cnf["x5t#S256"]`, RFC 8705 §3) comes over a connection with that certificate. Bearer tokens
 * without `cnf` are untouched (CONTRACT §3).
 */
import type { FastifyRequest } from 'fastify';
import type { Clock } from '../core/clock.js';
import { errorCatalogue as E } from '../core/error-catalogue.js';
import type { ClientCertificates } from '../auth/client-certificates.js';
import { dpopAlgorithms, DpopProofRejected, singleProof, verifyDpopProof } from '../auth/dpop-proof.js';
import type { ReplayRecord } from '../auth/replay-record.js';
import type { Principal } from './bearer-auth.js';
import { ApiError } from './error-record.js';

export type TokenScheme = 'Bearer' | 'DPoP';

export interface SenderConstraintOptions {
  /** The service's public base URL: a proof's `htu` is it and the request's path. */
  publicUrl: () => string;
  clock: Clock;
  /** DPoP proofs' uses, shared by every instance. */
  replay: ReplayRecord;
  /** Requests' TLS client certificates; absent: the service takes none. */
  clientCertificates?: ClientCertificates | undefined;
}

const algs = `algs="${dpopAlgorithms.join(' ')}"`;

export class SenderConstraint {
  readonly #options: SenderConstraintOptions;

  constructor(options: SenderConstraintOptions) {
    this.#options = options;
  }

  /** Whether the request needs `check` (it is asynchronous only for what it must check). */
  needed(principal: Principal, scheme: TokenScheme): boolean {
    return scheme === 'DPoP' || principal.confirmation !== undefined;
  }

  /** The request proves it holds the key its token is bound to; throws the 401 that says what is wrong. */
  async check(request: FastifyRequest, principal: Principal, scheme: TokenScheme, token: string): Promise<void> {
    const confirmation = principal.confirmation;
    if (confirmation?.x5tS256 !== undefined) {
      const certificate = this.#options.clientCertificates?.of(request.raw);
      if (certificate?.thumbprint !== confirmation.x5tS256) {
        throw invalidToken('The token is bound to a TLS client certificate that this connection does not present', 'Bearer');
      }
    }
    if (confirmation?.jkt === undefined) {
      if (scheme === 'DPoP') throw invalidToken('The token is not DPoP-bound: send it as "Authorization: Bearer <token>"', 'DPoP');
      return;
    }
    if (scheme === 'Bearer') throw invalidToken('The token is DPoP-bound: send it as "Authorization: DPoP <token>" with a DPoP proof', 'DPoP');
    try {
      const proof = singleProof(request.raw.rawHeaders);
      if (proof === undefined) throw new DpopProofRejected('A DPoP-bound token needs a DPoP proof in the DPoP header');
      const url = `${this.#options.publicUrl()}${request.url.split('?')[0] ?? ''}`;
      const verified = await verifyDpopProof(proof, { method: request.method, url, accessToken: token }, this.#options.clock);
      if (verified.jkt !== confirmation.jkt) throw new DpopProofRejected('The DPoP proof is signed by another key than the one the token is bound to');
      if (!(await this.#options.replay.firstUse(verified.replay))) throw new DpopProofRejected('The DPoP proof was used before (its jti)');
    } catch (error) {
      if (error instanceof DpopProofRejected) throw invalidProof(error.message);
      throw error;
    }
  }
}

function invalidProof(message: string): ApiError {
  return new ApiError(E.invalidDpopProof, message, { 'WWW-Authenticate': `DPoP error="invalid_dpop_proof", error_description="${quoted(message)}", ${algs}` });
}

function invalidToken(message: string, scheme: TokenScheme): ApiError {
  const challenge = scheme === 'DPoP' ? `DPoP error="invalid_token", error_description="${quoted(message)}", ${algs}` : `Bearer realm="coregate", error="invalid_token", error_description="${quoted(message)}"`;
  return new ApiError(E.invalidToken, message, { 'WWW-Authenticate': challenge });
}

function quoted(text: string): string {
  return text.replace(/"/g, "'");
}
