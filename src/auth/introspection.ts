/**
 * Token introspection (RFC 7662), client-authenticated. A token is active when a published key
 * of the realm verifies it, it has not expired, it was issued at or after the realm's not-before,
 * and its client still exists, is enabled and had not had its tokens revoked when it was issued
 * (`iat` at or after the client's not-before: docs/auth.md, "Client revocation"). Anything else
 * answers `{ active: false }` and nothing more.
 */
import { dateOf } from '../core/clock.js';
import { decodeProtectedHeader, jwtVerify, type JWTPayload } from 'jose';
import { findClient } from '../store/clients.js';
import type { Realm } from '../store/realms.js';
import type { AuthContext } from './auth-context.js';
import { authenticateRequestClient } from './client-authentication.js';
import { formValue, parseFormBody } from './form-body.js';
import { invalidRequest } from './oauth-error.js';
import { tokenEndpointUrl, type TokenRequest } from './token-endpoint.js';

export type IntrospectionResponse = { active: false } | ({ active: true; token_type: 'Bearer' | 'DPoP' } & JWTPayload);

export async function handleIntrospection(ctx: AuthContext, realm: Realm, request: TokenRequest): Promise<IntrospectionResponse> {
  const form = parseFormBody(request.contentType, request.body);
  await authenticateRequestClient(ctx, realm, `${tokenEndpointUrl(ctx, realm)}/introspect`, request, form);
  const token = formValue(form, 'token');
  if (token === undefined) throw invalidRequest('Missing form parameter: token');
  const payload = await verifyRealmToken(ctx, realm, token);
  if (!payload) return { active: false };
  // docs/auth.md, "Discovery and introspection": a DPoP-bound token (`cnf.jkt`) is of type DPoP;
  // `cnf` is the token's own claim.
  const cnf = payload.cnf as { jkt?: unknown } | undefined;
  return { ...payload, active: true, token_type: typeof cnf?.jkt === 'string' ? 'DPoP' : 'Bearer' };
}

/** The payload of a token this realm issued and still honours, or undefined. */
export async function verifyRealmToken(ctx: AuthContext, realm: Realm, token: string): Promise<JWTPayload | undefined> {
  let kid: string | undefined;
  try {
    kid = decodeProtectedHeader(token).kid;
  } catch {
    return undefined;
  }
  const keys = await ctx.keyring.publishedKeys(realm);
  const key = keys.find((entry) => entry.kid === kid);
  if (!key) return undefined;
  try {
    const { payload } = await jwtVerify(token, key.publicKey, {
      algorithms: [key.alg],
      issuer: ctx.issuer(realm.name),
      audience: realm.audience,
      clockTolerance: 0,
      currentDate: dateOf(ctx.clock),
      requiredClaims: ['exp', 'iat'],
    });
    if ((payload.iat ?? 0) < realm.not_before) return undefined;
    const clientId = typeof payload.azp === 'string' ? payload.azp : undefined;
    // Read afresh, as the realm is: "active" is the client as stored now.
    const client = clientId === undefined ? undefined : await findClient(ctx.store.db, realm.name, clientId);
    if (!client?.enabled) return undefined;
    if ((payload.iat ?? 0) < client.tokensNotBefore) return undefined;
    return payload;
  } catch {
    return undefined;
  }
}
