/**
 * Sender-constrained tokens at the business API and the operator API (docs/auth.md, "DPoP at the
 * API"): a token bound to a DPoP key (`cnf.jkt`, RFC 9449 §7) comes as `Authorization: DPoP
 * <token>` with a proof of that key for this request, used once on any instance; a token bound to
 * a TLS client certificate (`cnf["x5t#S256"]`, RFC 8705 §3) comes over a connection with that
 * certificate. Bearer tokens without `cnf` are untouched.
 *
 * The constraint is part of authentication: a request is authenticated only once its proof
 * verified, carried the realm's nonce when the realm demands nonces, and was recorded as used for
 * the first time (or its certificate matched). Until then nothing is charged to or recorded for
 * the token's client — its rate limit, the sandbox's request log, the audit trail — so that someone
 * replaying a captured token and proof spends nothing of its victim (docs/security.md).
 */
import type { FastifyRequest } from 'fastify';
import { errorCatalogue as E } from '../core/error-catalogue.js';
import type { AuthSnapshot } from '../auth/auth-snapshot.js';
import type { ClientCertificates } from '../auth/client-certificates.js';
import type { DpopNonces } from '../auth/dpop-nonce.js';
import { dpopAlgorithms, DpopProofRejected, singleProof, type DpopProofVerifier, type ProofExpectation } from '../auth/dpop-proof.js';
import { replayedProofMessage, type ReplayRecord } from '../auth/replay-record.js';
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
  /** Realms, at most a second old: whether a realm demands DPoP nonces (`dpopNonce`). */
  realms: Pick<AuthSnapshot, 'peekRealm' | 'realm'>;
  /** The realms' server nonces, the same on every instance (the token endpoint's). */
  nonces: Pick<DpopNonces, 'accepts' | 'current'>;
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
   * The request proves it holds the key its token is bound to, and its proof's use is recorded:
   * resolves once the constraint holds, throws the 401 that says what is wrong otherwise. A proof
   * refused for any reason is not recorded; one that passed is spent, whatever the request's fate.
   */
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
    const realm = principal.realm;
    let replay;
    try {
      const proof = singleProof(request.raw.rawHeaders);
      if (proof === undefined) throw new DpopProofRejected('A DPoP-bound token needs a DPoP proof in the DPoP header');
      const expected: ProofExpectation = { method: request.method, url: this.#expectedUrl(request), accessToken: token };
      // RFC 9449 §9: a realm that demands nonces at its token endpoint demands them here too.
      if (realm !== undefined && (await this.#demandsNonce(realm))) expected.acceptsNonce = (nonce) => this.#options.nonces.accepts(realm, nonce);
      const verified = await this.#options.proofs.verify(proof, expected);
      if (verified.jkt !== confirmation.jkt) throw new DpopProofRejected('The DPoP proof is signed by another key than the one the token is bound to');
      replay = verified.replay;
    } catch (error) {
      if (!(error instanceof DpopProofRejected)) throw error;
      if (error.useNonce && realm !== undefined) throw useNonce(error.message, this.#options.nonces.current(realm));
      throw invalidProof(error.message);
    }
    const verdict = await this.#options.replay.record([replay]);
    if (!verdict.recorded) throw invalidProof(replayedProofMessage(verdict.reason));
  }

  /**
   * The `htu` a proof of this request must name: the public URL and the request's path, without
   * its query (RFC 9449 §4.3). The target is in origin form here (src/request-target.ts): an
   * absolute target's own scheme and host are never what the proof is compared with.
   */
  #expectedUrl(request: FastifyRequest): string {
    const target = request.url;
    const queryAt = target.indexOf('?');
    return `${this.#options.publicUrl()}${queryAt < 0 ? target : target.slice(0, queryAt)}`;
  }

  /** Whether the realm demands DPoP nonces: from the snapshot without a promise when it is fresh. */
  async #demandsNonce(realm: string): Promise<boolean> {
    const peeked = this.#options.realms.peekRealm(realm);
    const value = peeked === undefined ? await this.#options.realms.realm(realm) : peeked.value;
    return value?.dpop_nonce === 1;
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

/** RFC 9449 §9: the proof lacks the realm's current nonce; the client repeats with the one of `DPoP-Nonce`. */
function useNonce(message: string, nonce: string): ApiError {
  const described = `${message}: repeat the request with a new proof carrying the nonce of the DPoP-Nonce header`;
  return new ApiError(E.useDpopNonce, described, { 'WWW-Authenticate': challenge('DPoP', 'use_dpop_nonce', described), 'DPoP-Nonce': nonce });
}

function invalidToken(message: string, scheme: TokenScheme): ApiError {
  return new ApiError(E.invalidToken, message, { 'WWW-Authenticate': challenge(scheme, 'invalid_token', message) });
}

function quoted(text: string): string {
  return text.replace(/"/g, "'");
}
