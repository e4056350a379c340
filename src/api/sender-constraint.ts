/**
 * Sender-constrained tokens at the business API (CONTRACT §13): a token bound to a DPoP key
 * (`cnf.jkt`, RFC 9449 §7) comes as `Authorization: DPoP <token>` with a proof of that key for
 * this request, used once on any instance; a token bound to a TLS client certificate
 * (`cnf["x5t#S256"]`, RFC 8705 §3) comes over a connection with that certificate. Bearer tokens
 * without `cnf` are untouched (CONTRACT §3).
 */
import type { FastifyRequest } from 'fastify';
import { errorCatalogue as E } from '../core/error-catalogue.js';
import type { ClientCertificates } from '../auth/client-certificates.js';
import { dpopAlgorithms, DpopProofRejected, singleProof, type DpopProofVerifier } from '../auth/dpop-proof.js';
import type { ReplayMark, ReplayRecord } from '../auth/replay-record.js';
import type { Principal } from './bearer-auth.js';
import { ApiError } from './error-record.js';

export type TokenScheme = 'Bearer' | 'DPoP';

export interface SenderConstraintOptions {
  /** The service's public base URL: a proof's `htu` is it and the request's path. */
  publicUrl: () => string;
  /** DPoP proofs' uses, shared by every instance. */
  replay: ReplayRecord;
  /** The instance's proof verifier (its keys imported once per session). */
  proofs: DpopProofVerifier;
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

  /**
   * The request proves it holds the key its token is bound to; throws the 401 that says what is
   * wrong. Answers the DPoP proof's use, to `record` once the request passed its other checks (so
   * that a request refused for its scope or its rate leaves the proof's `jti` unused).
   */
  async check(request: FastifyRequest, principal: Principal, scheme: TokenScheme, token: string): Promise<ReplayMark | undefined> {
    const confirmation = principal.confirmation;
    if (confirmation?.x5tS256 !== undefined) {
      const certificate = this.#options.clientCertificates?.of(request.raw);
      if (certificate?.thumbprint !== confirmation.x5tS256) {
        throw invalidToken('The token is bound to a TLS client certificate that this connection does not present', 'Bearer');
      }
    }
    if (confirmation?.jkt === undefined) {
      if (scheme === 'DPoP') throw invalidToken('The token is not DPoP-bound: send it as "Authorization: Bearer <token>"', 'DPoP');
      return undefined;
    }
    if (scheme === 'Bearer') throw invalidToken('The token is DPoP-bound: send it as "Authorization: DPoP <token>" with a DPoP proof', 'DPoP');
    try {
      const proof = singleProof(request.raw.rawHeaders);
      if (proof === undefined) throw new DpopProofRejected('A DPoP-bound token needs a DPoP proof in the DPoP header');
      const url = `${this.#options.publicUrl()}${request.url.split('?')[0] ?? ''}`;
      const verified = await this.#options.proofs.verify(proof, { method: request.method, url, accessToken: token });
      if (verified.jkt !== confirmation.jkt) throw new DpopProofRejected('The DPoP proof is signed by another key than the one the token is bound to');
      return verified.replay;
    } catch (error) {
      if (error instanceof DpopProofRejected) throw invalidProof(error.message);
      throw error;
    }
  }

  /** Records a proof's use (`check`'s answer): a second use, on any instance, is refused. */
  async record(mark: ReplayMark | undefined): Promise<void> {
    if (mark !== undefined && !(await this.#options.replay.firstUse(mark))) throw invalidProof('The DPoP proof was used before (its jti)');
  }
}

/** The challenge of a 401 or 403 of a request sent with `scheme` (RFC 9449 §7.1: a DPoP request is answered with a DPoP challenge). */
export function challenge(scheme: TokenScheme, error: string, description: string, extra = ''): string {
  const quotedDescription = quoted(description);
  return scheme === 'DPoP'
    ? `DPoP error="${error}", error_description="${quotedDescription}"${extra}, ${algs}`
    : `Bearer realm="coregate", error="${error}", error_description="${quotedDescription}"${extra}`;
}

function invalidProof(message: string): ApiError {
  return new ApiError(E.invalidDpopProof, message, { 'WWW-Authenticate': challenge('DPoP', 'invalid_dpop_proof', message) });
}

function invalidToken(message: string, scheme: TokenScheme): ApiError {
  return new ApiError(E.invalidToken, message, { 'WWW-Authenticate': challenge(scheme, 'invalid_token', message) });
}

function quoted(text: string): string {
  return text.replace(/"/g, "'");
}
