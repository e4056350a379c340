/**
 * Client authentication at the token and introspection endpoints, one method per request and per
 * client (docs/auth.md, "Endpoints", "private_key_jwt" and "Mutual TLS"): a secret
 * (`client_secret_post` in the form or `client_secret_basic` in the Authorization header), a client
 * assertion (`private_key_jwt`), or the TLS client certificate (`tls_client_auth`). The method
 * presented must be the client's own: a `private_key_jwt` client sending a secret is refused like a
 * wrong secret.
 */
import type { Client } from '../store/clients.js';
import type { Realm } from '../store/realms.js';
import type { AuthContext } from './auth-context.js';
import { AssertionRejected, clientAssertionType } from './client-assertion.js';
import type { RealmProfile } from './client-metadata.js';
import { usesSecret } from '../core/client-registration.js';
import { verifyClientSecret } from './client-secret.js';
import { formValue, type FormParameters } from './form-body.js';
import { OAuthError, invalidRequest } from './oauth-error.js';
import type { ReplayMark, ReplayRefusal } from './replay-record.js';
import type { ClientCertificate } from './client-certificate.js';
import { sameDistinguishedName } from './distinguished-name.js';

/** How the request presents its client. */
export type PresentedMethod = 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt' | 'tls_client_auth';

type PresentedCredentials =
  | { method: 'client_secret_basic' | 'client_secret_post'; clientId: string | undefined; secret: string | undefined }
  | { method: 'private_key_jwt'; clientId: string | undefined; assertion: string }
  | { method: 'tls_client_auth'; clientId: string | undefined; certificate: ClientCertificate };

/** What an endpoint hands over of its request. */
export interface ClientRequest {
  authorization: string | undefined;
  sourceAddress: string;
  /** The verified TLS client certificate of the connection (or of the trusted proxy's header). */
  clientCertificate?: ClientCertificate | undefined;
}

/** Same answer for every cause, as Keycloak and oidc-provider do: the cause goes to the log. */
const invalidClientDescription = 'Invalid client or Invalid client credentials';

export function presentedCredentials(realm: string, request: ClientRequest, form: FormParameters): PresentedCredentials {
  const basic = parseBasic(request.authorization);
  const formId = formValue(form, 'client_id');
  const formSecret = form.get('client_secret');
  const assertionType = form.get('client_assertion_type');
  const assertion = form.get('client_assertion');
  if (assertionType !== undefined || assertion !== undefined) {
    // A secret beside the assertion is a second method: refused as the client's failure
    // (docs/auth.md, "private_key_jwt").
    if (basic !== undefined || formSecret !== undefined) throw failed('private_key_jwt', 'a client assertion and a secret in one request (one method per client)', realm);
    if (assertionType !== clientAssertionType) throw failed('private_key_jwt', `client_assertion_type must be ${clientAssertionType}`, realm);
    if (assertion === undefined || assertion === '') throw failed('private_key_jwt', 'client_assertion_type without a client_assertion', realm);
    return { method: 'private_key_jwt', clientId: formId ?? assertionIssuer(assertion), assertion };
  }
  if (basic === undefined) {
    if (formSecret === undefined && request.clientCertificate !== undefined) return { method: 'tls_client_auth', clientId: formId, certificate: request.clientCertificate };
    return { method: 'client_secret_post', clientId: formId, secret: formSecret };
  }
  if (formSecret !== undefined) {
    throw invalidRequest('Client credentials were sent both in the Authorization header and in the form: use one method');
  }
  if (basic === null) throw failed('client_secret_basic', 'malformed Basic credentials', realm);
  if (formId !== undefined && formId !== basic.clientId) {
    throw invalidRequest('client_id in the form differs from the client of the Authorization header');
  }
  return { method: 'client_secret_basic', clientId: basic.clientId, secret: basic.secret };
}

/** Another use the request makes (its DPoP proof), recorded with its assertion's, and the refusal it gets when the record refuses it. */
export interface CompanionUse {
  mark: ReplayMark;
  refusal: (reason: ReplayRefusal) => Error;
}

/**
 * Client authentication of a token or introspection request, under the failed-authentication
 * limit of its realm, presented client id and source address (failure-limit.ts). `settle` runs
 * once the credentials are verified, before an assertion's use is recorded: the endpoint's own
 * checks of the client (its grant, scopes, token binding), so that a request they refuse leaves
 * the assertion's `jti` unused. It answers the request's other uses (its DPoP proof's), recorded
 * with the assertion's in one write, all or none (replay-record.ts): the assertion's refusal
 * first, then theirs.
 */
export function authenticateRequestClient(
  ctx: AuthContext,
  realm: Realm,
  endpointUrl: string,
  request: ClientRequest,
  form: FormParameters,
  settle: (client: Client) => readonly CompanionUse[] | void = () => {},
): Promise<Client> {
  const credentials = presentedCredentials(realm.name, request, form);
  const attempt = { realm: realm.name, clientId: credentials.clientId ?? '', sourceAddress: request.sourceAddress };
  return ctx.authFailures.guard(attempt, async () => {
    const { client, replay } = await authenticateClient(ctx, realm, endpointUrl, credentials);
    const companions = settle(client) ?? [];
    const marks = replay === undefined ? companions.map((use) => use.mark) : [replay, ...companions.map((use) => use.mark)];
    const verdict = await ctx.replay.record(marks);
    if (!verdict.recorded) {
      const companion = companions[replay === undefined ? verdict.index : verdict.index - 1];
      if (companion !== undefined) throw companion.refusal(verdict.reason);
      const cause = verdict.reason === 'used' ? 'its jti was used before' : 'it was made before the replay record\'s horizon (its database restarted after a crash, or a new boot of its machine)';
      throw failed(credentials.method, `client ${client.clientId} replayed a client assertion (${cause})`, realm.name);
    }
    return client;
  });
}

