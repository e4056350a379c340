/**
 * The auth service's routes as the API docs page shows them (tag "Auth service"): form fields,
 * answers and OAuth errors. Documentation only: the token endpoint reads its form itself
 * (form-body.ts) so that every malformed request gets an OAuth error, so these schemas neither
 * validate requests nor shape responses (see `documentationOnly` in routes.ts).
 */
import { userParameterCharsMax } from './token-endpoint.js';
import { formValueCharsMax } from './form-body.js';
import { operationScopes } from '../operations/registry.js';

const tags = ['Auth service'];
const formMediaType = 'application/x-www-form-urlencoded';

/** The demo client of demo/sandbox.json: the examples succeed on the demo data (in a sandbox: docs/collections.md). */
const demoClient = { client_id: 'treasury-app', client_secret: 'treasury-app-secret-change-me-0123456789abcdef' };

/** The secret the examples show; a server outside sandbox mode serves a placeholder instead (src/docs-page/example-secret.ts). */
export const exampleClientSecret = demoClient.client_secret;

const realmParams = {
  type: 'object',
  properties: { realm: { type: 'string', description: 'The realm (the demo data\'s is "sandbox")', examples: ['sandbox'] } },
  required: ['realm'],
};

const oauthError = (description: string, errors: string[]) => ({
  description,
  type: 'object',
  properties: {
    error: { type: 'string', enum: errors, description: 'OAuth error code (RFC 6749 §5.2)' },
    error_description: { type: 'string', description: 'What was wrong, for a person' },
  },
  required: ['error'],
});

const clientAuthFields = {
  client_id: {
    type: 'string',
    maxLength: formValueCharsMax,
    description: 'client_secret_post: the client. With HTTP Basic authentication (client_secret_basic) it may be omitted, or must equal the header\'s client',
  },
  client_secret: {
    type: 'string',
    format: 'password',
    maxLength: formValueCharsMax,
    description: 'client_secret_post: the client\'s secret. Never both in the form and in an Authorization: Basic header',
  },
};

const clientAuthErrors = {
  401: oauthError('invalid_client: unknown client, wrong secret or disabled client (the same answer for each; WWW-Authenticate: Basic with Basic credentials)', ['invalid_client']),
  404: oauthError('The realm does not exist', ['not_found']),
  413: oauthError('The body exceeds 16 KiB', ['invalid_request']),
  429: oauthError('Too many failed client authentications for this client and address: wait Retry-After seconds', ['temporarily_unavailable']),
};

export const tokenRouteSchema = {
  summary: 'Obtain an access token (OAuth 2.0 client credentials)',
  description: [
    'RFC 6749 §4.4. The client authenticates with HTTP Basic (`Authorization: Basic base64(client_id:client_secret)`, each form-urlencoded first as RFC 6749 §2.3.1 says) or with `client_id` and `client_secret` in the form, not both. Each parameter at most once.',
    '',
    'The token is a JWT signed by the realm\'s key (see the JWKS), valid for the realm\'s lifespan (300 s in the demo): fetch a new one shortly before it expires. `username` and `workstation` name the person and the terminal behind a call (docs/auth.md, "Endpoints"); without them the client\'s technical user and default workstation are used.',
    '',
    'The example is the demo client `treasury-app` of demo/sandbox.json.',
  ].join('\n'),
  operationId: 'requestToken',
  tags,
  consumes: [formMediaType],
  params: realmParams,
  body: {
    type: 'object',
    properties: {
      grant_type: { type: 'string', enum: ['client_credentials'], description: 'Only client_credentials is supported' },
      ...clientAuthFields,
      scope: {
        type: 'string',
        maxLength: formValueCharsMax,
        description: `Space-separated scopes, a subset of the client's (RFC 6749 §3.3); absent or empty: every scope of the client. Scopes: ${Object.keys(operationScopes).join(', ')}`,
      },
      username: {
        type: 'string',
        maxLength: userParameterCharsMax,
        description: 'The backbone user the calls act for (an Active user of the core\'s directory); default: the client\'s technical user',
      },
      workstation: {
        type: 'string',
        maxLength: userParameterCharsMax,
        description: 'The user\'s terminal (an Active workstation); required with a user when the client has no default workstation',
      },
    },
    required: ['grant_type'],
    examples: [{ grant_type: 'client_credentials', ...demoClient, scope: Object.keys(operationScopes).join(' ') }],
  },
  response: {
    200: {
      description: 'The access token (Cache-Control: no-store)',
      type: 'object',
      properties: {
        access_token: { type: 'string', description: 'The JWT to send as Authorization: Bearer' },
        expires_in: { type: 'integer', description: 'Seconds until it expires' },
        refresh_expires_in: { type: 'integer', enum: [0], description: 'No refresh token is issued' },
        token_type: { type: 'string', enum: ['Bearer'] },
        'not-before-policy': { type: 'integer', description: 'The realm\'s not-before (epoch seconds): tokens issued earlier are refused' },
        scope: { type: 'string', description: 'The scopes granted, space-separated' },
      },
      required: ['access_token', 'expires_in', 'token_type', 'scope'],
    },
    400: oauthError('A malformed request (not form-urlencoded, a parameter twice or missing, control characters), or refused by the rules', [
      'invalid_request',
      'unsupported_grant_type',
      'unauthorized_client',
      'invalid_scope',
    ]),
    ...clientAuthErrors,
  },
};

