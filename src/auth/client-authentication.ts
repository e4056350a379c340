/**
 * Client authentication at the token and introspection endpoints: `client_secret_post` (form
 * fields) or `client_secret_basic` (RFC 6749 §2.3.1), never both at once.
 */
import type { Client } from '../store/clients.js';
import type { AuthContext } from './auth-context.js';
import { verifyClientSecret } from './client-secret.js';
import { formValue, type FormParameters } from './form-body.js';
import { OAuthError, invalidRequest } from './oauth-error.js';

export type ClientAuthMethod = 'client_secret_basic' | 'client_secret_post';

interface PresentedCredentials {
  method: ClientAuthMethod;
  clientId: string | undefined;
  secret: string | undefined;
}

/** Same answer for every cause, as Keycloak and oidc-provider do: the cause goes to the log. */
const invalidClientDescription = 'Invalid client or Invalid client credentials';

export function presentedCredentials(realm: string, authorization: string | undefined, form: FormParameters): PresentedCredentials {
  const basic = parseBasic(authorization);
  const formId = formValue(form, 'client_id');
  const formSecret = form.get('client_secret');
  if (basic === undefined) return { method: 'client_secret_post', clientId: formId, secret: formSecret };
  if (formSecret !== undefined) {
    throw invalidRequest('Client credentials were sent both in the Authorization header and in the form: use one method');
  }
  if (basic === null) throw failed('client_secret_basic', 'malformed Basic credentials', realm);
  if (formId !== undefined && formId !== basic.clientId) {
    throw invalidRequest('client_id in the form differs from the client of the Authorization header');
  }
  return { method: 'client_secret_basic', clientId: basic.clientId, secret: basic.secret };
}

/**
 * Client authentication of a token or introspection request, under the failed-authentication
 * limit of its realm, presented client id and source address (failure-limit.ts).
 */
export function authenticateRequestClient(
  ctx: AuthContext,
  realm: string,
  request: { authorization: string | undefined; sourceAddress: string },
  form: FormParameters,
): Promise<Client> {
  const credentials = presentedCredentials(realm, request.authorization, form);
  const attempt = { realm, clientId: credentials.clientId ?? '', sourceAddress: request.sourceAddress };
  return ctx.authFailures.guard(attempt, () => authenticateClient((id, fresh) => ctx.snapshot.client(realm, id, fresh), realm, ctx.secretHashKey, credentials));
}

export async function authenticateClient(
  /** The realm's client of that id: from the auth snapshot, or `fresh` from the store. */
  clientOf: (clientId: string, fresh: boolean) => Promise<Client | undefined>,
  realm: string,
  hashKey: Buffer,
  credentials: PresentedCredentials,
): Promise<Client> {
  const { method, clientId, secret } = credentials;
  if (clientId === undefined) throw failed(method, 'no client_id', realm);
  // A snapshot that would refuse is read again: a client just created, enabled or given a new
  // secret is accepted at once. The HMAC runs even for an unknown client so that timing does not
  // tell clients apart.
  const snapshot = await clientOf(clientId, false);
  const accepted = verifyClientSecret(hashKey, secret ?? '', snapshot?.secretHash) && snapshot?.enabled === true && secret !== undefined;
  const client = accepted ? snapshot : await clientOf(clientId, true);
  const secretMatches = accepted || verifyClientSecret(hashKey, secret ?? '', client?.secretHash);
  if (!client) throw failed(method, `unknown client ${JSON.stringify(clientId)}`, realm);
  if (secret === undefined) throw failed(method, `client ${clientId} sent no secret`, realm);
  if (!secretMatches) throw failed(method, `wrong secret for client ${clientId}`, realm);
  if (!client.enabled) throw failed(method, `client ${clientId} is disabled`, realm);
  return client;
}

function failed(method: ClientAuthMethod, logDetail: string, realm?: string): OAuthError {
  const headers: Record<string, string> = method === 'client_secret_basic' ? { 'WWW-Authenticate': `Basic realm="${realm ?? ''}"` } : {};
  return new OAuthError(401, 'invalid_client', invalidClientDescription, headers, logDetail);
}

/** undefined: no Basic header; null: a Basic header that cannot be decoded. */
function parseBasic(authorization: string | undefined): { clientId: string; secret: string } | null | undefined {
  if (authorization === undefined) return undefined;
  const match = /^Basic\s+([A-Za-z0-9+/=._~-]*)\s*$/i.exec(authorization);
  if (!match) return /^Basic\b/i.test(authorization) ? null : undefined;
  const decoded = Buffer.from(match[1] ?? '', 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 1) return null;
  try {
    return { clientId: formDecode(decoded.slice(0, colon)), secret: formDecode(decoded.slice(colon + 1)) };
  } catch {
    return null;
  }
}

/** RFC 6749 §2.3.1: the id and secret are form-urlencoded before Base64. */
function formDecode(value: string): string {
  return decodeURIComponent(value.replace(/\+/g, ' '));
}
