/**
 * The token endpoint as a pipeline of named steps, in Keycloak's order (docs/auth.md, "Token
 * request pipeline"): form body, grant_type present, grant_type known, client authentication, grant
 * allowed for the client, scope, user and workstation. Each step either passes or throws an
 * OAuthError. Client authentication runs under the failed-authentication limit (failure-limit.ts):
 * 429 past it.
 */
import { epochSecondsOf } from '../core/clock.js';
import type { Client } from '../store/clients.js';
import type { Realm } from '../store/realms.js';
import { signAccessToken, type TokenSubject } from './access-token.js';
import type { AuthContext } from './auth-context.js';
import { authenticateRequestClient, type ClientRequest } from './client-authentication.js';
import { requiresDpop, type RealmProfile } from './client-metadata.js';
import { DpopProofRejected, singleProof, type VerifiedProof } from './dpop-proof.js';
import { formValue, parseFormBody, type FormParameters } from './form-body.js';
import { replayedProofMessage } from './replay-record.js';
import { knownOAuthGrants, supportedGrants } from './grants.js';
import { OAuthError, invalidRequest } from './oauth-error.js';

/** A login or terminal id longer than this is a malformed request (docs/auth.md, "Token request pipeline", step 7). */
export const userParameterCharsMax = 128;

export interface TokenRequest extends ClientRequest {
  contentType: string | undefined;
  body: unknown;
  /** The request's raw headers, name and value in turn: its DPoP proof (one header at most). */
  rawHeaders: readonly string[];
}

export interface TokenResponse {
  access_token: string;
  expires_in: number;
  refresh_expires_in: 0;
  /** `DPoP` when the token is bound to the proof's key (RFC 9449 §5). */
  token_type: 'Bearer' | 'DPoP';
  'not-before-policy': number;
  scope: string;
}

/** The token endpoint's public URL: the `htu` of its DPoP proofs, an audience of client assertions. */
export function tokenEndpointUrl(ctx: AuthContext, realm: Realm): string {
  return `${ctx.issuer(realm.name)}/protocol/openid-connect/token`;
}

export async function handleTokenRequest(ctx: AuthContext, realm: Realm, request: TokenRequest): Promise<TokenResponse> {
  const form = parseFormBody(request.contentType, request.body);
  const grantType = requireGrantType(form);
  const endpointUrl = tokenEndpointUrl(ctx, realm);
  // The proof first (its checks need no client): a bad one is refused before the client's
  // assertion is used, and its use is recorded only once the request is granted.
  const proof = await tokenProof(ctx, realm, endpointUrl, request.rawHeaders);
  let subject: TokenSubject | undefined;
  // The proof's use is recorded with the assertion's (one write), once every check passed.
  const client = await authenticateRequestClient(ctx, realm, endpointUrl, request, form, (authenticated) => {
    checkGrantAllowed(authenticated, grantType);
    subject = { client: authenticated, scopes: grantedScopes(authenticated, formValue(form, 'scope')) };
    const user = associatedUser(authenticated, form);
    if (user) subject.user = user;
    checkBinding(realm, authenticated, proof, request);
    return proof === undefined ? [] : [{ mark: proof.replay, refusal: (reason) => invalidProof(replayedProofMessage(reason)) }];
  });
  if (subject === undefined) throw new Error('the client was authenticated without its checks');
  // Bound to the proof's key, to the client's certificate, or to both (a certificate-bound client sending a proof).
  const confirmation: NonNullable<TokenSubject['confirmation']> = {};
  if (proof !== undefined) confirmation.jkt = proof.jkt;
  if (client.authentication.certificateBound && request.clientCertificate !== undefined) confirmation.x5tS256 = request.clientCertificate.thumbprint;
  if (confirmation.jkt !== undefined || confirmation.x5tS256 !== undefined) subject.confirmation = confirmation;

  const key = await ctx.keyring.activeKey(realm);
  const nowSeconds = epochSecondsOf(ctx.clock);
  // Issued at max(now, the realm's not-before, the client's) (access-token.ts): the client as its
  // authentication read it, from the store whenever the snapshot's would have refused it (a client
  // just enabled, or given a new secret or keys), so that its new token is not born revoked.
  const token = await signAccessToken(realm, ctx.issuer(realm.name), key, subject, nowSeconds);
  return {
    access_token: token.jwt,
    expires_in: token.expiresAt - nowSeconds,
    refresh_expires_in: 0,
    token_type: proof === undefined ? 'Bearer' : 'DPoP',
    'not-before-policy': realm.not_before,
    scope: subject.scopes.join(' '),
  };
}