export const introspectionRouteSchema = {
  summary: 'Introspect a token (RFC 7662)',
  description:
    'For a resource server: is this token active, and its claims. Client-authenticated like the token endpoint. An unknown, expired, revoked or foreign token answers `{"active": false}` and nothing more. The example authenticates the demo client and asks about a token that is not one (answer: inactive); paste a real access token to see its claims.',
  operationId: 'introspectToken',
  tags,
  consumes: [formMediaType],
  params: realmParams,
  body: {
    type: 'object',
    properties: {
      token: { type: 'string', maxLength: formValueCharsMax, description: 'The access token to examine' },
      token_type_hint: { type: 'string', description: 'Ignored: only access tokens exist' },
      ...clientAuthFields,
    },
    required: ['token'],
    examples: [{ token: 'paste-an-access-token-here', ...demoClient }],
  },
  response: {
    200: {
      description: 'active: false, or active: true with the token\'s claims (iss, sub, aud, exp, iat, azp, scope, backbone_user, workstation, ...)',
      type: 'object',
      properties: { active: { type: 'boolean' }, token_type: { type: 'string', enum: ['Bearer'] } },
      required: ['active'],
      additionalProperties: true,
    },
    400: oauthError('A malformed request, or no token parameter', ['invalid_request']),
    ...clientAuthErrors,
  },
};

export const jwksRouteSchema = {
  summary: 'The realm\'s public signing keys (JWKS, RFC 7517)',
  description: 'The keys that verify the realm\'s tokens: the active one and recently retired ones (rotation). Cache them and fetch again on an unknown `kid`.',
  operationId: 'realmKeys',
  tags,
  params: realmParams,
  response: {
    200: {
      description: 'The JSON Web Key Set',
      type: 'object',
      properties: { keys: { type: 'array', items: { type: 'object', additionalProperties: true, description: 'A public JWK with kid, alg and use: sig' } } },
      required: ['keys'],
    },
    404: oauthError('The realm does not exist', ['not_found']),
  },
};

export const discoveryRouteSchema = {
  summary: 'The realm\'s OpenID discovery document',
  description: 'OpenID Connect Discovery 1.0 / RFC 8414 metadata: the issuer, the token, JWKS and introspection endpoints, the supported grant and client authentication methods.',
  operationId: 'realmDiscovery',
  tags,
  params: realmParams,
  response: {
    200: {
      description: 'The provider metadata',
      type: 'object',
      properties: {
        issuer: { type: 'string', description: 'The tokens\' iss claim' },
        token_endpoint: { type: 'string' },
        jwks_uri: { type: 'string' },
        introspection_endpoint: { type: 'string' },
      },
      additionalProperties: true,
    },
    404: oauthError('The realm does not exist', ['not_found']),
  },
};
