/** Builds and signs an access token with the claims of docs/auth.md, "The token" (Keycloak's shape). */
import { randomUUID } from 'node:crypto';
import type { Client } from '../store/clients.js';
import type { Realm } from '../store/realms.js';
import { signCompactJws } from './jws-sign.js';
import type { KeyEntry } from './keyring.js';

export interface TokenSubject {
  client: Client;
  scopes: string[];
  /** Set only when a user is associated with the request (docs/auth.md, "Endpoints"). */
  user?: { backboneUser: string; workstation: string };
  /** The key the token is bound to (`cnf`: docs/auth.md, "DPoP at the token endpoint" and "Mutual TLS"): a DPoP key's thumbprint or the TLS client certificate's. */
  confirmation?: { jkt?: string; x5tS256?: string };
}

export interface IssuedToken {
  jwt: string;
  issuedAt: number;
  expiresAt: number;
}

export async function signAccessToken(
  realm: Realm,
  issuer: string,
  key: KeyEntry,
  subject: TokenSubject,
  nowSeconds: number,
): Promise<IssuedToken> {
  if (!key.signingKey) throw new Error(`key ${key.kid} cannot sign`);
  const { client, scopes, user, confirmation } = subject;
  // A token is never issued before the realm's not-before nor its client's (docs/auth.md, "Realm
  // not-before", "Client revocation"), so it is never born revoked: at most a second ahead of now.
  const issuedAt = Math.max(nowSeconds, realm.not_before, client.tokensNotBefore);
  const expiresAt = issuedAt + realm.lifespan_seconds;
  const claims: Record<string, unknown> = {
    typ: 'Bearer',
    azp: client.clientId,
    client_id: client.clientId,
    scope: scopes.join(' '),
    preferred_username: `service-account-${client.clientId}`,
  };
  if (user) {
    claims.backbone_user = user.backboneUser;
    claims.workstation = user.workstation;
  }
  if (confirmation) {
    claims.cnf = { ...(confirmation.jkt === undefined ? {} : { jkt: confirmation.jkt }), ...(confirmation.x5tS256 === undefined ? {} : { 'x5t#S256': confirmation.x5tS256 }) };
  }
  const payload = {
    ...claims,
    iss: issuer,
    sub: client.serviceAccountId,
    aud: realm.audience,
    iat: issuedAt,
    exp: expiresAt,
    jti: randomUUID(),
  };
  const jwt = await signCompactJws(key.alg, key.signingKey, { alg: key.alg, kid: key.kid, typ: 'JWT' }, payload);
  return { jwt, issuedAt, expiresAt };
}
