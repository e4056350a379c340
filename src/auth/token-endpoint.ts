/**
 * The token endpoint as a pipeline of named steps, in Keycloak's order (CONTRACT §2): form body,
 * grant_type present, grant_type known, client authentication, grant allowed for the client,
 * scope, user and workstation. Each step either passes or throws an OAuthError. Client
 * authentication runs under the failed-authentication limit (failure-limit.ts): 429 past it.
 */
import { epochSecondsOf } from '../core/clock.js';
import type { Client } from '../store/clients.js';
import type { Realm } from '../store/realms.js';
import { signAccessToken, type TokenSubject } from './access-token.js';
import type { AuthContext } from './auth-context.js';
import { authenticateRequestClient } from './client-authentication.js';
import { formValue, parseFormBody, type FormParameters } from './form-body.js';
import { knownOAuthGrants, supportedGrants } from './grants.js';
import { OAuthError, invalidRequest } from './oauth-error.js';

/** SPEC fixes no limit; a login or terminal id longer than this is a malformed request. */
export const userParameterCharsMax = 128;

export interface TokenRequest {
  contentType: string | undefined;
  authorization: string | undefined;
  body: unknown;
  /** The connection's peer address: the failed-authentication limit counts per address. */
  sourceAddress: string;
}

export interface TokenResponse {
  access_token: string;
  expires_in: number;
  refresh_expires_in: 0;
  token_type: 'Bearer';
  'not-before-policy': number;
  scope: string;
}

export async function handleTokenRequest(ctx: AuthContext, realm: Realm, request: TokenRequest): Promise<TokenResponse> {
  const form = parseFormBody(request.contentType, request.body);
  const grantType = requireGrantType(form);
  const client = await authenticateRequestClient(ctx, realm.name, request, form);
  checkGrantAllowed(client, grantType);
  const scopes = grantedScopes(client, formValue(form, 'scope'));
  const subject: TokenSubject = { client, scopes };
  const user = associatedUser(client, form);
  if (user) subject.user = user;

  const key = await ctx.keyring.activeKey(realm);
  const nowSeconds = epochSecondsOf(ctx.clock);
  const token = await signAccessToken(realm, ctx.issuer(realm.name), key, subject, nowSeconds);
  return {
    access_token: token.jwt,
    expires_in: token.expiresAt - nowSeconds,
    refresh_expires_in: 0,
    token_type: 'Bearer',
    'not-before-policy': realm.not_before,
    scope: scopes.join(' '),
  };
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

/** SPEC Endpoints §1: the user is `username` or the technical user; a user needs a workstation. */
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