async function authenticateClient(ctx: AuthContext, realm: Realm, endpointUrl: string, credentials: PresentedCredentials): Promise<{ client: Client; replay?: ReplayMark }> {
  const { method, clientId } = credentials;
  if (clientId === undefined) throw failed(method, 'no client_id', realm.name);
  const clientOf = (fresh: boolean) => ctx.snapshot.client(realm.name, clientId, fresh);
  if (credentials.method === 'client_secret_basic' || credentials.method === 'client_secret_post') {
    return { client: await authenticateBySecret(clientOf, ctx.secretHashKey, realm.name, credentials.method, clientId, credentials.secret) };
  }
  // No secret to compare: the snapshot's client first; a refusal is checked again against the
  // client as stored (a client just created, enabled or given new keys is accepted at once).
  const withKey = credentials as Exclude<PresentedCredentials, { method: 'client_secret_basic' | 'client_secret_post' }>;
  const snapshot = await clientOf(false);
  try {
    if (snapshot === undefined) throw failed(method, `unknown client ${JSON.stringify(clientId)}`, realm.name);
    return await authenticateWithKey(ctx, realm, endpointUrl, withKey, snapshot);
  } catch (error) {
    if (!(error instanceof OAuthError)) throw error;
    const stored = await clientOf(true);
    if (stored === undefined || JSON.stringify(stored) === JSON.stringify(snapshot)) throw error;
    return authenticateWithKey(ctx, realm, endpointUrl, withKey, stored);
  }
}

/** A client assertion or a certificate, against `client` as given. */
async function authenticateWithKey(
  ctx: AuthContext,
  realm: Realm,
  endpointUrl: string,
  credentials: Exclude<PresentedCredentials, { method: 'client_secret_basic' | 'client_secret_post' }>,
  client: Client,
): Promise<{ client: Client; replay?: ReplayMark }> {
  const { method } = credentials;
  const clientId = client.clientId;
  if (client.authentication.method !== method) throw failed(method, `client ${clientId} authenticates with ${client.authentication.method}, not ${method}`, realm.name);
  if (!client.enabled) throw failed(method, `client ${clientId} is disabled`, realm.name);
  if (credentials.method === 'tls_client_auth') {
    const expected = client.authentication.tlsSubjectDn ?? '';
    if (!sameDistinguishedName(credentials.certificate.subjectDn, expected)) {
      throw failed(method, `client ${clientId}'s certificate subject ${JSON.stringify(credentials.certificate.subjectDn)} is not ${JSON.stringify(expected)}`, realm.name);
    }
    return { client };
  }
  const jwks = client.authentication.jwks;
  if (jwks === null) throw failed(method, `client ${clientId} has no registered keys`, realm.name);
  try {
    const { replay } = await ctx.clientAssertions.verify(credentials.assertion, {
      clientId,
      jwks: jwks as never,
      profile: realm.profile as RealmProfile | null,
      issuer: ctx.issuer(realm.name),
      endpointUrls: [endpointUrl, ctx.issuer(realm.name) + tokenPath],
    });
    return { client, replay };
  } catch (error) {
    if (error instanceof AssertionRejected) throw failed(method, `client ${clientId}: ${error.message}`, realm.name);
    throw error;
  }
}

const tokenPath = '/protocol/openid-connect/token';

/** A secret: the HMAC runs even for an unknown client, so that timing does not tell clients apart. */
async function authenticateBySecret(
  clientOf: (fresh: boolean) => Promise<Client | undefined>,
  hashKey: Buffer,
  realm: string,
  method: 'client_secret_basic' | 'client_secret_post',
  clientId: string,
  secret: string | undefined,
): Promise<Client> {
  // A snapshot that would refuse is read again: a client just created, enabled or given a new
  // secret is accepted at once.
  const snapshot = await clientOf(false);
  const accepted = verifyClientSecret(hashKey, secret ?? '', snapshot?.secretHash) && snapshot?.enabled === true && secret !== undefined && usesSecret(snapshot.authentication.method);
  const client = accepted ? snapshot : await clientOf(true);
  const secretMatches = accepted || verifyClientSecret(hashKey, secret ?? '', client?.secretHash);
  if (!client) throw failed(method, `unknown client ${JSON.stringify(clientId)}`, realm);
  if (!usesSecret(client.authentication.method)) throw failed(method, `client ${clientId} authenticates with ${client.authentication.method}, not a secret`, realm);
  if (secret === undefined) throw failed(method, `client ${clientId} sent no secret`, realm);
  if (!secretMatches) throw failed(method, `wrong secret for client ${clientId}`, realm);
  if (!client.enabled) throw failed(method, `client ${clientId} is disabled`, realm);
  return client;
}

function failed(method: PresentedMethod, logDetail: string, realm?: string): OAuthError {
  const headers: Record<string, string> = method === 'client_secret_basic' ? { 'WWW-Authenticate': `Basic realm="${realm ?? ''}"` } : {};
  return new OAuthError(401, 'invalid_client', invalidClientDescription, headers, logDetail);
}

/** The unverified `iss` of an assertion sent without client_id: whose failure it counts as. */
function assertionIssuer(assertion: string): string | undefined {
  const payload = assertion.split('.')[1];
  if (payload === undefined || payload.length > 8_192) return undefined;
  try {
    const iss = (JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { iss?: unknown }).iss;
    return typeof iss === 'string' ? iss : undefined;
  } catch {
    return undefined;
  }
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