/** The request's DPoP proof, verified (not yet recorded); a realm that asks for nonces gets `use_dpop_nonce` without its current one. */
async function tokenProof(ctx: AuthContext, realm: Realm, endpointUrl: string, rawHeaders: readonly string[]): Promise<VerifiedProof | undefined> {
  try {
    const proof = singleProof(rawHeaders);
    if (proof === undefined) return undefined;
    const nonces = realm.dpop_nonce === 1 ? { acceptsNonce: (nonce: string | undefined) => ctx.dpopNonces.accepts(realm.name, nonce) } : {};
    return await ctx.dpopProofs.verify(proof, { method: 'POST', url: endpointUrl, ...nonces });
  } catch (error) {
    if (!(error instanceof DpopProofRejected)) throw error;
    if (error.useNonce) {
      throw new OAuthError(400, 'use_dpop_nonce', `${error.message}: send the nonce of the DPoP-Nonce header`, { 'DPoP-Nonce': ctx.dpopNonces.current(realm.name) });
    }
    throw invalidProof(error.message);
  }
}

/** A client whose tokens must be DPoP-bound sends a proof (docs/auth.md, "DPoP at the token endpoint"); a certificate-bound one its certificate. */
function checkBinding(realm: Realm, client: Client, proof: VerifiedProof | undefined, request: TokenRequest): void {
  const profile = realm.profile as RealmProfile | null;
  if (proof === undefined && requiresDpop(profile, client.authentication)) {
    throw invalidProof(`Client ${client.clientId} receives DPoP-bound tokens only: send a DPoP proof (RFC 9449) in the DPoP header`);
  }
  if (client.authentication.certificateBound && request.clientCertificate === undefined) {
    throw invalidRequest(`Client ${client.clientId} receives certificate-bound tokens only: connect with its TLS client certificate`);
  }
}

function invalidProof(description: string): OAuthError {
  return new OAuthError(400, 'invalid_dpop_proof', description);
}

function requireGrantType(form: FormParameters): string {
  const grantType = formValue(form, 'grant_type');
  if (grantType === undefined) throw invalidRequest('Missing form parameter: grant_type');
  if (!knownOAuthGrants.has(grantType)) {
    throw new OAuthError(400, 'unsupported_grant_type', 'Unsupported grant_type: only client_credentials is supported');
  }
  return grantType;
}

function checkGrantAllowed(client: Client, grantType: string): void {
  if (!supportedGrants.has(grantType) || !client.grants.includes(grantType)) {
    throw new OAuthError(400, 'unauthorized_client', `Client is not allowed to use grant_type ${grantType}`);
  }
}

/** A `scope` field narrows the token to a subset of the client's scopes (RFC 6749 §3.3). */
function grantedScopes(client: Client, requested: string | undefined): string[] {
  if (requested === undefined) return [...client.scopes];
  const asked = new Set(requested.split(' ').filter((scope) => scope !== ''));
  const unknown = [...asked].filter((scope) => !client.scopes.includes(scope));
  if (unknown.length > 0) {
    throw new OAuthError(400, 'invalid_scope', 'Invalid scopes: the client is not granted ' + unknown.map(printable).join(' '));
  }
  return client.scopes.filter((scope) => asked.has(scope));
}

/** The user is `username` or the technical user; a user needs a workstation (docs/auth.md, "Endpoints"). */
function associatedUser(client: Client, form: FormParameters): TokenSubject['user'] {
  const username = checkedUserParameter(form, 'username');
  const workstation = checkedUserParameter(form, 'workstation');
  const backboneUser = username ?? client.technicalUser ?? undefined;
  if (backboneUser === undefined) return undefined;
  const chosenWorkstation = workstation ?? client.defaultWorkstation ?? undefined;
  if (chosenWorkstation === undefined) {
    throw invalidRequest('A workstation is required: send the workstation parameter (the client has no default workstation)');
  }
  return { backboneUser, workstation: chosenWorkstation };
}

function checkedUserParameter(form: FormParameters, name: 'username' | 'workstation'): string | undefined {
  const value = formValue(form, name);
  if (value === undefined) return undefined;
  if (value.length > userParameterCharsMax) {
    throw invalidRequest(`Parameter ${name} is longer than ${userParameterCharsMax} characters`);
  }
  if (/\p{Cc}/u.test(value)) throw invalidRequest(`Parameter ${name} contains control characters`);
  return value;
}

function printable(value: string): string {
  const safe = value.replace(/[^\x21-\x7e]/g, '?');
  return safe.length > 64 ? `${safe.slice(0, 64)}...` : safe;
}
